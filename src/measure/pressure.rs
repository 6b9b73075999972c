//! How tight a memory load is (`--load memory:headroom=P,swap=off`): what the load's sizing
//! (`memload::sizes`) and its cgroup's swap bound follow.

/// How tight a memory load is: `memory`, `memory:headroom=10`, `memory:headroom=0,swap=off`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pressure {
    /// The room left in the cgroup beyond the experiment and a competitor as large as it, in
    /// percent of the experiment's size (`memload::sizes`), negative when the experiment does
    /// not fit by that much; `None`: the default sizing.
    pub headroom: Option<i32>,
    /// Whether the cgroup may not swap (`swap=off`), though the machine has swap.
    pub no_swap: bool,
}

impl Pressure {
    /// Parse the options after `memory:`, comma-separated.
    pub fn parse(options: &str) -> Option<Pressure> {
        let mut p = Pressure::default();
        for option in options.split(',') {
            match option.split_once('=')? {
                ("headroom", v) => {
                    let percent: i32 = v.strip_suffix('%').unwrap_or(v).parse().ok()?;
                    p.headroom = (-90..=1000).contains(&percent).then_some(percent);
                    p.headroom?;
                }
                ("swap", "off") => p.no_swap = true,
                ("swap", "on") => p.no_swap = false,
                _ => return None,
            }
        }
        Some(p)
    }

    /// The options as [`Pressure::parse`] reads them (`headroom=-25%,swap=off`); `None` for
    /// the default sizing with swap.
    pub fn options(&self) -> Option<String> {
        let mut options = Vec::new();
        if let Some(h) = self.headroom {
            options.push(format!("headroom={h}%"));
        }
        if self.no_swap {
            options.push("swap=off".into());
        }
        (!options.is_empty()).then(|| options.join(","))
    }
}
