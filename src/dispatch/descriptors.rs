//! Nothing but what deep-review means to hand a program reaches it. A descriptor that
//! deep-review's own parent left open without close-on-exec (a file it had open, the user's
//! terminal, a CI runner's pipe) would otherwise pass through deep-review into every agent,
//! git process and helper it starts, past every sandbox layer: a sandbox confines what a
//! process may open, not what it was given open.
//!
//! So deep-review marks every inherited descriptor above the standard streams close-on-exec
//! when it starts ([`close_inherited`]), and each agent's child marks them again just before
//! `exec` ([`close_from`]), after the descriptors it does mean to pass (the control socket of
//! the sandbox helper) are in place. Marking rather than closing keeps the descriptor the
//! standard library's `spawn` uses to report a failed `exec`; `exec` closes them all.

/// The first descriptor after standard input, output and error.
pub const FIRST_AFTER_STDIO: i32 = 3;

/// Marks every descriptor from `first` on close-on-exec. Async-signal-safe (system calls
/// only), for the child between `fork` and `exec`. On Linux one `close_range` call; elsewhere,
/// or on a kernel older than 5.11, each descriptor below the process's limit in turn.
pub fn close_from(first: i32) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
        // SAFETY: close_range with integers only.
        let done = unsafe {
            libc::syscall(
                libc::SYS_close_range,
                first as libc::c_uint,
                libc::c_uint::MAX,
                CLOSE_RANGE_CLOEXEC,
            )
        };
        if done == 0 {
            return Ok(());
        }
    }
    mark_each_from(first)
}

/// The most descriptors the one-by-one fallback walks: a process limit of millions would
/// otherwise make each spawn a second's work.
const FALLBACK_WALK_LIMIT: i32 = 1 << 16;

/// The portable fallback of [`close_from`]: `fcntl` on each descriptor below the limit.
fn mark_each_from(first: i32) -> std::io::Result<()> {
    // SAFETY: getrlimit into a stack value, fcntl with integers.
    unsafe {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        let last = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            i32::try_from(limit.rlim_cur).unwrap_or(i32::MAX)
        } else {
            FALLBACK_WALK_LIMIT
        }
        .min(FALLBACK_WALK_LIMIT);
        for fd in first..last {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
    Ok(())
}

/// Marks every descriptor deep-review inherited above the standard streams close-on-exec, so
/// that no process it starts gets one. Called first thing in `main`.
pub fn close_inherited() {
    let _ = close_from(FIRST_AFTER_STDIO);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn cloexec(fd: i32) -> bool {
        // SAFETY: fcntl F_GETFD on a descriptor this test owns.
        unsafe { libc::fcntl(fd, libc::F_GETFD) & libc::FD_CLOEXEC != 0 }
    }

    #[test]
    fn inherited_descriptors_are_marked_and_the_fallback_does_the_same() {
        let file = tempfile::tempfile().unwrap();
        let fd = file.as_raw_fd();
        for mark in [close_from, mark_each_from] {
            // SAFETY: clears the flag of a descriptor this test owns.
            unsafe { libc::fcntl(fd, libc::F_SETFD, 0) };
            assert!(!cloexec(fd));
            mark(fd).unwrap();
            assert!(cloexec(fd), "descriptor {fd} would be inherited");
        }
    }
}
