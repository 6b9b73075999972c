//! The routines of `winapi.rs` that ask the kernel for an object: a file opened and closed, a
//! process created and waited for, fresh memory touched page by page.

use crate::experiment::RoutineError;
use std::path::PathBuf;

use windows_sys::Win32::Foundation::{CloseHandle, GENERIC_READ, INVALID_HANDLE_VALUE};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, FILE_ATTRIBUTE_NORMAL, FILE_SHARE_READ, OPEN_EXISTING,
};
use windows_sys::Win32::System::Threading::{
    CreateProcessW, GetExitCodeProcess, INFINITE, PROCESS_INFORMATION, STARTF_USESTDHANDLES,
    STARTUPINFOW, WaitForSingleObject,
};

use crate::experiment::mapping::Anon;
use crate::experiment::{Context, Params, Routine, SetupError};
use crate::platform::text::wide;

/// `syscall.create_file`: a file of the worker's scratch directory opened and closed.
struct OpenClose {
    path: Vec<u16>,
}

impl Routine for OpenClose {
    #[inline(never)]
    fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
        for _ in 0..ops {
            // SAFETY: a NUL-terminated path; no security attributes or template.
            let file = unsafe {
                CreateFileW(
                    self.path.as_ptr(),
                    GENERIC_READ,
                    FILE_SHARE_READ,
                    std::ptr::null(),
                    OPEN_EXISTING,
                    FILE_ATTRIBUTE_NORMAL,
                    std::ptr::null_mut(),
                )
            };
            if file == INVALID_HANDLE_VALUE {
                return Err(RoutineError::last_os("CreateFileW"));
            }
            // SAFETY: the handle opened above.
            if unsafe { CloseHandle(file) } == 0 {
                return Err(RoutineError::last_os("CloseHandle"));
            }
        }
        Ok(())
    }
}

pub fn setup_create_file(_: &Params, ctx: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let dir = ctx.scratch_dir.as_ref().ok_or_else(|| {
        SetupError::Unsupported("syscall.create_file needs a scratch directory".into())
    })?;
    let path: PathBuf = dir.join("opened");
    std::fs::write(&path, b"oslab")
        .map_err(|e| SetupError::Failed(format!("cannot create {}: {e}", path.display())))?;
    Ok(Box::new(OpenClose {
        path: wide(path.as_os_str()),
    }))
}

/// `process.create_process`: oslab.exe printing its version, with no standard handles (so it
/// prints to nowhere), waited for; its exit code must be 0.
struct CreateProcess {
    exe: Vec<u16>,
    command_line: Vec<u16>,
}

impl CreateProcess {
    fn once(&self) -> Result<(), RoutineError> {
        // SAFETY: an all-zero STARTUPINFOW is valid; cb tells its size, and the standard
        // handles are null.
        let mut startup: STARTUPINFOW = unsafe { std::mem::zeroed() };
        startup.cb = std::mem::size_of::<STARTUPINFOW>() as u32;
        startup.dwFlags = STARTF_USESTDHANDLES;
        // SAFETY: as above, output space.
        let mut info: PROCESS_INFORMATION = unsafe { std::mem::zeroed() };
        // CreateProcessW may write into the command line: a copy per call.
        let mut command_line = self.command_line.clone();
        // SAFETY: NUL-terminated strings, no inherited handles, this process's environment
        // and directory; the handles returned are closed below.
        let created = unsafe {
            CreateProcessW(
                self.exe.as_ptr(),
                command_line.as_mut_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                0,
                0,
                std::ptr::null(),
                std::ptr::null(),
                &startup,
                &mut info,
            )
        };
        if created == 0 {
            return Err(RoutineError::last_os("CreateProcessW"));
        }
        let mut code = 1u32;
        // SAFETY: the process handle just returned; a pointer to a local.
        let ended = unsafe {
            WaitForSingleObject(info.hProcess, INFINITE) == 0
                && GetExitCodeProcess(info.hProcess, &mut code) != 0
        };
        // SAFETY: closing the two handles CreateProcessW returned.
        unsafe {
            CloseHandle(info.hThread);
            CloseHandle(info.hProcess);
        }
        match (ended, code) {
            (true, 0) => Ok(()),
            (true, code) => Err(RoutineError::Check(format!(
                "the created process exited with code {code}"
            ))),
            (false, _) => Err(RoutineError::last_os("waiting for the created process")),
        }
    }
}

impl Routine for CreateProcess {
    fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
        for _ in 0..ops {
            self.once()?;
        }
        Ok(())
    }
}

pub fn setup_create_process(_: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let exe = std::env::current_exe()
        .map_err(|e| SetupError::Failed(format!("cannot find oslab.exe: {e}")))?;
    let mut line = std::ffi::OsString::from("\"");
    line.push(exe.as_os_str());
    line.push("\" --version");
    let routine = CreateProcess {
        exe: wide(exe.as_os_str()),
        command_line: wide(&line),
    };
    routine.once()?;
    Ok(Box::new(routine))
}

/// `pagefault.virtual_alloc`: fresh memory before every pass (untimed), each page written
/// once in the pass.
struct FirstTouch {
    size: usize,
    region: Option<Anon>,
}

impl Routine for FirstTouch {
    fn prepare(&mut self, _ops: u64) -> Result<(), RoutineError> {
        // The old region goes first, so two never coexist.
        self.region = None;
        let region = Anon::private(self.size).map_err(|e| match e {
            SetupError::Unsupported(why) | SetupError::Failed(why) => why,
        })?;
        self.region = Some(region);
        Ok(())
    }

    fn run(&mut self, ops: u64) -> Result<(), RoutineError> {
        let region = self.region.as_ref().ok_or("no region prepared")?;
        let pages = (region.len() / 4096) as u64;
        for page in 0..ops.min(pages) {
            // SAFETY: page < pages, so the write is inside the region.
            unsafe { region.ptr().add(page as usize * 4096).write_volatile(1) };
        }
        Ok(())
    }
}

pub fn setup_virtual_alloc(params: &Params, _: &Context) -> Result<Box<dyn Routine>, SetupError> {
    let size = usize::try_from(params.u64("size")).map_err(|_| {
        SetupError::Unsupported("size does not fit this machine's addresses".into())
    })?;
    Ok(Box::new(FirstTouch { size, region: None }))
}
