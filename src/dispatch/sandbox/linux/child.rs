//! What an agent's child process does on Linux between `fork` and `exec`, after the new
//! session: as root under bwrap, the staged binds and the unprivileged uid
//! ([`super::identity`]); death with deep-review, the control socket for the helper inside
//! bwrap and nothing else of deep-review's descriptors; without bwrap no capabilities and the
//! Landlock rules.

use std::sync::Arc;

use super::identity::Staging;
use super::landlock::{self, Prepared};
use crate::dispatch::descriptors;
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
    /// As root under bwrap: the granted paths to stage, and the uid to become, before bwrap.
    pub staging: Option<Arc<Staging>>,
}

impl ChildSteps {
    /// The steps of an agent without an OS sandbox: death with deep-review alone.
    pub fn plain() -> ChildSteps {
        ChildSteps {
            control_fd: None,
            landlock: None,
            last_cap: landlock::last_capability(),
            ignore_term: false,
            staging: None,
        }
    }

    /// Runs in the child: as root under bwrap the staged binds and the unprivileged uid first
    /// (a change of uid clears the parent-death signal, so it comes before it); death with
    /// deep-review's thread that started it, the control socket for the helper and no other
    /// descriptor of deep-review's; without bwrap, no capabilities and the Landlock rules.
    pub fn run(&self) -> std::io::Result<()> {
        if let Some(staging) = &self.staging {
            staging.enter()?;
        }
        self.place_descriptors()?;
        if let Some(landlock) = &self.landlock {
            landlock::drop_capabilities(self.last_cap)?;
            landlock.enforce()?;
        }
        Ok(())
    }

    /// Death with deep-review, the control socket at [`CONTROL_FD`], every other descriptor
    /// above the standard streams close-on-exec, TERM ignored by bwrap.
    fn place_descriptors(&self) -> std::io::Result<()> {
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
        let first_unpassed = match self.control_fd {
            Some(_) => CONTROL_FD + 1,
            None => descriptors::FIRST_AFTER_STDIO,
        };
        descriptors::close_from(first_unpassed)
    }
}
