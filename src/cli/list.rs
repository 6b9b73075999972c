//! `oslab list`: the experiments oslab can run, with their parameters and operating systems.

use super::*;

pub(super) fn list(json: bool) -> Result<ExitCode> {
    let text = if json {
        let doc: Vec<_> = experiment::REGISTRY
            .iter()
            .map(|e| report::list::info_json(e))
            .collect();
        let mut s = serde_json::to_string_pretty(&doc)?;
        s.push('\n');
        s
    } else {
        report::list::render()
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}
