//! `oslab maps [PID]`: what the command shows, put together from the platform's reading of
//! a memory map and, without a PID, from children of oslab started here.
//!
//! Without a PID the target is a fresh child: this binary re-executed as the hidden
//! `oslab maps-child` subcommand, which fills a heap block and then waits on a pipe, so its map
//! is that of a typical dynamically linked program caught mid-run. A second child is started
//! beside it only to compare base addresses: whether ASLR moved each region between two
//! executions is observed, not inferred from a sysctl.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, anyhow};

use crate::model::maps::{Aslr, AslrRegion, BaseComparison, CHILD_BLOCK_BYTES, Report};
use crate::platform::maps;

/// `oslab maps PID`.
pub fn inspect_pid(pid: u32) -> Result<Report> {
    Ok(Report {
        snapshot: maps::read(pid)?,
        child_block: None,
        aslr: Aslr {
            randomize_va_space: maps::randomize_va_space(),
            comparison: Vec::new(),
        },
        emulation: crate::platform::env::emulation(),
    })
}

/// `oslab maps`: map a fresh child, and a second one to see what ASLR moved.
pub fn inspect_child() -> Result<Report> {
    let (first, block) = ChildProcess::spawn()?;
    let (second, _) = ChildProcess::spawn()?;
    let snapshot = maps::read(first.pid())?;
    let other = maps::read(second.pid())?;
    first.finish()?;
    second.finish()?;
    let comparison = AslrRegion::ALL
        .iter()
        .map(|&region| BaseComparison {
            region,
            first: snapshot.base(region),
            second: other.base(region),
        })
        .collect();
    Ok(Report {
        snapshot,
        child_block: Some(block),
        aslr: Aslr {
            randomize_va_space: maps::randomize_va_space(),
            comparison,
        },
        emulation: crate::platform::env::emulation(),
    })
}

/// A running `oslab maps-child`, killed and reaped when dropped before [`finish`].
///
/// [`finish`]: ChildProcess::finish
struct ChildProcess {
    child: std::process::Child,
}

impl ChildProcess {
    /// Start the child and wait until it says its heap block is filled; returns the block's
    /// address with it.
    fn spawn() -> Result<(ChildProcess, u64)> {
        let exe = std::env::current_exe().context("cannot find the oslab binary")?;
        let child = Command::new(&exe)
            .arg("maps-child")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start {} maps-child", exe.display()))?;
        let mut running = ChildProcess { child };
        let stdout = running
            .child
            .stdout
            .take()
            .context("oslab maps-child has no stdout pipe")?;
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .context("cannot read from oslab maps-child")?;
        let address = line
            .strip_prefix("ready ")
            .and_then(|a| u64::from_str_radix(a.trim(), 16).ok())
            .ok_or_else(|| {
                anyhow!(
                    "oslab maps-child did not report its heap block (it said {:?})",
                    line.trim_end()
                )
            })?;
        Ok((running, address))
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Close the child's stdin, which ends it, and reap it.
    fn finish(mut self) -> Result<()> {
        drop(self.child.stdin.take());
        let status = self
            .child
            .wait()
            .context("cannot wait for oslab maps-child")?;
        if !status.success() {
            return Err(anyhow!("oslab maps-child ended with {status}"));
        }
        Ok(())
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        // After finish() the child is reaped: std neither signals nor waits for it again.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Entry point of `oslab maps-child`: fill a heap block, print `ready ADDRESS` (hex), and
/// wait for stdin to close, which happens when the parent is done or dies.
pub fn child_main() -> i32 {
    // A non-zero fill touches every page: calloc-style zeroing could skip fresh heap pages
    // and leave them out of RSS.
    let block = std::hint::black_box(vec![0xa5_u8; CHILD_BLOCK_BYTES]);
    let mut out = std::io::stdout().lock();
    if writeln!(out, "ready {:x}", block.as_ptr() as u64)
        .and_then(|()| out.flush())
        .is_err()
    {
        return 1;
    }
    let drained = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
    std::hint::black_box(&block);
    i32::from(drained.is_err())
}
