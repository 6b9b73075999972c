//! `--load io`: a process doing buffered writes with fsync and reads of what it wrote, on the
//! device of `--dir`, beside the experiment, so the classic idle / light / full load scenarios
//! of OS labs cover I/O as `cpu` and `memory` cover the others.
//!
//! The load (the hidden `oslab load --io DIR`) cycles over one file of [`FILE_BYTES`] in its
//! own directory: written in [`CHUNK`] pieces, fsync'd every [`SYNC_EVERY`] bytes, its cached
//! pages dropped (posix_fadvise DONTNEED once they are clean), then read back, so both the
//! writes and the reads reach the device. Every [`REPORT_EVERY`] it rewrites a small
//! statistics file (written to a temporary name, then renamed): what it wrote, read and
//! fsync'd, and the blocks its own getrusage counted in and out (the kernel's word on what
//! reached the block layer). The run records the rates from the last statistics, so a user
//! sees how much load there was.
//!
//! The parent creates the load's directory in `--dir` and removes it after killing the load.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bytes of one pass's file.
pub const FILE_BYTES: u64 = 32 << 20;
/// One write or read.
pub const CHUNK: usize = 256 << 10;
/// An fsync after this many bytes written.
pub const SYNC_EVERY: u64 = 4 << 20;
/// How often the statistics file is rewritten.
const REPORT_EVERY: Duration = Duration::from_millis(100);
/// The statistics file's name in the load's directory.
pub const STATS: &str = "stats";

/// What the load did so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    pub elapsed_s: f64,
    pub written: u64,
    pub read: u64,
    pub fsyncs: u64,
    /// 512-byte blocks its getrusage counted written and read.
    pub oublock: i64,
    pub inblock: i64,
}

impl Stats {
    fn line(&self) -> String {
        format!(
            "{} {} {} {} {} {}\n",
            self.elapsed_s, self.written, self.read, self.fsyncs, self.oublock, self.inblock
        )
    }

    /// Parse [`Stats::line`]; `None` for anything else.
    pub fn parse(text: &str) -> Option<Stats> {
        let f: Vec<&str> = text.split_whitespace().collect();
        let [elapsed, written, read, fsyncs, oublock, inblock] = f[..] else {
            return None;
        };
        Some(Stats {
            elapsed_s: elapsed.parse().ok().filter(|e: &f64| e.is_finite())?,
            written: written.parse().ok()?,
            read: read.parse().ok()?,
            fsyncs: fsyncs.parse().ok()?,
            oublock: oublock.parse().ok()?,
            inblock: inblock.parse().ok()?,
        })
    }

    /// The record's details: the rates over the load's lifetime.
    pub fn details(&self) -> Vec<(String, String)> {
        let per_s = |x: f64| {
            if self.elapsed_s > 0.0 {
                x / self.elapsed_s
            } else {
                f64::NAN
            }
        };
        let mib = |bytes: u64| per_s(bytes as f64) / f64::from(1 << 20);
        vec![
            (
                "achieved write rate".into(),
                format!(
                    "{:.1} MiB/s (buffered, fsync every 4 MiB)",
                    mib(self.written)
                ),
            ),
            (
                "achieved read rate".into(),
                format!(
                    "{:.1} MiB/s (after dropping the cached pages)",
                    mib(self.read)
                ),
            ),
            (
                "fsyncs".into(),
                format!("{:.1}/s", per_s(self.fsyncs as f64)),
            ),
            (
                "blocks out, in (its getrusage)".into(),
                format!(
                    "{:.1} MiB/s, {:.1} MiB/s",
                    per_s(self.oublock as f64 * 512.0) / f64::from(1 << 20),
                    per_s(self.inblock as f64 * 512.0) / f64::from(1 << 20)
                ),
            ),
            (
                "measured over".into(),
                format!("its first {:.2} s (it reports every 0.1 s)", self.elapsed_s),
            ),
        ]
    }
}

/// The statistics the load in `dir` wrote last, if any.
pub fn read_stats(dir: &Path) -> Option<Stats> {
    Stats::parse(&std::fs::read_to_string(dir.join(STATS)).ok()?)
}

/// Entry point of `oslab load --io DIR`: cycle until killed. Returns an exit code when the
/// load cannot go on (its directory gone, a full disk).
pub fn main(dir: &Path) -> i32 {
    match cycle(dir) {
        Ok(never) => match never {},
        Err(e) => {
            crate::say!("oslab load --io: {e}");
            1
        }
    }
}

enum Never {}

fn cycle(dir: &Path) -> std::io::Result<Never> {
    let path = dir.join("load.dat");
    let mut file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)?;
    let buf = vec![0x5au8; CHUNK];
    let mut read_buf = vec![0u8; CHUNK];
    let start = Instant::now();
    let mut stats = Stats::default();
    let mut reported = Instant::now();
    let mut report = |stats: &mut Stats| -> std::io::Result<()> {
        if reported.elapsed() < REPORT_EVERY {
            return Ok(());
        }
        reported = Instant::now();
        let ru = crate::platform::rusage::this_process();
        stats.elapsed_s = start.elapsed().as_secs_f64();
        (stats.oublock, stats.inblock) = (ru.oublock, ru.inblock);
        write_stats(dir, stats)
    };
    loop {
        file.seek(SeekFrom::Start(0))?;
        let mut unsynced = 0u64;
        for _ in 0..FILE_BYTES / CHUNK as u64 {
            file.write_all(&buf)?;
            stats.written += CHUNK as u64;
            unsynced += CHUNK as u64;
            if unsynced >= SYNC_EVERY {
                file.sync_data()?;
                stats.fsyncs += 1;
                unsynced = 0;
            }
            report(&mut stats)?;
        }
        file.sync_data()?;
        stats.fsyncs += 1;
        drop_cache(&file);
        file.seek(SeekFrom::Start(0))?;
        loop {
            let n = file.read(&mut read_buf)?;
            if n == 0 {
                break;
            }
            stats.read += n as u64;
            report(&mut stats)?;
        }
    }
}

/// Drop the file's clean cached pages so the next pass reads the device.
#[cfg(unix)]
fn drop_cache(file: &File) {
    use std::os::fd::AsRawFd;
    // Where the file system keeps no page cache to drop (tmpfs), reads stay in memory: the
    // statistics' blocks in show it.
    let _ = crate::platform::fscache::drop_file_cache(file.as_raw_fd());
}

#[cfg(not(unix))]
fn drop_cache(_: &File) {}

fn write_stats(dir: &Path, stats: &Stats) -> std::io::Result<()> {
    let tmp: PathBuf = dir.join(format!("{STATS}.tmp"));
    std::fs::write(&tmp, stats.line())?;
    std::fs::rename(&tmp, dir.join(STATS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn stats_round_trip_and_give_rates() {
        let s = Stats {
            elapsed_s: 2.0,
            written: 64 << 20,
            read: 32 << 20,
            fsyncs: 20,
            oublock: 131_072,
            inblock: 0,
        };
        assert_eq!(Stats::parse(&s.line()), Some(s));
        let details = s.details();
        assert_eq!(details[0].1, "32.0 MiB/s (buffered, fsync every 4 MiB)");
        assert_eq!(details[1].1, "16.0 MiB/s (after dropping the cached pages)");
        assert_eq!(details[2].1, "10.0/s");
        assert_eq!(details[3].1, "32.0 MiB/s, 0.0 MiB/s");
    }

    proptest! {
        #[test]
        fn any_text_parses_or_is_none(text in "[0-9. a-z-]{0,60}") {
            if let Some(s) = Stats::parse(&text) {
                prop_assert!(s.elapsed_s.is_finite());
            }
        }
    }
}
