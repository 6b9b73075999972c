//! The fleet view: one configuration's figure across many machines, grouped by kernel, host,
//! operating system or CPU, and the machines that fall outside the fleet's noise band.
//!
//! A machine's figure is the median of its runs' figures (each run's is what `show` prints:
//! the pooled median of its processes). The fleet's centre is the median over machines, and
//! its band the wider of `MIN_BAND` and three robust standard deviations (1.4826 × MAD) of the
//! machines' figures relative to the centre: a machine outside it measured something the
//! rest of the fleet does not, which is worth a look (a different kernel, a noisy neighbour,
//! a throttled CPU). With fewer than `MIN_MACHINES` machines nothing is flagged: there is no
//! fleet to stand out from.

use std::collections::BTreeMap;

use super::stats::median;

/// A band narrower than this (±5%) would flag the ordinary spread between identical machines
/// measured on different days.
pub const MIN_BAND: f64 = 0.05;

/// Machines a configuration needs before any is flagged.
pub const MIN_MACHINES: usize = 3;

/// One run's figure of one configuration, with what it is grouped by.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub config: String,
    pub name: String,
    pub unit: String,
    /// The machine (hashed id); its runs are one machine's.
    pub machine: String,
    /// How the machine is shown (its host name, else its id).
    pub host: String,
    /// The value of the `--by` key (kernel release, host, OS, CPU model).
    pub group: String,
    pub run_id: i64,
    pub value: f64,
}

/// One group's machines in one configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub key: String,
    pub runs: usize,
    pub machines: usize,
    /// Over the group's machine figures.
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// The group's median against the fleet's centre.
    pub ratio: f64,
    /// Each machine's figure, ascending.
    pub values: Vec<f64>,
}

/// A machine whose figure falls outside the fleet's band.
#[derive(Debug, Clone, PartialEq)]
pub struct Outlier {
    pub machine: String,
    pub host: String,
    pub group: String,
    pub runs: usize,
    pub value: f64,
    /// Its figure against the fleet's centre.
    pub ratio: f64,
}

/// One configuration across the fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub config: String,
    pub name: String,
    pub unit: String,
    pub runs: usize,
    pub machines: usize,
    /// The median over machines.
    pub center: f64,
    /// Half-width of the band, relative to `center`.
    pub band: f64,
    pub groups: Vec<Group>,
    pub outliers: Vec<Outlier>,
}

struct Machine<'a> {
    machine: &'a str,
    host: &'a str,
    group: &'a str,
    runs: usize,
    value: f64,
}

/// Every configuration the points hold, in the order of their `config` key.
pub fn view(points: &[Point]) -> Vec<Config> {
    let mut by_config: BTreeMap<&str, Vec<&Point>> = BTreeMap::new();
    for p in points.iter().filter(|p| p.value.is_finite()) {
        by_config.entry(&p.config).or_default().push(p);
    }
    by_config
        .into_values()
        .filter_map(|ps| config(&ps))
        .collect()
}

fn config(points: &[&Point]) -> Option<Config> {
    let first = points.first()?;
    let machines = machines(points);
    let values: Vec<f64> = machines.iter().map(|m| m.value).collect();
    let center = median(&values)?;
    let deviations: Vec<f64> = values.iter().map(|v| (v - center).abs()).collect();
    let mad = median(&deviations).unwrap_or(0.0);
    let band = if center > 0.0 {
        (3.0 * 1.4826 * mad / center).max(MIN_BAND)
    } else {
        MIN_BAND
    };
    let ratio = |v: f64| if center > 0.0 { v / center } else { f64::NAN };
    let outliers = if machines.len() >= MIN_MACHINES {
        machines
            .iter()
            .filter(|m| (ratio(m.value) - 1.0).abs() > band)
            .map(|m| Outlier {
                machine: m.machine.to_string(),
                host: m.host.to_string(),
                group: m.group.to_string(),
                runs: m.runs,
                value: m.value,
                ratio: ratio(m.value),
            })
            .collect()
    } else {
        Vec::new()
    };
    Some(Config {
        config: first.config.clone(),
        name: first.name.clone(),
        unit: first.unit.clone(),
        runs: points.len(),
        machines: machines.len(),
        center,
        band,
        groups: groups(&machines, &ratio),
        outliers,
    })
}

/// The machines of one configuration: a machine measured under two group keys (two kernels)
/// counts once in each, its figure the median of the runs under that key.
fn machines<'a>(points: &[&'a Point]) -> Vec<Machine<'a>> {
    let mut by: BTreeMap<(&str, &str), Vec<&Point>> = BTreeMap::new();
    for p in points {
        by.entry((p.machine.as_str(), p.group.as_str()))
            .or_default()
            .push(p);
    }
    by.into_iter()
        .filter_map(|((machine, group), ps)| {
            let values: Vec<f64> = ps.iter().map(|p| p.value).collect();
            Some(Machine {
                machine,
                host: &ps.first()?.host,
                group,
                runs: ps.len(),
                value: median(&values)?,
            })
        })
        .collect()
}

fn groups(machines: &[Machine<'_>], ratio: &dyn Fn(f64) -> f64) -> Vec<Group> {
    let mut by: BTreeMap<&str, Vec<&Machine<'_>>> = BTreeMap::new();
    for m in machines {
        by.entry(m.group).or_default().push(m);
    }
    by.into_iter()
        .filter_map(|(key, ms)| {
            let mut values: Vec<f64> = ms.iter().map(|m| m.value).collect();
            values.sort_by(f64::total_cmp);
            let median = median(&values)?;
            Some(Group {
                key: key.to_string(),
                runs: ms.iter().map(|m| m.runs).sum(),
                machines: ms.len(),
                median,
                min: values.iter().copied().fold(f64::INFINITY, f64::min),
                max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                ratio: ratio(median),
                values,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(machine: &str, group: &str, value: f64) -> Point {
        Point {
            config: "syscall.getppid".into(),
            name: "syscall.getppid".into(),
            unit: "ns/call".into(),
            machine: machine.into(),
            host: format!("host-{machine}"),
            group: group.into(),
            run_id: 1,
            value,
        }
    }

    #[test]
    fn the_machine_far_from_the_fleet_is_flagged_and_the_rest_are_not() {
        let mut points: Vec<Point> = (0..9)
            .map(|i| point(&format!("m{i}"), "6.1", 100.0 + f64::from(i)))
            .collect();
        points.push(point("slow", "6.8", 180.0));
        let v = view(&points);
        assert_eq!(v.len(), 1);
        let c = &v[0];
        assert_eq!((c.machines, c.runs), (10, 10));
        assert_eq!(c.outliers.len(), 1, "{c:?}");
        assert_eq!(c.outliers[0].host, "host-slow");
        assert!((c.outliers[0].ratio - 180.0 / c.center).abs() < 1e-12);
        assert_eq!(c.groups.len(), 2);
        assert_eq!(c.groups[1].key, "6.8");
        assert!(c.groups[1].ratio > 1.5);
    }

    #[test]
    fn a_machine_is_the_median_of_its_runs_and_few_machines_flag_nothing() {
        let points = vec![
            point("a", "k", 100.0),
            point("a", "k", 300.0),
            point("a", "k", 110.0),
            point("b", "k", 500.0),
        ];
        let c = &view(&points)[0];
        assert_eq!(c.machines, 2);
        assert_eq!(c.runs, 4);
        assert!(c.outliers.is_empty());
        assert_eq!(c.groups[0].min, 110.0);
    }

    #[test]
    fn identical_machines_keep_the_minimum_band() {
        let points: Vec<Point> = (0..5).map(|i| point(&format!("m{i}"), "k", 50.0)).collect();
        let c = &view(&points)[0];
        assert_eq!(c.band, MIN_BAND);
        assert!(c.outliers.is_empty());
        assert!(view(&[point("x", "k", f64::NAN)]).is_empty());
    }
}
