//! Flame graphs as SVG (inferno, the Rust port of Brendan Gregg's FlameGraph): one of a
//! profile, and a differential one of two, drawn with the second profile's stacks and
//! coloured by what changed: red where the second spends a larger share, blue where a
//! smaller (the first profile is scaled to the second's sample count first).
//!
//! Colours of a single profile (inferno's `perl` palette): orange for kernel frames (`_[k]`),
//! yellow for Rust and C++ frames (`::`), red for the rest (C, libc, unnamed user frames).

use inferno::flamegraph::{self, color::MultiPalette, color::Palette};

use crate::model::profile::Profile;

/// The folded lines of a profile: `stack count` each.
pub fn folded_text(profile: &Profile) -> String {
    let mut text = String::new();
    for s in &profile.stacks {
        text.push_str(&format!("{} {}\n", s.stack, s.count));
    }
    text
}

fn options(title: &str, subtitle: &str, width: Option<usize>) -> flamegraph::Options<'static> {
    let mut options = flamegraph::Options::default();
    options.image_width = width;
    options.title = title.to_string();
    options.subtitle = Some(subtitle.to_string());
    options.colors = Palette::Multi(MultiPalette::Perl);
    options.count_name = "samples".into();
    // Deterministic colours: the same function has the same colour in every graph.
    options.hash = true;
    options
}

/// Why no flame graph was drawn.
#[derive(Debug, thiserror::Error)]
pub enum FlameError {
    #[error("the profile has no samples")]
    NoSamples,
    #[error("one of the profiles has no samples")]
    NoSamplesOnOneSide,
    /// inferno failed: `doing` says at which step.
    #[error("{doing}: {source}")]
    Inferno {
        doing: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("the flame graph is not UTF-8: {0}")]
    NotUtf8(#[from] std::string::FromUtf8Error),
}

/// The flame graph of `profile`, as wide as its window or `width` pixels; `Err` names why
/// inferno could not draw it (no samples).
pub fn svg(
    profile: &Profile,
    title: &str,
    subtitle: &str,
    width: Option<usize>,
) -> Result<String, FlameError> {
    if profile.samples() == 0 {
        return Err(FlameError::NoSamples);
    }
    let text = folded_text(profile);
    draw(
        &mut options(title, subtitle, width),
        &text,
        "cannot draw the flame graph",
    )
}

/// inferno's SVG of folded `lines`; `doing` names the step if it fails.
fn draw(
    options: &mut flamegraph::Options<'_>,
    lines: &str,
    doing: &'static str,
) -> Result<String, FlameError> {
    let mut out = Vec::new();
    flamegraph::from_lines(options, lines.lines(), &mut out)
        .map_err(|source| FlameError::Inferno { doing, source })?;
    Ok(String::from_utf8(out)?)
}

/// The differential flame graph from `before` to `after`.
pub fn diff_svg(
    before: &Profile,
    after: &Profile,
    title: &str,
    subtitle: &str,
) -> Result<String, FlameError> {
    if before.samples() == 0 || after.samples() == 0 {
        return Err(FlameError::NoSamplesOnOneSide);
    }
    let (a, b) = (folded_text(before), folded_text(after));
    let mut lines = Vec::new();
    let diff = inferno::differential::Options {
        normalize: true,
        strip_hex: false,
    };
    inferno::differential::from_readers(diff, a.as_bytes(), b.as_bytes(), &mut lines).map_err(
        |source| FlameError::Inferno {
            doing: "cannot difference the profiles",
            source,
        },
    )?;
    let lines = String::from_utf8(lines)?;
    draw(
        &mut options(title, subtitle, None),
        &lines,
        "cannot draw the differential flame graph",
    )
}

/// A file name for a configuration's graph: its label with anything but letters, digits,
/// `.`, `-` and `_` turned into `_`.
pub fn file_name(label: &str, suffix: &str) -> String {
    let mut name: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    while name.contains("__") {
        name = name.replace("__", "_");
    }
    format!("{}{suffix}.svg", name.trim_matches('_'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile::FoldedStack;

    fn profile(stacks: &[(&str, u64)]) -> Profile {
        Profile {
            event: "cpu-clock".into(),
            frequency_hz: 4000,
            stacks: stacks
                .iter()
                .map(|(s, c)| FoldedStack {
                    stack: s.to_string(),
                    count: *c,
                })
                .collect(),
            lost: 0,
            batch_ns_per_op: vec![],
            problem: None,
        }
    }

    #[test]
    fn a_graph_names_its_frames_and_a_differential_one_is_coloured() {
        let a = profile(&[
            ("main;entry_SYSCALL_64_[k];__x64_sys_getppid_[k]", 60),
            ("main;loop", 40),
        ]);
        let b = profile(&[
            ("main;entry_SYSCALL_64_[k];__x64_sys_getppid_[k]", 90),
            ("main;loop", 10),
        ]);
        let one = svg(&a, "syscall.getppid", "run 1", None).unwrap();
        assert!(one.starts_with("<?xml"), "{}", &one[..80]);
        assert!(one.contains("__x64_sys_getppid"));
        assert!(one.contains("syscall.getppid"));
        let diff = diff_svg(&a, &b, "syscall.getppid", "run 1 → run 2").unwrap();
        // Red (grew) and blue (shrank) fills: rgb(255,…) and rgb(…,255).
        assert!(diff.contains("rgb(255,"), "no red frame");
        assert!(diff.contains(",255)"), "no blue frame");
        assert!(svg(&profile(&[]), "t", "s", None).is_err());
    }

    #[test]
    fn file_names_are_plain() {
        assert_eq!(
            file_name("syscall.getppid (mode=libc)", ""),
            "syscall.getppid_mode_libc.svg"
        );
        assert_eq!(file_name("a/b", "-diff"), "a_b-diff.svg");
    }
}
