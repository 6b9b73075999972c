//! The FreeBSD guest runs one program (`../shared/freebsd-guest`): this one, which runs the
//! steps of `.ci/freebsd` one after another and frames what each printed, so that the host can
//! read every step's output and exit status from the console log.
//!
//! Usage: `oslab-guest-steps FILE`. FILE holds one step per line: a name, a tab, then the
//! program and its arguments separated by tabs (lines starting with `#` are skipped). Each
//! step's standard error goes to the console as it is written; its standard output is kept in
//! a file and printed after the step, between `@@@ begin NAME` and `@@@ end NAME exit CODE
//! SECONDS`, so that it is not interleaved with standard error. Every step runs, whatever the
//! previous ones did; the exit status is 0 when all of them exited 0, else 1.
//!
//! The program `@copy SRC DST` is built in too: it copies a file to a path made at run time
//! (parents created, mode kept), for a path the read-only root cannot hold, such as one
//! under the guest's tmpfs /tmp. The program `@sysctl NAME...` is built in (the guest has no sysctl(8)): it prints
//! `NAME=VALUE` per name, read with sysctlbyname(3) independently of oslab, so that the host
//! can check what `oslab env` says against the kernel's own answer.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: oslab-guest-steps FILE");
        std::process::exit(2);
    };
    let steps = match File::open(&path) {
        Ok(f) => BufReader::new(f),
        Err(e) => {
            eprintln!("oslab-guest-steps: {path}: {e}");
            std::process::exit(2);
        }
    };
    let mut failed = 0;
    for line in steps.lines() {
        let line = line.unwrap_or_else(|e| {
            eprintln!("oslab-guest-steps: {path}: {e}");
            std::process::exit(2)
        });
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        if fields.len() < 2 {
            eprintln!("oslab-guest-steps: a step needs a name and a program: {line:?}");
            std::process::exit(2);
        }
        if !step(fields[0], &fields[1..]) {
            failed += 1;
        }
    }
    eprintln!("oslab-guest-steps: {failed} step(s) failed");
    std::process::exit(i32::from(failed > 0));
}

/// Runs one step; true when it exited 0.
fn step(name: &str, argv: &[&str]) -> bool {
    eprintln!("@@@ step {name}: {}", argv.join(" "));
    let out_path = format!("/tmp/step-{name}.out");
    let started = Instant::now();
    if argv[0] == "@copy" {
        return copy(name, argv);
    }
    if argv[0] == "@sysctl" {
        let mut stdout = io::stdout().lock();
        let _ = writeln!(stdout, "@@@ begin {name}");
        for name in &argv[1..] {
            let _ = writeln!(
                stdout,
                "{name}={}",
                sysctl(name).unwrap_or_else(|e| format!("?{e}"))
            );
        }
        let _ = writeln!(stdout, "@@@ end {name} exit 0 0.0");
        return true;
    }
    let code = File::create(&out_path).and_then(|out| {
        Command::new(argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(out)
            .status()
    });
    let seconds = started.elapsed().as_secs_f64();
    let code = match code {
        Ok(status) => status
            .code()
            .map_or_else(|| format!("{status}"), |c| c.to_string()),
        Err(e) => format!("not-started ({e})"),
    };
    let mut stdout = io::stdout().lock();
    let _ = writeln!(stdout, "@@@ begin {name}");
    if let Ok(mut out) = File::open(&out_path) {
        let _ = io::copy(&mut out, &mut stdout);
    }
    let _ = writeln!(stdout, "@@@ end {name} exit {code} {seconds:.1}");
    let _ = stdout.flush();
    code == "0"
}

/// A sysctl's value as text: a 4-byte value as a signed integer, an 8-byte one as an unsigned
/// integer (hw.physmem is an unsigned long), anything else as a NUL-terminated string. (A
/// string of 3 or 7 characters would read as a number: none of the names .ci/freebsd asks
/// for is one.)
#[cfg(target_os = "freebsd")]
fn sysctl(name: &str) -> Result<String, io::Error> {
    let cname = std::ffi::CString::new(name).map_err(io::Error::other)?;
    let mut buf = vec![0u8; 1024];
    let mut len = buf.len();
    // SAFETY: a NUL-terminated name, and a buffer of `len` bytes that the kernel fills.
    let rc = unsafe {
        libc::sysctlbyname(
            cname.as_ptr(),
            buf.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null(),
            0,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(len);
    Ok(match (len, buf.last()) {
        (4, _) => i32::from_ne_bytes(buf[..4].try_into().expect("4 bytes")).to_string(),
        (8, _) => u64::from_ne_bytes(buf[..8].try_into().expect("8 bytes")).to_string(),
        (_, Some(0)) => String::from_utf8_lossy(&buf[..len - 1]).into_owned(),
        _ => format!("?{len} bytes"),
    })
}

#[cfg(not(target_os = "freebsd"))]
fn sysctl(_: &str) -> Result<String, io::Error> {
    Err(io::Error::other("sysctl is FreeBSD's"))
}

/// `@copy SRC DST`: true when DST now holds a copy of SRC.
fn copy(name: &str, argv: &[&str]) -> bool {
    let [_, src, dst] = argv else {
        eprintln!("oslab-guest-steps: @copy takes SRC and DST");
        return false;
    };
    let dst = std::path::Path::new(dst);
    // Already in the image (a path outside /tmp): nothing to do.
    let done = if dst.exists() {
        Ok(())
    } else {
        dst.parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::copy(src, dst).map(drop))
    };
    let code = match &done {
        Ok(()) => "0".to_string(),
        Err(e) => {
            eprintln!("oslab-guest-steps: @copy {src} {}: {e}", dst.display());
            "1".to_string()
        }
    };
    println!("@@@ begin {name}");
    println!("@@@ end {name} exit {code} 0.0");
    done.is_ok()
}
