//! `oslab env`: this machine as oslab sees it.

use super::*;

pub(super) fn env(json: bool) -> Result<ExitCode> {
    let mut environment = crate::platform::env::collect();
    environment.counters = counters::probe();
    let (clock, reason) = clock::choose(ClockChoice::Auto);
    let info = clock.info(reason);
    let text = if json {
        let doc = serde_json::json!({ "environment": environment, "clock": info });
        let mut s = serde_json::to_string_pretty(&doc)?;
        s.push('\n');
        s
    } else {
        format!(
            "{}\nClock\n  source      {}\n  why         {}\n  read pair   {}\n  resolution  {}\n",
            report::env_table::render(&environment),
            info.source,
            info.reason,
            report::format::time_ns(info.overhead_ns),
            report::format::time_ns(info.resolution_ns)
        )
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}
