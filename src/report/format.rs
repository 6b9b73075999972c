//! Numbers for people: times scaled to ns/µs/ms/s with three significant digits, and tables
//! aligned on display width (the µ sign is one column, two bytes).

/// `1.23 ns`, `45.6 ns`, `789 ns`, `1.23 µs`, `4.56 ms`, `7.89 s`.
pub fn time_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "–".to_string();
    }
    let (value, unit) = match ns.abs() {
        x if x < 1e3 => (ns, "ns"),
        x if x < 1e6 => (ns / 1e3, "µs"),
        x if x < 1e9 => (ns / 1e6, "ms"),
        _ => (ns / 1e9, "s"),
    };
    format!("{} {unit}", sig3(value))
}

/// A time's rerun interval as a table cell: its range; `unstable: a / b / c` (the processes'
/// medians) when they differ by more than 2× (`ResultFigures::unstable`), with more than three
/// processes `unstable: lo … hi (n processes)` (the per-process table lists them); else `–`.
pub fn rerun_cell(ci: Option<(f64, f64)>, unstable: Option<&[f64]>, median: f64) -> String {
    match (unstable, ci) {
        (Some(medians), _) if medians.len() > 3 => {
            let lo = medians.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = medians.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            format!(
                "unstable: {} … {} ({} processes)",
                time_ns(lo),
                time_ns(hi),
                medians.len()
            )
        }
        (Some(medians), _) => format!(
            "unstable: {}",
            medians
                .iter()
                .map(|&m| time_ns(m))
                .collect::<Vec<_>>()
                .join(" / ")
        ),
        (None, Some((lo, hi))) => time_range_ns(lo, hi, median),
        (None, None) => "–".to_string(),
    }
}

/// A range of times in the unit that suits `reference`, with one digit more than `time_ns`
/// gives it, so a narrow confidence interval stays readable: `1.412 – 1.416 µs`.
pub fn time_range_ns(lo: f64, hi: f64, reference: f64) -> String {
    if !(lo.is_finite() && hi.is_finite() && reference.is_finite()) {
        return "–".to_string();
    }
    let (scale, unit) = match reference.abs() {
        x if x < 1e3 => (1.0, "ns"),
        x if x < 1e6 => (1e3, "µs"),
        x if x < 1e9 => (1e6, "ms"),
        _ => (1e9, "s"),
    };
    let decimals = match (reference / scale).abs() {
        x if x >= 100.0 => 1,
        x if x >= 10.0 => 2,
        _ => 3,
    };
    format!(
        "{:.*} – {:.*} {unit}",
        decimals,
        lo / scale,
        decimals,
        hi / scale
    )
}

/// Wrap `text` at word boundaries to `width` columns, the first line after `first`, the
/// others after `rest`.
pub fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut out = String::from(first);
    let mut column = first.chars().count();
    let mut line_start = true;
    for word in text.split_whitespace() {
        let len = word.chars().count();
        if !line_start && column + 1 + len > width {
            out.push('\n');
            out.push_str(rest);
            column = rest.chars().count();
            line_start = true;
        }
        if !line_start {
            out.push(' ');
            column += 1;
        }
        out.push_str(word);
        column += len;
        line_start = false;
    }
    out
}

/// Three significant digits, no exponent, no trailing zeros lost: `1.23`, `12.3`, `123`.
pub fn sig3(x: f64) -> String {
    let a = x.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else if a >= 0.01 {
        format!("{x:.3}")
    } else {
        format!("{x:.2e}")
    }
}

/// A multiple: `1.0×`, `15×`, `340×`.
pub fn times(x: f64) -> String {
    if !x.is_finite() {
        "–".to_string()
    } else if x.abs() < 10.0 {
        format!("{x:.1}×")
    } else {
        format!("{x:.0}×")
    }
}

/// A rate per operation, compact: `0`, `1.00`, `0.0012`, `2.3e-5`.
pub fn per_op(x: f64) -> String {
    if x == 0.0 {
        "0".to_string()
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 0.01 {
        format!("{x:.2}")
    } else {
        format!("{x:.1e}")
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A plain text table: a header row, aligned columns, two spaces between them.
pub struct Table {
    aligns: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[(&str, Align)]) -> Table {
        Table {
            aligns: header.iter().map(|(_, a)| *a).collect(),
            rows: vec![header.iter().map(|(h, _)| h.to_string()).collect()],
        }
    }

    /// A row; a cell's control and bidi characters, newline and tab are escaped
    /// (`report::text::one_line`), so a stored string can neither drive the terminal nor
    /// break the table, and the columns are as wide as what is printed.
    pub fn row(&mut self, cells: Vec<String>) {
        let cells = cells
            .into_iter()
            .map(|c| match crate::report::text::one_line(&c) {
                std::borrow::Cow::Borrowed(_) => c,
                std::borrow::Cow::Owned(escaped) => escaped,
            })
            .collect();
        self.rows.push(cells);
    }

    pub fn render(&self, indent: usize) -> String {
        let cols = self.aligns.len();
        let width = |s: &str| s.chars().count();
        let widths: Vec<usize> = (0..cols)
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r.get(c).map_or(0, |s| width(s)))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for row in &self.rows {
            let mut line = " ".repeat(indent);
            for (c, (&width, &align)) in widths.iter().zip(&self.aligns).enumerate() {
                let cell = row.get(c).map_or("", String::as_str);
                let pad = width - char_width(cell);
                if c > 0 {
                    line.push_str("  ");
                }
                match align {
                    Align::Left => {
                        line.push_str(cell);
                        line.push_str(&" ".repeat(pad));
                    }
                    Align::Right => {
                        line.push_str(&" ".repeat(pad));
                        line.push_str(cell);
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Display width in columns: one per character (no wide characters are printed).
fn char_width(s: &str) -> usize {
    s.chars().count()
}

/// `YYYY-MM-DD HH:MM:SS` from Unix seconds (civil-from-days, Howard Hinnant's algorithm).
pub fn utc(unix: f64) -> String {
    if !unix.is_finite() {
        return "–".into();
    }
    let secs = unix.floor() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Stolen time as people read it: "none", "30 ms", "1.2 s".
pub fn steal_text(ns: f64) -> String {
    if ns <= 0.0 {
        "none".into()
    } else {
        time_ns(ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unstable_cell_lists_three_medians_and_spans_more() {
        assert_eq!(
            rerun_cell(None, Some(&[100.0, 250.0, 90.0]), 100.0),
            "unstable: 100 ns / 250 ns / 90.0 ns"
        );
        let six = [8580.0, 93_400.0, 157_000.0, 263_000.0, 259_000.0, 329_000.0];
        assert_eq!(
            rerun_cell(None, Some(&six), 97_800.0),
            "unstable: 8.58 µs … 329 µs (6 processes)"
        );
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0.0), "1970-01-01 00:00:00");
        assert_eq!(utc(951_782_400.0), "2000-02-29 00:00:00");
        assert_eq!(utc(1_795_000_000.5), "2026-11-18 11:06:40");
    }

    #[test]
    fn times_scale() {
        assert_eq!(time_ns(1.234), "1.23 ns");
        assert_eq!(time_ns(45.67), "45.7 ns");
        assert_eq!(time_ns(789.1), "789 ns");
        assert_eq!(time_ns(1234.0), "1.23 µs");
        assert_eq!(time_ns(4.56e6), "4.56 ms");
        assert_eq!(time_ns(7.891e9), "7.89 s");
        assert_eq!(times(1.0), "1.0×");
        assert_eq!(times(340.4), "340×");
    }

    #[test]
    fn ranges_and_wrapping() {
        assert_eq!(time_range_ns(1412.3, 1416.0, 1414.0), "1.412 – 1.416 µs");
        assert_eq!(time_range_ns(153.96, 154.21, 154.0), "154.0 – 154.2 ns");
        assert_eq!(time_range_ns(1.0951, 1.1022, 1.1), "1.095 – 1.102 ns");
        let w = wrap("aaa bbb ccc ddd", 9, "  ", "    ");
        assert_eq!(w, "  aaa bbb\n    ccc\n    ddd");
        assert!(wrap("", 10, "x", "y") == "x");
    }

    #[test]
    fn table_aligns_on_characters() {
        let mut t = Table::new(&[("name", Align::Left), ("time", Align::Right)]);
        t.row(vec!["a".into(), "1.23 µs".into()]);
        t.row(vec!["long name".into(), "5 ns".into()]);
        let text = t.render(0);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1].chars().count(), lines[2].chars().count());
        assert!(lines[2].ends_with("   5 ns"));
    }
}
