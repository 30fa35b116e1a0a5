//! What an agent's child process does on Linux between `fork` and `exec`, after the new
//! session: death with deep-review, the control socket for the helper inside bwrap, and
//! without bwrap no capabilities and the Landlock rules.

use std::sync::Arc;

use super::landlock::{self, Prepared};
use crate::dispatch::network::handoff::CONTROL_FD;

/// The Linux steps of [`crate::dispatch::sandbox::launch::ChildSetup`].
pub struct ChildSteps {
    /// The control socket to put at [`CONTROL_FD`] for the helper inside bwrap.
    pub control_fd: Option<i32>,
    /// Landlock to apply here (no bwrap).
    pub landlock: Option<Arc<Prepared>>,
    pub last_cap: u32,
    /// bwrap is the program: it ignores TERM. A TERM that killed bwrap would take the agent's
    /// PID namespace down with SIGKILL at once; ignored, the group's TERM reaches the agent
    /// alone (the helper inside restores TERM's default before it runs the agent), which can
    /// flush and exit, and bwrap exits with it. KILL, after the grace period, still ends all.
    pub ignore_term: bool,
}

impl ChildSteps {
    /// The steps of an agent without an OS sandbox: death with deep-review alone.
    pub fn plain() -> ChildSteps {
        ChildSteps {
            control_fd: None,
            landlock: None,
            last_cap: landlock::last_capability(),
            ignore_term: false,
        }
    }

    /// Runs in the child: death with deep-review's thread that started it, the control socket
    /// for the helper; without bwrap, no capabilities and the Landlock rules.
    pub fn run(&self) -> std::io::Result<()> {
        // SAFETY: prctl, dup2, fcntl and signal with integers; async-signal-safe.
        unsafe {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            );
            // dup2 onto itself keeps close-on-exec: a socket already at CONTROL_FD has the
            // flag cleared instead, or the helper would find nothing there.
            let placed = match self.control_fd {
                Some(fd) if fd == CONTROL_FD => libc::fcntl(fd, libc::F_SETFD, 0),
                Some(fd) => libc::dup2(fd, CONTROL_FD),
                None => 0,
            };
            if placed < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if self.ignore_term && libc::signal(libc::SIGTERM, libc::SIG_IGN) == libc::SIG_ERR {
                return Err(std::io::Error::last_os_error());
            }
        }
        if let Some(landlock) = &self.landlock {
            landlock::drop_capabilities(self.last_cap)?;
            landlock.enforce()?;
        }
        Ok(())
    }
}
