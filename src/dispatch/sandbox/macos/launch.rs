//! The launch of an agent under Seatbelt, and what the child does on macOS between `fork` and
//! `exec` (nothing past the new session: `sandbox-exec` applies the profile itself).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::seatbelt::{Profile, SANDBOX_EXEC};
use crate::dispatch::sandbox::Layers;
use crate::dispatch::sandbox::launch::{AgentSandbox, Attempt, ChildSetup, Launch};
use crate::dispatch::sandbox::layers::Support;

/// macOS has no parent-death signal: agents' groups are listed with a watcher.
pub const NEEDS_WATCHER: bool = true;

/// What this Mac offers: `sandbox-exec` at its system path.
pub fn support() -> Support {
    let seatbelt = if Path::new(SANDBOX_EXEC).is_file() {
        Ok(PathBuf::from(SANDBOX_EXEC))
    } else {
        Err(format!("{SANDBOX_EXEC} is missing"))
    };
    Support {
        bwrap: Err("bubblewrap is Linux's sandbox".into()),
        landlock_abi: 0,
        seatbelt,
    }
}

/// The macOS steps after the new session: none (the profile is applied by `sandbox-exec`).
pub struct ChildSteps;

impl ChildSteps {
    /// The steps of an agent without an OS sandbox.
    pub fn plain() -> ChildSteps {
        ChildSteps
    }

    pub fn run(&self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The programs the macOS layer runs: `sandbox-exec`, by its fixed path ([`SANDBOX_EXEC`]).
pub struct Tools;

impl Tools {
    pub fn new(_layers: &Layers, _helper: Option<&Path>) -> Tools {
        Tools
    }

    /// The program an agent is started by.
    pub fn sandbox_exec(&self) -> &'static str {
        SANDBOX_EXEC
    }
}

/// No listener is made inside a Seatbelt sandbox: the proxy listens on the host.
pub enum Handoff {}

impl Handoff {
    pub async fn receive(self) -> Vec<(String, tokio::net::TcpListener)> {
        match self {}
    }
}

impl AgentSandbox {
    /// The launch of the macOS layer; the others are not made on macOS.
    pub(in crate::dispatch::sandbox) async fn launch_confined(
        &self,
        attempt: Attempt<'_>,
        _cwd: &Path,
    ) -> std::io::Result<Launch> {
        match self.layers() {
            Layers::Seatbelt => self.launch_seatbelt(attempt).await,
            other => Err(std::io::Error::other(format!(
                "the sandbox `{}` is not made on macOS",
                other.name()
            ))),
        }
    }

    /// `sandbox-exec -p PROFILE -D... -- PROGRAM ARGS`, with the proxy on the host's loopback.
    async fn launch_seatbelt(&self, mut attempt: Attempt<'_>) -> std::io::Result<Launch> {
        let (network, egress) = self.host_proxy(&mut attempt.env).await?;
        let profile = Profile::new(&self.grants, &egress);
        Ok(Launch {
            program: OsString::from(self.tools.sandbox_exec()),
            args: profile.command_args(attempt.program, attempt.args),
            env: attempt.env,
            setup: ChildSetup {
                steps: ChildSteps,
                rlimits: Some(self.rlimits),
            },
            network,
        })
    }
}
