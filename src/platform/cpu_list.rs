//! CPU lists as Linux writes them (`0-3,6`), the form oslab reads and prints on every system
//! (`--cpu`, the environment, the run heading).

/// Parse a CPU list as the kernel writes them: `3`, `0,2`, `0-3,6`.
pub fn parse_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim) {
        if let Some((a, b)) = part.split_once('-') {
            let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
            if a > b || b - a > 4096 {
                return None;
            }
            cpus.extend(a..=b);
        } else {
            cpus.push(part.parse().ok()?);
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    cpus.retain(|c| seen.insert(*c));
    (!cpus.is_empty()).then_some(cpus)
}

/// Render a CPU list compactly: `0-3,6`.
pub fn format_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lists() {
        assert_eq!(parse_list("3"), Some(vec![3]));
        assert_eq!(parse_list("0-2,5"), Some(vec![0, 1, 2, 5]));
        assert_eq!(parse_list("1,1"), Some(vec![1]));
        assert_eq!(parse_list("2-1"), None);
        assert_eq!(parse_list("x"), None);
        assert_eq!(parse_list(""), None);
        assert_eq!(format_list(&[0, 1, 2, 5]), "0-2,5");
    }

    proptest! {
        #[test]
        fn list_round_trip(cpus in proptest::collection::btree_set(0usize..512, 1..20)) {
            let v: Vec<usize> = cpus.into_iter().collect();
            prop_assert_eq!(parse_list(&format_list(&v)), Some(v));
        }

        #[test]
        fn list_parser_never_panics(s in "\\PC*") {
            let _ = parse_list(&s);
        }
    }
}
