//! The program a child executes: a tiny static ELF written to a private directory, or /bin/true.

use super::*;

// --- the program a child executes ---

/// Where `target=dynamic` execs: a small dynamically linked program every Unix has.
pub(super) const DYNAMIC_TARGET: &str = "/bin/true";

/// A program to execute, with its argument and (empty) environment vectors built before any
/// child exists: between fork and execve the child may only call async-signal-safe
/// functions, so it must not allocate.
pub(super) struct Program {
    pub(super) path: CString,
    /// Owns the strings `argv` points into.
    pub(super) _args: Vec<CString>,
    pub(super) argv: Vec<*mut c_char>,
    /// An empty environment: the user's (LD_PRELOAD, LD_LIBRARY_PATH, its size) would change
    /// what the loader does and what execve copies.
    pub(super) envp: Vec<*mut c_char>,
    /// The static helper, removed when the routine is dropped.
    pub(super) _helper: Option<HelperFile>,
}

impl Program {
    pub(super) fn new(
        path: &Path,
        arg0: &str,
        helper: Option<HelperFile>,
    ) -> Result<Program, SetupError> {
        let path = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| SetupError::Failed(format!("{} contains a NUL byte", path.display())))?;
        let args = vec![CString::new(arg0).expect("no NUL in arg0")];
        let mut argv: Vec<*mut c_char> = args.iter().map(|a| a.as_ptr().cast_mut()).collect();
        argv.push(std::ptr::null_mut());
        Ok(Program {
            path,
            _args: args,
            argv,
            envp: vec![std::ptr::null_mut()],
            _helper: helper,
        })
    }

    /// posix_spawn it and reap it: Ok when it exited with 0.
    pub(super) fn spawn_and_reap(&self) -> Result<(), RoutineError> {
        let pid = self
            .spawn()
            .map_err(|errno| os_error("posix_spawn", errno))?;
        reap(pid, "posix_spawn")
    }

    /// posix_spawn it: the child's pid, or the errno of the spawn or of the child's execve.
    pub(super) fn spawn(&self) -> Result<libc::pid_t, i32> {
        let mut pid: libc::pid_t = 0;
        // SAFETY: `path`, `argv` and `envp` are NUL-terminated strings and null-terminated
        // pointer arrays owned by `self`; null file actions and attributes are allowed.
        let rc = unsafe {
            libc::posix_spawn(
                &mut pid,
                self.path.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                self.argv.as_ptr(),
                self.envp.as_ptr(),
            )
        };
        if rc != 0 { Err(rc) } else { Ok(pid) }
    }

    /// Run it once at setup, retrying while the file is busy: ETXTBSY means a descriptor
    /// open for writing still exists, which can only be a copy inherited by a child that
    /// another thread forked while the file was being written (never in a worker, which
    /// has one thread; possible in a multi-threaded test binary).
    pub(super) fn check_runs(&self) -> Result<(), RoutineError> {
        for _ in 0..100 {
            match self.spawn() {
                Ok(pid) => return reap(pid, "posix_spawn"),
                Err(libc::ETXTBSY) => std::thread::sleep(std::time::Duration::from_millis(10)),
                Err(libc::EACCES) => {
                    return Err(RoutineError::Check(format!(
                        "{} (mounted noexec?)",
                        os_error("posix_spawn", libc::EACCES)
                    )));
                }
                Err(errno) => return Err(os_error("posix_spawn", errno)),
            }
        }
        Err(os_error("posix_spawn", libc::ETXTBSY))
    }
}

/// The program `target` names, checked to run once here (exit status 0).
pub(super) fn program(params: &Params, context: &Context) -> Result<Program, SetupError> {
    match params.str("target") {
        "dynamic" => dynamic_program(Path::new(DYNAMIC_TARGET)),
        _ => static_program(&helper_dirs(context)),
    }
}

pub(super) fn dynamic_program(path: &Path) -> Result<Program, SetupError> {
    let bytes = std::fs::read(path).map_err(|e| {
        SetupError::Unsupported(format!(
            "target=dynamic execs {}, which cannot be read here: {e}",
            path.display()
        ))
    })?;
    match elf::interpreter(&bytes) {
        Ok(true) => {}
        Ok(false) => {
            return Err(SetupError::Unsupported(format!(
                "target=dynamic needs a dynamically linked {}, but it has no program \
                 interpreter (statically linked) here",
                path.display()
            )));
        }
        Err(why) => {
            return Err(SetupError::Unsupported(format!(
                "target=dynamic needs {} to be an ELF64 executable: {why}",
                path.display()
            )));
        }
    }
    let arg0 = path
        .file_name()
        .map_or("true".into(), |n| n.to_string_lossy());
    let program = Program::new(path, &arg0, None)?;
    program.check_runs().map_err(|e| {
        SetupError::Unsupported(format!("{} does not run here: {e}", path.display()))
    })?;
    Ok(program)
}

/// Write the static helper into the first directory where it can be executed.
pub(super) fn static_program(dirs: &[PathBuf]) -> Result<Program, SetupError> {
    let Some(image) = elf::exit0_image_for_this_arch() else {
        return Err(SetupError::Unsupported(format!(
            "target=static writes machine code for x86_64 or aarch64; this is {} (use \
             target=dynamic)",
            std::env::consts::ARCH
        )));
    };
    let mut refused = Vec::new();
    for dir in dirs {
        let helper = match HelperFile::create(dir, &image) {
            Ok(h) => h,
            Err(e) => {
                refused.push(format!("{}: {e}", dir.display()));
                continue;
            }
        };
        let program = Program::new(&helper.path.clone(), "exit0", Some(helper))?;
        match program.check_runs() {
            Ok(()) => return Ok(program),
            // Dropping `program` removes the helper.
            Err(e) => refused.push(format!("{}: {e}", dir.display())),
        }
    }
    Err(SetupError::Unsupported(format!(
        "no directory where the static exec helper can be written and executed: {} (set TMPDIR \
         to an executable directory, or use target=dynamic)",
        refused.join("; ")
    )))
}

/// Candidate directories for the helper: the worker's scratch directory (the parent removes
/// it even when the worker is killed), the temporary directory (TMPDIR or /tmp), then the
/// per-user runtime directory, then the current directory — /tmp is mounted `noexec` on
/// some hardened systems.
pub(crate) fn helper_dirs(context: &Context) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = context.scratch_dir.iter().cloned().collect();
    dirs.push(std::env::temp_dir());
    if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        dirs.push(PathBuf::from(run));
    }
    if let Ok(cwd) = std::env::current_dir() {
        dirs.push(cwd);
    }
    dirs.dedup();
    dirs
}

/// Prefix of the helper's private directory; the integration tests look for leftovers by it.
pub const HELPER_DIR_PREFIX: &str = "oslab-process-";
pub(super) const HELPER_NAME: &str = "exit0";

/// The static helper in a private directory (mode 0700) of its own, both removed on drop.
pub(crate) struct HelperFile {
    pub(crate) dir: PathBuf,
    pub(crate) path: PathBuf,
}

impl HelperFile {
    pub(crate) fn create(parent: &Path, image: &[u8]) -> io::Result<HelperFile> {
        use std::io::Write;
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};

        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mut attempt = 0u32;
        let dir = loop {
            let dir = parent.join(format!(
                "{HELPER_DIR_PREFIX}{}-{nanos}-{attempt}",
                std::process::id()
            ));
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => {
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        };
        let helper = HelperFile {
            path: dir.join(HELPER_NAME),
            dir,
        };
        // The descriptor is closed (end of this block) before anything executes the file:
        // execve of a file open for writing fails with ETXTBSY. No other thread exists in
        // the worker to inherit it across a fork meanwhile (it is O_CLOEXEC anyway).
        {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o700)
                .open(&helper.path)?;
            file.write_all(image)?;
        }
        Ok(helper)
    }
}

impl Drop for HelperFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_dir(&self.dir);
    }
}
