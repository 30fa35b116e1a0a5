//! One agent's sandbox, put together: prepared once per run (its throwaway home, what it may
//! reach, its allowlist), then turned into the command line, environment and child set-up of
//! each attempt, and the network deep-review serves it while it runs.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::home::StateHome;
use super::linux::child::ChildSteps;
use super::linux::inner;
use super::linux::landlock::{self, Prepared, Rules};
use super::{AgentPlaces, Grants, Layers};
use crate::dispatch::network::handoff;
use crate::dispatch::network::proxy::{self, Egress, Upstream};
use crate::dispatch::network::{Activity, Allowlist};
use crate::types::{NetworkMode, NetworkRecord};

/// The port of the proxy inside an agent's own network namespace (its loopback is its own, so
/// any port serves; a forwarded endpoint on the same port moves the proxy up).
const INNER_PROXY_PORT: u16 = 3128;
/// How long the helper inside bwrap may take to hand over the network.
const HANDOFF_TIMEOUT: Duration = Duration::from_secs(20);

/// One agent's sandbox for the whole run: every attempt is launched from it.
pub struct AgentSandbox {
    layers: Layers,
    grants: Grants,
    home: StateHome,
    network: NetworkMode,
    helper: Option<PathBuf>,
    bwrap: Option<PathBuf>,
    activity: Arc<Activity>,
    upstream: Option<Upstream>,
}

impl AgentSandbox {
    /// Readies `places.spec`'s sandbox: its throwaway home under `work_root`, the paths it may
    /// reach and its allowlist (from the environment it will get, `env`), logging to
    /// `agent_dir`.
    pub fn prepare(
        layers: Layers,
        places: &AgentPlaces<'_>,
        env: &BTreeMap<OsString, OsString>,
        agent_dir: &Path,
    ) -> std::io::Result<AgentSandbox> {
        let spec = places.spec;
        let user_env = |name: &str| std::env::var(name).ok();
        let home = StateHome::create(
            places.home,
            spec.kind,
            &user_env,
            &[places.checkout, places.repo],
        )?;
        let grants = Grants::for_agent(places);
        grants.ensure_dirs();
        let bwrap = match &layers {
            Layers::Bwrap { .. } => super::support().bwrap.clone().ok(),
            _ => None,
        };
        Ok(AgentSandbox {
            grants,
            home,
            network: spec.network,
            helper: places.helper.map(Path::to_path_buf),
            bwrap,
            activity: Arc::new(Activity::new(agent_dir, Allowlist::for_agent(spec, env))),
            upstream: Upstream::from_env(&user_env),
            layers,
        })
    }

    /// The layers, as the report names them.
    pub fn layers(&self) -> &Layers {
        &self.layers
    }

    /// The variables the sandbox sets over the agent's own: its throwaway home.
    pub fn home_env(&self) -> &BTreeMap<String, String> {
        &self.home.env
    }

    /// What the report and `meta.json` say of the agent's network.
    pub fn network_record(&self) -> NetworkRecord {
        let mode = match (self.network, &self.layers) {
            (NetworkMode::Open, _) => "open",
            (_, Layers::Bwrap { .. }) => "allowlist",
            (_, Layers::LandlockOnly { abi }) if *abi >= 4 => "allowlist by TCP port",
            _ => "proxy variables only",
        };
        let mut record = self.activity.record_for_report(mode);
        if self.network == NetworkMode::Open {
            record.allowed_hosts.clear();
        }
        record
    }

    /// Everything one attempt of `program args` in `cwd` needs, with `env` as the agent's
    /// environment (to which the proxy's variables are added here).
    pub async fn launch(
        &self,
        program: &str,
        args: &[String],
        cwd: &Path,
        mut env: BTreeMap<OsString, OsString>,
    ) -> std::io::Result<Launch> {
        let filtered = self.network == NetworkMode::Provider;
        let loopback_ports = self.activity.allowlist().loopback_ports();
        match &self.layers {
            Layers::Bwrap { landlock_abi } => {
                let proxy_port = inner_proxy_port(&loopback_ports);
                if filtered {
                    set_proxy_env(&mut env, proxy_port);
                }
                let mut listen = Vec::new();
                if filtered {
                    listen.push((
                        "proxy".to_string(),
                        SocketAddr::from((Ipv4Addr::LOCALHOST, proxy_port)),
                    ));
                    for port in &loopback_ports {
                        for ip in [
                            SocketAddr::from((Ipv4Addr::LOCALHOST, *port)),
                            SocketAddr::from((Ipv6Addr::LOCALHOST, *port)),
                        ] {
                            listen.push((format!("forward:{port}"), ip));
                        }
                    }
                }
                let connect = filtered.then(|| {
                    let mut ports = loopback_ports.clone();
                    ports.push(proxy_port);
                    ports
                });
                let request = inner::Request {
                    listen,
                    rules: (*landlock_abi > 0).then(|| Rules::for_grants(&self.grants, connect)),
                    program: program.into(),
                    args: args.iter().map(OsString::from).collect(),
                };
                let bwrap = self
                    .bwrap
                    .clone()
                    .ok_or_else(|| std::io::Error::other("bwrap is not available"))?;
                let helper = self
                    .helper
                    .clone()
                    .ok_or_else(|| std::io::Error::other("deep-review's helper was not found"))?;
                let mut full = super::linux::bwrap::args(&self.grants, filtered, cwd);
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
                    env,
                    setup: ChildSetup {
                        steps: ChildSteps {
                            control_fd: child_end.as_ref().map(|s| s.as_raw_fd()),
                            landlock: None,
                            last_cap: landlock::last_capability(),
                            ignore_term: true,
                        },
                    },
                    network: match (control, child_end) {
                        (Some(control), Some(child_end)) => Network::Handoff { control, child_end },
                        _ => Network::None,
                    },
                })
            }
            Layers::LandlockOnly { .. } | Layers::None { .. } => {
                let (network, proxy_port) = if filtered {
                    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
                    let port = listener.local_addr()?.port();
                    set_proxy_env(&mut env, port);
                    (Network::HostProxy(listener), Some(port))
                } else {
                    (Network::None, None)
                };
                let landlock = match &self.layers {
                    Layers::LandlockOnly { .. } => {
                        let connect = proxy_port.map(|port| {
                            let mut ports = loopback_ports.clone();
                            ports.push(port);
                            ports
                        });
                        let ruleset = Rules::for_grants(&self.grants, connect)
                            .build()
                            .map_err(std::io::Error::other)?;
                        Some(Arc::new(Prepared::new(ruleset)))
                    }
                    _ => None,
                };
                Ok(Launch {
                    program: program.into(),
                    args: args.iter().map(OsString::from).collect(),
                    env,
                    setup: ChildSetup {
                        steps: ChildSteps {
                            control_fd: None,
                            landlock,
                            last_cap: landlock::last_capability(),
                            ignore_term: false,
                        },
                    },
                    network,
                })
            }
        }
    }

    /// Starts serving the network of a spawned attempt; what it returns stops it when dropped.
    pub async fn serve(&self, network: Network) -> Serving {
        let egress = Arc::new(Egress {
            activity: Arc::clone(&self.activity),
            upstream: self.upstream.clone(),
        });
        let mut tasks = Vec::new();
        match network {
            Network::None => {}
            Network::HostProxy(listener) => {
                tasks.push(tokio::spawn(proxy::serve_proxy(listener, egress)));
            }
            Network::Handoff { control, child_end } => {
                // Our copy of the child's end goes, so the helper's exit closes the pair.
                drop(child_end);
                let received = tokio::task::spawn_blocking(move || {
                    handoff::receive(&control, HANDOFF_TIMEOUT)
                })
                .await
                .map_err(std::io::Error::other)
                .and_then(|r| r);
                // Without its listeners the agent has no network at all; its own error says so.
                for (name, listener) in received.into_iter().flatten() {
                    let Ok(listener) = listener
                        .set_nonblocking(true)
                        .and_then(|()| tokio::net::TcpListener::from_std(listener))
                    else {
                        continue;
                    };
                    let egress = Arc::clone(&egress);
                    tasks.push(match name.strip_prefix("forward:") {
                        Some(port) => {
                            let port = port.parse().unwrap_or(0);
                            tokio::spawn(proxy::serve_forward(listener, port, egress))
                        }
                        None => tokio::spawn(proxy::serve_proxy(listener, egress)),
                    });
                }
            }
        }
        Serving(tasks)
    }
}

/// The proxy's port inside the namespace: 3128, or the next one no forward uses.
fn inner_proxy_port(forwarded: &[u16]) -> u16 {
    (INNER_PROXY_PORT..u16::MAX)
        .find(|p| !forwarded.contains(p))
        .unwrap_or(INNER_PROXY_PORT)
}

/// Points every proxy variable at deep-review's proxy on `port`; loopback goes direct (to a
/// forward, or to the host's own endpoint without bwrap).
fn set_proxy_env(env: &mut BTreeMap<OsString, OsString>, port: u16) {
    let url = OsString::from(format!("http://127.0.0.1:{port}"));
    for var in [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        env.insert(var.into(), url.clone());
    }
    for var in ["NO_PROXY", "no_proxy"] {
        env.insert(var.into(), "localhost,127.0.0.1,::1".into());
    }
}

/// One attempt, ready to spawn.
pub struct Launch {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub env: BTreeMap<OsString, OsString>,
    pub setup: ChildSetup,
    pub network: Network,
}

/// The network an attempt is served once spawned.
pub enum Network {
    None,
    /// A proxy deep-review listens for on the host (without bwrap).
    HostProxy(tokio::net::TcpListener),
    /// The helper inside bwrap makes the listeners and sends them over `control`.
    Handoff {
        control: UnixStream,
        child_end: UnixStream,
    },
}

/// Stops an attempt's network when dropped.
pub struct Serving(Vec<tokio::task::JoinHandle<()>>);

impl Drop for Serving {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// What the child does between `fork` and `exec`: system calls only (async-signal-safe).
pub struct ChildSetup {
    /// What this platform adds to the new session.
    steps: ChildSteps,
}

impl ChildSetup {
    /// Runs in the child: a new session (no controlling terminal: `/dev/tty` cannot be opened,
    /// and the group deep-review stops is the session's), then this platform's steps.
    pub fn run(&self) -> std::io::Result<()> {
        // SAFETY: setsid has no arguments; async-signal-safe.
        if unsafe { libc::setsid() } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        self.steps.run()
    }
}

/// The throwaway home directory of `spec` under `work_root`.
pub fn home_dir(work_root: &Path, dir_name: &str) -> PathBuf {
    work_root.join(format!("home-{dir_name}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn the_inner_proxy_port_avoids_forwarded_ports() {
        assert_eq!(inner_proxy_port(&[]), 3128);
        assert_eq!(inner_proxy_port(&[3128, 3129]), 3130);
    }

    #[test]
    fn every_proxy_variable_points_at_the_proxy_and_loopback_goes_direct() {
        let mut env = BTreeMap::new();
        env.insert(
            OsString::from("HTTPS_PROXY"),
            OsString::from("http://corp:1"),
        );
        set_proxy_env(&mut env, 4000);
        assert_eq!(env[OsStr::new("HTTPS_PROXY")], "http://127.0.0.1:4000");
        assert_eq!(env[OsStr::new("all_proxy")], "http://127.0.0.1:4000");
        assert_eq!(env[OsStr::new("NO_PROXY")], "localhost,127.0.0.1,::1");
    }
}
