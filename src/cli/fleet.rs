//! `oslab push`, `run --push` and the fleet view `report --store URL --by KEY`.

use super::*;
use crate::store::fleet::{ConfigFigure, Fleet, FleetError, FleetFigure, Pushed};

/// What one `push` did, for its summary line and its JSON.
#[derive(Default)]
struct Tally {
    pushed: Vec<serde_json::Value>,
    already: Vec<serde_json::Value>,
    failed: Vec<serde_json::Value>,
}

pub(super) fn push(
    db: Option<PathBuf>,
    runs: &[String],
    store: Option<String>,
    json: bool,
) -> Result<ExitCode> {
    let path = db_path(db)?;
    let mut local = Store::open_existing(&path)?;
    crate::platform::interrupt::install();
    let mut fleet = source::connect(store.as_deref())?;
    let ids = if runs.is_empty() {
        local.runs_not_pushed(fleet.store_id())?
    } else {
        // Named runs are looked up, not read: the pushing thread reads each once.
        let mut named = Source::Local {
            store: Store::open_existing(&path)?,
            path: path.clone(),
        };
        let ids = runs
            .iter()
            .map(|w| named.id_of(Some(w)))
            .collect::<Result<Vec<_>>>()?;
        // An id that names no run is refused before anything is pushed (its header only).
        for (&id, which) in ids.iter().zip(runs) {
            match local.load_run_header(id) {
                Ok(_) => {}
                Err(crate::store::StoreError::NoSuchRun { .. }) => {
                    let shown = path.display().to_string();
                    return Err(UserError::NoSuchRun(which.clone(), shown).into());
                }
                Err(e) => return Err(e.into()),
            }
        }
        ids
    };
    let tally = push_runs(&path, &mut local, &mut fleet, &ids)?;
    let summary = format!(
        "pushed {}, already there {}, failed {} ({})",
        tally.pushed.len(),
        tally.already.len(),
        tally.failed.len(),
        fleet.shown()
    );
    if json {
        let doc = serde_json::json!({
            "store": fleet.shown(),
            "pushed": tally.pushed,
            "already_there": tally.already,
            "failed": tally.failed,
        });
        write_stdout(&(serde_json::to_string_pretty(&doc)? + "\n"))?;
        crate::say!("{summary}");
    } else {
        write_stdout(&(summary + "\n"))?;
    }
    check_interrupt(|| "the runs pushed before it are in the store".to_string())?;
    Ok(if tally.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(6)
    })
}

/// Push `ids` in order, each in its own transaction. A lost connection fails the run it cut
/// and every one after it (each is named); Ctrl-C stops between two runs.
///
/// A second thread reads the next run from the local file and computes its figures (the
/// bootstrap intervals, most of a push's time on this side) while this one sends the
/// previous run, so the two sides work at once.
fn push_runs(
    path: &std::path::Path,
    local: &mut Store,
    fleet: &mut Fleet,
    ids: &[i64],
) -> Result<Tally> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut tally = Tally::default();
    let bar = (ids.len() > 1 && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(ids.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("pushing {bar:30} {pos}/{len} runs {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let lost_flag = AtomicBool::new(false);
    let (send, receive) = std::sync::mpsc::sync_channel::<Result<Prepared>>(1);
    let lost_ref = &lost_flag;
    std::thread::scope(|scope| -> Result<()> {
        // The sender moves to the producer, so the loop below ends when it has sent all; the
        // receiver is this closure's, so an early return stops the producer too.
        scope.spawn(move || prepare_runs(path, ids, lost_ref, &send));
        let receive = receive;
        let mut lost: Option<String> = None;
        for prepared in receive.iter() {
            let (id, run, figures) = prepared?;
            let entry = |extra: serde_json::Value| {
                let mut v = serde_json::json!({"run": id, "uuid": run.uuid});
                if let (Some(map), serde_json::Value::Object(more)) = (v.as_object_mut(), extra) {
                    map.extend(more);
                }
                v
            };
            if let Some(why) = &lost {
                tally.failed.push(entry(serde_json::json!({"error": why})));
                continue;
            }
            match fleet.push(&run, &figures) {
                Ok(Pushed::New(at)) => {
                    local.record_push(id, fleet.store_id(), runner::unix_now())?;
                    tally
                        .pushed
                        .push(entry(serde_json::json!({"store_id": at})));
                }
                Ok(Pushed::AlreadyThere(at)) => {
                    local.record_push(id, fleet.store_id(), runner::unix_now())?;
                    tally
                        .already
                        .push(entry(serde_json::json!({"store_id": at})));
                }
                Err(e) => {
                    crate::say!("oslab: run {id}: {e}");
                    if matches!(e, FleetError::Lost { .. } | FleetError::Unreachable { .. }) {
                        lost = Some(e.to_string());
                        lost_ref.store(true, Ordering::Relaxed);
                    }
                    tally
                        .failed
                        .push(entry(serde_json::json!({"error": e.to_string()})));
                }
            }
            if let Some(bar) = &bar {
                bar.inc(1);
            }
        }
        Ok(())
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(tally)
}

/// A run read back with its figures, ready to push.
type Prepared = (i64, Run, Vec<ConfigFigure>);

/// The producer side of [`push_runs`]: each run from the local file with its figures (none
/// once the store is lost: the run only fails), until Ctrl-C or the consumer is gone.
fn prepare_runs(
    path: &std::path::Path,
    ids: &[i64],
    lost: &std::sync::atomic::AtomicBool,
    send: &std::sync::mpsc::SyncSender<Result<Prepared>>,
) {
    let store = match Store::open_existing(path) {
        Ok(store) => store,
        Err(e) => {
            let _ = send.send(Err(e.into()));
            return;
        }
    };
    for &id in ids {
        if crate::platform::interrupt::requested().is_some() {
            return;
        }
        let prepared = store.load_run(id).map_err(anyhow::Error::from).map(|run| {
            let figures = if lost.load(std::sync::atomic::Ordering::Relaxed) {
                Vec::new()
            } else {
                config_figures(&run)
            };
            (id, run, figures)
        });
        let failed = prepared.is_err();
        if send.send(prepared).is_err() || failed {
            return;
        }
    }
}

/// `run --push`: the stored run goes to the fleet store; a failure leaves it local, says how
/// to send it later, and makes the exit code 6.
pub(super) fn push_measured(
    run_id: i64,
    path: &std::path::Path,
    store: Option<&str>,
) -> Option<ExitCode> {
    let outcome = (|| -> Result<Tally> {
        let mut local = Store::open_existing(path)?;
        let mut fleet = source::connect(store)?;
        let tally = push_runs(path, &mut local, &mut fleet, &[run_id])?;
        if tally.failed.is_empty() {
            crate::say!("pushed run {run_id} to {}", fleet.shown());
        }
        Ok(tally)
    })();
    match outcome {
        Ok(t) if t.failed.is_empty() => None,
        Ok(_) => Some(ExitCode::from(6)),
        Err(e) => {
            crate::say!(
                "oslab: {e}; the run stays in {} (`oslab push` sends it later)",
                path.display()
            );
            Some(ExitCode::from(6))
        }
    }
}

/// Each configuration's figure as `show` prints it (`report::pool`), for the fleet view.
pub(super) fn config_figures(run: &Run) -> Vec<ConfigFigure> {
    report::pool::pool(&run.results)
        .iter()
        .map(|p| {
            let r = &p.result;
            let f = p.figures();
            ConfigFigure {
                config: config_key(r),
                name: report::names::label(r),
                experiment: r.experiment.clone(),
                unit: r.unit.clone(),
                status: r.status.as_str().to_string(),
                processes: p.processes,
                median: f.stats.map(|s| s.median),
                low: f.ci.map(|c| c.0),
                high: f.ci.map(|c| c.1),
            }
        })
        .collect()
}

/// Experiment, parameters (sorted) and suite label: the same configuration on every machine.
fn config_key(r: &crate::model::ExperimentResult) -> String {
    let params: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut key = r.experiment.clone();
    if !params.is_empty() {
        key = format!("{key} {}", params.join(","));
    }
    if let Some(label) = &r.label {
        key = format!("{key} [{label}]");
    }
    key
}

/// The figures the fleet view groups: those of results that measured (`ok`, `suspect`), each
/// with its `--by` key ("unknown" where the run lacks it).
fn points(figures: &[FleetFigure], by: FleetKey) -> Vec<crate::analysis::fleet::Point> {
    let key = |f: &FleetFigure| match by {
        FleetKey::Kernel => f.kernel.clone(),
        FleetKey::Host => f.hostname.clone(),
        FleetKey::Os => Some(f.os.clone()),
        FleetKey::Cpu => f.cpu.clone(),
    };
    figures
        .iter()
        .filter(|f| f.status == "ok" || f.status == "suspect")
        .filter_map(|f| {
            Some(crate::analysis::fleet::Point {
                config: f.config.clone(),
                name: f.name.clone(),
                unit: f.unit.clone(),
                machine: f.machine.clone(),
                host: f.hostname.clone().unwrap_or_else(|| f.machine.clone()),
                group: key(f).unwrap_or_else(|| "unknown".into()),
                run_id: f.run_id,
                value: f.median?,
            })
        })
        .collect()
}

/// `report --store URL --by KEY`: the fleet view as HTML (or JSON).
pub(super) fn fleet_report(
    store: Option<String>,
    by: FleetKey,
    json: bool,
    output: &std::path::Path,
) -> Result<ExitCode> {
    let mut fleet = source::connect(store.as_deref())?;
    let figures = fleet.figures()?;
    let by_name = match by {
        FleetKey::Kernel => "kernel",
        FleetKey::Host => "host",
        FleetKey::Os => "os",
        FleetKey::Cpu => "cpu",
    };
    let configs = crate::analysis::fleet::view(&points(&figures, by));
    let runs: std::collections::BTreeSet<i64> = figures.iter().map(|f| f.run_id).collect();
    let machines: std::collections::BTreeSet<&str> =
        figures.iter().map(|f| f.machine.as_str()).collect();
    let page = report::fleet::Fleet {
        store: fleet.shown(),
        by: by_name,
        runs: runs.len(),
        machines: machines.len(),
        configs: &configs,
    };
    if json {
        let doc = report::fleet::document(&page);
        write_stdout(&(serde_json::to_string_pretty(&doc)? + "\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    write_file(output, &report::fleet::html(&page))?;
    let flagged: usize = configs.iter().map(|c| c.outliers.len()).sum();
    crate::say!(
        "wrote the fleet report of {} runs from {} machines by {by_name} to {} ({} configurations, {flagged} machine figures flagged)",
        runs.len(),
        machines.len(),
        output.display(),
        configs.len()
    );
    Ok(ExitCode::SUCCESS)
}
