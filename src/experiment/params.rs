//! Experiment parameters: declared with a kind and a default, given as `--param NAME=VALUE`,
//! checked before any worker starts, and stored as text with every result.

use std::collections::BTreeMap;

use crate::model::error::UserError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A whole number within bounds.
    Int { min: u64, max: u64 },
    /// A byte count, with an optional K/M/G suffix (powers of 1024).
    Size { min: u64, max: u64 },
    /// One of a fixed list of words.
    Choice(&'static [&'static str]),
    /// A file system path.
    Path,
}

impl ParamKind {
    /// Check a value; the error says what would have been accepted.
    pub fn check(&self, value: &str) -> Result<(), Mismatch> {
        let fits = match *self {
            ParamKind::Int { min, max } => {
                value.parse::<u64>().is_ok_and(|v| (min..=max).contains(&v))
            }
            ParamKind::Size { min, max } => {
                parse_size(value).is_some_and(|v| (min..=max).contains(&v))
            }
            ParamKind::Choice(words) => words.contains(&value),
            ParamKind::Path => !value.is_empty() && !value.contains('\0'),
        };
        if fits { Ok(()) } else { Err(Mismatch(*self)) }
    }

    /// What a value of this kind is, in the words of an error line.
    pub fn accepted(&self) -> String {
        match *self {
            ParamKind::Int { min, max } => format!("a whole number from {min} to {max}"),
            ParamKind::Size { min, max } => format!(
                "a size from {} to {} (bytes, or with K, M or G)",
                format_size(min),
                format_size(max)
            ),
            ParamKind::Choice(words) => format!("one of {}", words.join(", ")),
            ParamKind::Path => "a non-empty path".to_string(),
        }
    }
}

/// A value that does not fit its parameter's kind; it shows what would have been accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.accepted())]
pub struct Mismatch(pub ParamKind);

/// A parameter an experiment accepts.
#[derive(Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    pub default: &'static str,
    pub help: &'static str,
}

/// The parameters of one experiment with every default filled in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params(BTreeMap<String, String>);

impl Params {
    /// Defaults of `specs`, overridden by `given` (name → value). Names the experiment does not
    /// declare are ignored here: the caller decides whether a name fits any selected experiment.
    pub fn resolve(
        experiment: &str,
        specs: &[ParamSpec],
        given: &[(String, String)],
    ) -> Result<Params, UserError> {
        let mut map = BTreeMap::new();
        for spec in specs {
            let value = given
                .iter()
                .rev()
                .find(|(name, _)| name == spec.name)
                .map_or(spec.default, |(_, v)| v.as_str());
            spec.kind
                .check(value)
                .map_err(|mismatch| UserError::BadParam {
                    experiment: experiment.to_string(),
                    name: spec.name.to_string(),
                    value: value.to_string(),
                    expected: mismatch.to_string(),
                })?;
            map.insert(spec.name.to_string(), value.to_string());
        }
        Ok(Params(map))
    }

    pub fn from_map(map: BTreeMap<String, String>) -> Params {
        Params(map)
    }

    /// Parameters given as name/value pairs, as they are stored (no defaults, no checks).
    pub fn from_pairs(pairs: &[(&str, &str)]) -> Params {
        Params(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    pub fn as_map(&self) -> &BTreeMap<String, String> {
        &self.0
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// A numeric parameter (Int or Size); 0 when absent, which resolution rules out.
    pub fn u64(&self, name: &str) -> u64 {
        self.get(name).and_then(parse_size).unwrap_or(0)
    }

    pub fn str(&self, name: &str) -> &str {
        self.get(name).unwrap_or("")
    }
}

/// Parse `123`, `4K`, `64M`, `1G` (also `KiB`, `MB`… suffixes, all powers of 1024).
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, suffix) = text.split_at(digits_end);
    let number: u64 = digits.parse().ok()?;
    let shift = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return None,
    };
    number.checked_mul(1u64 << shift)
}

/// The shortest exact rendering of a byte count: `4K`, `64M`, `1G`, `1000`.
pub fn format_size(bytes: u64) -> String {
    for (shift, suffix) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// Split `NAME=VALUE`.
pub fn parse_assignment(text: &str) -> Result<(String, String), UserError> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(UserError::ParamSyntax(text.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("4K"), Some(4096));
        assert_eq!(parse_size("64m"), Some(64 << 20));
        assert_eq!(parse_size("1GiB"), Some(1 << 30));
        assert_eq!(parse_size("1.5G"), None);
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("99999999999999999999"), None);
        assert_eq!(format_size(4096), "4K");
        assert_eq!(format_size(1 << 30), "1G");
        assert_eq!(format_size(1000), "1000");
    }

    #[test]
    fn resolve_fills_defaults_and_rejects_bad_values() {
        const SPECS: &[ParamSpec] = &[
            ParamSpec {
                name: "size",
                kind: ParamKind::Size {
                    min: 1,
                    max: 1 << 20,
                },
                default: "1",
                help: "",
            },
            ParamSpec {
                name: "mode",
                kind: ParamKind::Choice(&["a", "b"]),
                default: "a",
                help: "",
            },
        ];
        let p = Params::resolve("x.y", SPECS, &[]).unwrap();
        assert_eq!(p.u64("size"), 1);
        assert_eq!(p.str("mode"), "a");
        let p = Params::resolve("x.y", SPECS, &[("size".into(), "4K".into())]).unwrap();
        assert_eq!(p.u64("size"), 4096);
        let err = Params::resolve("x.y", SPECS, &[("mode".into(), "c".into())]).unwrap_err();
        assert!(err.to_string().contains("one of a, b"), "{err}");
        assert!(Params::resolve("x.y", SPECS, &[("size".into(), "2M".into())]).is_err());
    }

    #[test]
    fn assignments() {
        assert_eq!(parse_assignment("a=b").unwrap(), ("a".into(), "b".into()));
        assert_eq!(parse_assignment("a=").unwrap(), ("a".into(), "".into()));
        assert!(parse_assignment("ab").is_err());
        assert!(parse_assignment("=b").is_err());
    }

    proptest! {
        #[test]
        fn size_parser_never_panics(s in "\\PC*") {
            let _ = parse_size(&s);
        }

        #[test]
        fn size_round_trips(n in 0u64..(1 << 50)) {
            prop_assert_eq!(parse_size(&format_size(n)), Some(n));
        }
    }
}
