//! One agent's sandbox, put together: prepared once per run (its throwaway home, what it may
//! reach, its allowlist), then turned into the command line, environment and child set-up of
//! each attempt, and the network deep-review serves it while it runs.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::home::StateHome;
use super::platform::{ChildSteps, Handoff, Tools};
use super::rlimits::Rlimits;
use super::{AgentPlaces, Egress, Grants, Layers, unavailable_sentence};
use crate::dispatch::network::proxy::{self, Upstream};
use crate::dispatch::network::{Activity, Allowlist};
use crate::types::{NetworkMode, NetworkRecord};

/// One agent's sandbox for the whole run: every attempt is launched from it (by the launch of
/// its layers, in the platform's module).
pub struct AgentSandbox {
    layers: Layers,
    pub(super) grants: Grants,
    home: StateHome,
    pub(super) network: NetworkMode,
    /// The programs the platform's layers run (bwrap and the helper on Linux).
    pub(super) tools: Tools,
    pub(super) activity: Arc<Activity>,
    upstream: Option<Upstream>,
    /// The agent's limits, as its processes get them.
    pub(super) rlimits: Rlimits,
}

/// One attempt's command, before the sandbox wraps it.
pub(super) struct Attempt<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    pub env: BTreeMap<OsString, OsString>,
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
        let created = grants.ensure_dirs();
        // As root, bwrap runs the agent as an unprivileged uid: what it must own becomes its.
        #[cfg(target_os = "linux")]
        if matches!(layers, Layers::Bwrap { .. }) && super::linux::identity::drops_root() {
            super::linux::identity::prepare_for_agent(&grants, places, &created)?;
        }
        #[cfg(not(target_os = "linux"))]
        let _ = created;
        Ok(AgentSandbox {
            grants,
            home,
            network: spec.network,
            tools: Tools::new(&layers, places.helper),
            activity: Arc::new(Activity::new(agent_dir, Allowlist::for_agent(spec, env))),
            upstream: Upstream::from_env(&user_env),
            rlimits: Rlimits::new(&spec.limits),
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
            (_, Layers::Bwrap { .. } | Layers::Seatbelt) => "allowlist",
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
        env: BTreeMap<OsString, OsString>,
    ) -> std::io::Result<Launch> {
        let attempt = Attempt { program, args, env };
        match &self.layers {
            Layers::None { .. } => self.launch_unconfined(attempt).await,
            Layers::Unavailable { why } => Err(std::io::Error::other(unavailable_sentence(why))),
            _ => self.launch_confined(attempt, cwd).await,
        }
    }

    /// An attempt with no OS sandbox: the agent's own command, the proxy on the host.
    async fn launch_unconfined(&self, mut attempt: Attempt<'_>) -> std::io::Result<Launch> {
        let (network, _) = self.host_proxy(&mut attempt.env).await?;
        Ok(Launch {
            program: attempt.program.into(),
            args: attempt.args.iter().map(OsString::from).collect(),
            env: attempt.env,
            setup: ChildSetup {
                steps: ChildSteps::plain(),
                rlimits: Some(self.rlimits),
            },
            network,
        })
    }

    /// Without a network namespace, the filtering proxy listens on the host's loopback on a
    /// port of its own and `env` points at it; an open network gets none.
    pub(super) async fn host_proxy(
        &self,
        env: &mut BTreeMap<OsString, OsString>,
    ) -> std::io::Result<(Network, Egress)> {
        if self.network != NetworkMode::Provider {
            return Ok((Network::None, Egress::Open));
        }
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let port = listener.local_addr()?.port();
        set_proxy_env(env, port);
        Ok((Network::HostProxy(listener), self.egress(port)))
    }

    /// Where the agent may connect with the proxy on `proxy_port`: there and to its forwarded
    /// loopback endpoints, or anywhere with an open network.
    pub(super) fn egress(&self, proxy_port: u16) -> Egress {
        match self.network {
            NetworkMode::Provider => Egress::ProxyOnly {
                proxy: proxy_port,
                forwarded: self.activity.allowlist().loopback_ports(),
            },
            _ => Egress::Open,
        }
    }

    /// Starts serving the network of a spawned attempt; what it returns stops it when dropped.
    pub async fn serve(&self, network: Network) -> Serving {
        let egress = Arc::new(proxy::Egress {
            activity: Arc::clone(&self.activity),
            upstream: self.upstream.clone(),
        });
        let mut tasks = Vec::new();
        match network {
            Network::None => {}
            Network::HostProxy(listener) => {
                tasks.push(tokio::spawn(proxy::serve_proxy(listener, egress)));
            }
            Network::Handoff(handoff) => {
                // Without its listeners the agent has no network at all; its own error says so.
                for (name, listener) in handoff.receive().await {
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

/// Points every proxy variable at deep-review's proxy on `port`; loopback goes direct (to a
/// forward, or to the host's own endpoint without bwrap).
pub(super) fn set_proxy_env(env: &mut BTreeMap<OsString, OsString>, port: u16) {
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
    /// The helper inside bwrap makes the listeners and hands them out once spawned.
    Handoff(Handoff),
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
    pub(super) steps: ChildSteps,
    /// The agent's memory and CPU limits, set here when no helper sets them inside the sandbox.
    pub(super) rlimits: Option<Rlimits>,
}

impl ChildSetup {
    /// Runs in the child: a new session (no controlling terminal: `/dev/tty` cannot be opened,
    /// and the group deep-review stops is the session's), the memory and CPU limits, then this
    /// platform's steps.
    pub fn run(&self) -> std::io::Result<()> {
        // SAFETY: setsid has no arguments; async-signal-safe.
        if unsafe { libc::setsid() } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if let Some(rlimits) = &self.rlimits {
            rlimits.apply_memory_and_cpu()?;
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
