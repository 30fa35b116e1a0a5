//! The launches of the Linux layers: bubblewrap with deep-review's helper inside (which makes
//! the agent's listeners in its network namespace and applies Landlock), and Landlock alone
//! (applied between `fork` and `exec`, with the proxy on the host's loopback).

use std::ffi::OsString;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::child::ChildSteps;
use super::identity::{self, Staging};
use super::inner;
use super::landlock::{self, Prepared, Rules};
use crate::dispatch::network::handoff;
use crate::dispatch::sandbox::launch::{
    AgentSandbox, Attempt, ChildSetup, Launch, Network, set_proxy_env,
};
use crate::dispatch::sandbox::{Egress, Layers};

/// The port of the proxy inside an agent's own network namespace (its loopback is its own, so
/// any port serves; a forwarded endpoint on the same port moves the proxy up).
const INNER_PROXY_PORT: u16 = 3128;
/// How long the helper inside bwrap may take to hand over the network.
const HANDOFF_TIMEOUT: Duration = Duration::from_secs(20);

impl AgentSandbox {
    /// The launch of the Linux layers; the others are not made on Linux ([`super::super::layers_for`]).
    pub(in crate::dispatch::sandbox) async fn launch_confined(
        &self,
        attempt: Attempt<'_>,
        cwd: &Path,
    ) -> std::io::Result<Launch> {
        match self.layers() {
            Layers::Bwrap { landlock_abi } => self.launch_bwrap(*landlock_abi, attempt, cwd),
            Layers::LandlockOnly { .. } => self.launch_landlock_only(attempt).await,
            other => Err(std::io::Error::other(format!(
                "the sandbox `{}` is not made on Linux",
                other.name()
            ))),
        }
    }

    /// bwrap runs deep-review's helper, which runs the agent: with a filtered network, the
    /// helper makes the proxy's and the forwards' listeners in the agent's namespace and hands
    /// them out over a socket pair.
    fn launch_bwrap(
        &self,
        landlock_abi: i32,
        mut attempt: Attempt<'_>,
        cwd: &Path,
    ) -> std::io::Result<Launch> {
        let proxy_port = inner_proxy_port(&self.activity.allowlist().loopback_ports());
        let egress = self.egress(proxy_port);
        let mut listen = Vec::new();
        if let Egress::ProxyOnly { proxy, forwarded } = &egress {
            set_proxy_env(&mut attempt.env, *proxy);
            listen = inner_listeners(*proxy, forwarded);
        }
        let filtered = egress.filtered();
        let request = inner::Request {
            listen,
            rules: (landlock_abi > 0).then(|| Rules::for_grants(&self.grants, &egress)),
            limits: Some(self.rlimits),
            program: attempt.program.into(),
            args: attempt.args.iter().map(OsString::from).collect(),
        };
        let bwrap = self
            .tools
            .bwrap
            .clone()
            .ok_or_else(|| std::io::Error::other("bwrap is not available"))?;
        let helper = self
            .tools
            .helper
            .clone()
            .ok_or_else(|| std::io::Error::other("deep-review's helper was not found"))?;
        // As root, bwrap runs as the agent's unprivileged uid, from the granted paths root
        // staged for it.
        let staging = identity::drops_root()
            .then(|| Staging::open(&super::bwrap::granted_sources(&self.grants)))
            .transpose()?
            .map(Arc::new);
        let mut full = super::bwrap::args(&self.grants, filtered, cwd, staging.is_some());
        full.push(helper.into_os_string());
        full.extend(request.to_args());
        let (control, child_end) = if filtered {
            let (ours, theirs) = UnixStream::pair()?;
            (Some(ours), Some(theirs))
        } else {
            (None, None)
        };
        Ok(Launch {
            program: bwrap.into_os_string(),
            args: full,
            env: attempt.env,
            setup: ChildSetup {
                steps: ChildSteps {
                    control_fd: child_end.as_ref().map(|s| s.as_raw_fd()),
                    landlock: None,
                    last_cap: landlock::last_capability(),
                    ignore_term: true,
                    staging,
                },
                // The helper inside sets them, the process limit in the sandbox's namespace.
                rlimits: None,
            },
            network: match (control, child_end) {
                (Some(control), Some(child_end)) => {
                    Network::Handoff(Handoff { control, child_end })
                }
                _ => Network::None,
            },
        })
    }

    /// Landlock alone, applied in the child before `exec`, with capabilities dropped; the
    /// proxy listens on the host and Landlock (ABI 4) limits TCP to its port and the forwards'.
    async fn launch_landlock_only(&self, mut attempt: Attempt<'_>) -> std::io::Result<Launch> {
        let (network, egress) = self.host_proxy(&mut attempt.env).await?;
        let ruleset = Rules::for_grants(&self.grants, &egress)
            .build()
            .map_err(std::io::Error::other)?;
        Ok(Launch {
            program: attempt.program.into(),
            args: attempt.args.iter().map(OsString::from).collect(),
            env: attempt.env,
            setup: ChildSetup {
                steps: ChildSteps {
                    control_fd: None,
                    landlock: Some(Arc::new(Prepared::new(ruleset))),
                    last_cap: landlock::last_capability(),
                    ignore_term: false,
                    staging: None,
                },
                rlimits: Some(self.rlimits),
            },
            network,
        })
    }
}

/// The programs the Linux layers run: bwrap, and deep-review's helper inside it.
pub struct Tools {
    bwrap: Option<PathBuf>,
    helper: Option<PathBuf>,
}

impl Tools {
    /// bwrap when `layers` use it (as probed), and the helper deep-review was given.
    pub fn new(layers: &Layers, helper: Option<&Path>) -> Tools {
        let bwrap = match layers {
            Layers::Bwrap { .. } => crate::dispatch::sandbox::support().bwrap.clone().ok(),
            _ => None,
        };
        Tools {
            bwrap,
            helper: helper.map(Path::to_path_buf),
        }
    }
}

/// The listeners the helper makes inside bwrap: the proxy, and each forwarded loopback port on
/// IPv4 and IPv6.
fn inner_listeners(proxy_port: u16, loopback_ports: &[u16]) -> Vec<(String, SocketAddr)> {
    let mut listen = vec![(
        "proxy".to_string(),
        SocketAddr::from((Ipv4Addr::LOCALHOST, proxy_port)),
    )];
    for port in loopback_ports {
        for ip in [
            SocketAddr::from((Ipv4Addr::LOCALHOST, *port)),
            SocketAddr::from((Ipv6Addr::LOCALHOST, *port)),
        ] {
            listen.push((format!("forward:{port}"), ip));
        }
    }
    listen
}

/// The proxy's port inside the namespace: 3128, or the next one no forward uses.
fn inner_proxy_port(forwarded: &[u16]) -> u16 {
    (INNER_PROXY_PORT..u16::MAX)
        .find(|p| !forwarded.contains(p))
        .unwrap_or(INNER_PROXY_PORT)
}

/// The socket pair over which the helper inside bwrap hands out the listeners it made.
pub struct Handoff {
    control: UnixStream,
    child_end: UnixStream,
}

impl Handoff {
    /// The listeners, once the spawned helper has sent them (none if it failed: the agent then
    /// has no network at all, and its own error says so).
    pub async fn receive(self) -> Vec<(String, tokio::net::TcpListener)> {
        // Our copy of the child's end goes, so the helper's exit closes the pair.
        drop(self.child_end);
        let control = self.control;
        let received =
            tokio::task::spawn_blocking(move || handoff::receive(&control, HANDOFF_TIMEOUT))
                .await
                .map_err(std::io::Error::other)
                .and_then(|r| r);
        received
            .into_iter()
            .flatten()
            .filter_map(|(name, listener)| {
                listener
                    .set_nonblocking(true)
                    .and_then(|()| tokio::net::TcpListener::from_std(listener))
                    .ok()
                    .map(|listener| (name, listener))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inner_proxy_port_avoids_forwarded_ports() {
        assert_eq!(inner_proxy_port(&[]), 3128);
        assert_eq!(inner_proxy_port(&[3128, 3129]), 3130);
    }
}
