//! `oslab completions SHELL` and `oslab man [-o DIR]`: what users expect of a command-line tool, both
//! generated from the same clap definitions as the parser, so they never drift from it.

use super::*;

pub(super) fn completions(shell: clap_complete::Shell) -> Result<ExitCode> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "oslab", &mut out);
    write_stdout(&String::from_utf8_lossy(&out))?;
    Ok(ExitCode::SUCCESS)
}

/// `oslab man`: the page of `oslab` on stdout; with `-o DIR`, that page and one per visible
/// command written into DIR as `oslab.1`, `oslab-run.1`, … (the names man(1) looks up).
pub(super) fn man(output: Option<&std::path::Path>) -> Result<ExitCode> {
    if let Some(dir) = output {
        if !dir.is_dir() {
            return Err(UserError::BadOption(format!(
                "--output {} is not a directory; create it or pass another one",
                dir.display()
            ))
            .into());
        }
        clap_mangen::generate_to(Cli::command(), dir)
            .with_context(|| format!("cannot write the manual pages to {}", dir.display()))?;
        crate::say!("wrote oslab.1 and a page per command to {}", dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .context("cannot render the manual page")?;
    write_stdout(&String::from_utf8_lossy(&out))?;
    Ok(ExitCode::SUCCESS)
}

/// The colour choice before clap parses anything, so that a parse error is coloured (or not)
/// as asked: `--color WHEN` / `--color=WHEN` on the command line, else NO_COLOR
/// (<https://no-color.org>: set and not empty means no colour), else auto.
pub(super) fn color_choice(args: &[std::ffi::OsString]) -> clap::ColorChoice {
    let mut given = None;
    let mut it = args.iter().skip(1).filter_map(|a| a.to_str());
    while let Some(arg) = it.next() {
        if arg == "--" {
            break;
        }
        if let Some(value) = arg.strip_prefix("--color=") {
            given = Some(value.to_string());
        } else if arg == "--color" {
            given = it.next().map(str::to_string);
        }
    }
    match given.as_deref() {
        Some("always") => clap::ColorChoice::Always,
        Some("never") => clap::ColorChoice::Never,
        Some(_) => clap::ColorChoice::Auto,
        None if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) => {
            clap::ColorChoice::Never
        }
        None => clap::ColorChoice::Auto,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<std::ffi::OsString> {
        list.iter().map(Into::into).collect()
    }

    #[test]
    fn color_flag_wins_over_no_color() {
        assert_eq!(
            color_choice(&args(&["oslab", "--color", "always", "list"])),
            clap::ColorChoice::Always
        );
        assert_eq!(
            color_choice(&args(&["oslab", "list", "--color=never"])),
            clap::ColorChoice::Never
        );
        // After `--` it is an argument, not the flag.
        assert_ne!(
            color_choice(&args(&["oslab", "--", "--color=always"])),
            clap::ColorChoice::Always
        );
    }
}
