//! Errno names for the numbers a Linux kernel returns, as strace prints them: the one table
//! that names the errors of stored traces (`oslab trace`, made on Linux only) and of
//! perf_event_open on the live Linux machine. Keyed by Linux's numbers, not the host's
//! `libc::E*` values, so a Linux trace shown on FreeBSD or macOS (where EAGAIN is 35, not 11)
//! still names its errors right.

/// Linux's errno numbers (asm-generic's, which x86-64 and aarch64 both use) and their names.
const LINUX: &[(i32, &str)] = &[
    (1, "EPERM"),
    (2, "ENOENT"),
    (3, "ESRCH"),
    (4, "EINTR"),
    (5, "EIO"),
    (6, "ENXIO"),
    (7, "E2BIG"),
    (8, "ENOEXEC"),
    (9, "EBADF"),
    (10, "ECHILD"),
    (11, "EAGAIN"),
    (12, "ENOMEM"),
    (13, "EACCES"),
    (14, "EFAULT"),
    (16, "EBUSY"),
    (17, "EEXIST"),
    (18, "EXDEV"),
    (19, "ENODEV"),
    (20, "ENOTDIR"),
    (21, "EISDIR"),
    (22, "EINVAL"),
    (23, "ENFILE"),
    (24, "EMFILE"),
    (25, "ENOTTY"),
    (27, "EFBIG"),
    (28, "ENOSPC"),
    (29, "ESPIPE"),
    (30, "EROFS"),
    (31, "EMLINK"),
    (32, "EPIPE"),
    (34, "ERANGE"),
    (36, "ENAMETOOLONG"),
    (38, "ENOSYS"),
    (39, "ENOTEMPTY"),
    (40, "ELOOP"),
    (61, "ENODATA"),
    (95, "EOPNOTSUPP"),
    (110, "ETIMEDOUT"),
    (111, "ECONNREFUSED"),
    (115, "EINPROGRESS"),
];

/// The name of Linux errno `errno`; `None` for one the table lacks.
pub fn linux_name(errno: i32) -> Option<&'static str> {
    LINUX
        .binary_search_by_key(&errno, |&(n, _)| n)
        .ok()
        .map(|i| LINUX[i].1)
}

/// The name of Linux errno `errno`, or `errno N` for one the table lacks.
pub fn linux_text(errno: i32) -> String {
    linux_name(errno).map_or_else(|| format!("errno {errno}"), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_names_each_number_once() {
        assert!(LINUX.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(linux_name(11), Some("EAGAIN"));
        assert_eq!(linux_name(115), Some("EINPROGRESS"));
        assert_eq!(linux_name(0), None);
        assert_eq!(linux_text(200), "errno 200");
    }

    /// On Linux the host's libc is the reference: every number is libc's for that name.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_numbers_are_linux_libc_s() {
        let libc_of = |name: &str| match name {
            "EPERM" => libc::EPERM,
            "ENOENT" => libc::ENOENT,
            "ESRCH" => libc::ESRCH,
            "EINTR" => libc::EINTR,
            "EIO" => libc::EIO,
            "ENXIO" => libc::ENXIO,
            "E2BIG" => libc::E2BIG,
            "ENOEXEC" => libc::ENOEXEC,
            "EBADF" => libc::EBADF,
            "ECHILD" => libc::ECHILD,
            "EAGAIN" => libc::EAGAIN,
            "ENOMEM" => libc::ENOMEM,
            "EACCES" => libc::EACCES,
            "EFAULT" => libc::EFAULT,
            "EBUSY" => libc::EBUSY,
            "EEXIST" => libc::EEXIST,
            "EXDEV" => libc::EXDEV,
            "ENODEV" => libc::ENODEV,
            "ENOTDIR" => libc::ENOTDIR,
            "EISDIR" => libc::EISDIR,
            "EINVAL" => libc::EINVAL,
            "ENFILE" => libc::ENFILE,
            "EMFILE" => libc::EMFILE,
            "ENOTTY" => libc::ENOTTY,
            "EFBIG" => libc::EFBIG,
            "ENOSPC" => libc::ENOSPC,
            "ESPIPE" => libc::ESPIPE,
            "EROFS" => libc::EROFS,
            "EMLINK" => libc::EMLINK,
            "EPIPE" => libc::EPIPE,
            "ERANGE" => libc::ERANGE,
            "ENAMETOOLONG" => libc::ENAMETOOLONG,
            "ENOSYS" => libc::ENOSYS,
            "ENOTEMPTY" => libc::ENOTEMPTY,
            "ELOOP" => libc::ELOOP,
            "ENODATA" => libc::ENODATA,
            "EOPNOTSUPP" => libc::EOPNOTSUPP,
            "ETIMEDOUT" => libc::ETIMEDOUT,
            "ECONNREFUSED" => libc::ECONNREFUSED,
            "EINPROGRESS" => libc::EINPROGRESS,
            other => panic!("{other} is not in this test"),
        };
        for &(n, name) in LINUX {
            assert_eq!(n, libc_of(name), "{name}");
        }
    }
}
