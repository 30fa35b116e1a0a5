//! Where an agent may connect: its own provider, and nothing else.
//!
//! An agent holds its provider's key and reads text written by the change's author; with an open
//! network it could send the code and the key anywhere. So under bubblewrap an agent's network
//! namespace has only a loopback device, and on it deep-review listens (the sockets are made
//! inside the namespace by the helper and handed out, [`handoff`]): a filtering HTTP proxy
//! (`HTTPS_PROXY` points at it) and, for each local endpoint the agent is allowed (a model server
//! on `127.0.0.1:PORT`), a forward of that port. The proxy ([`proxy`]) lets a connection through
//! only to a host of the [`Allowlist`], and logs every connection, refused or not, in the agent's
//! folder of the run bundle (`network.jsonl`); the report counts the refused ones.
//!
//! The allowlist of an agent is its kind's provider (the API host and its login hosts), the base
//! URLs its environment or its CLI's own configuration names (`ANTHROPIC_BASE_URL`, a Codex
//! provider's `base_url`, `GOOGLE_GEMINI_BASE_URL`), and what the trusted config adds per agent
//! (`network_allow`). `network = "open"` gives an agent the host's network, and the report says
//! so.

#[cfg(target_os = "linux")]
pub mod handoff;
pub mod proxy;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use crate::types::{AgentKind, AgentSpec, NetworkRecord};

/// The provider hosts of each agent CLI: the API, and the hosts its login talks to.
fn provider_hosts(kind: AgentKind) -> &'static [&'static str] {
    match kind {
        AgentKind::Claude => &[
            "api.anthropic.com",
            "console.anthropic.com",
            "platform.claude.com",
            "claude.ai",
        ],
        AgentKind::Codex => &["api.openai.com", "auth.openai.com", "chatgpt.com"],
        AgentKind::Gemini => &[
            "generativelanguage.googleapis.com",
            "cloudcode-pa.googleapis.com",
            "oauth2.googleapis.com",
            "accounts.google.com",
            "www.googleapis.com",
        ],
        _ => &[],
    }
}

/// The variables that point a CLI at another endpoint of its provider.
fn base_url_variables(kind: AgentKind) -> &'static [&'static str] {
    match kind {
        AgentKind::Claude => &["ANTHROPIC_BASE_URL"],
        AgentKind::Codex => &["OPENAI_BASE_URL"],
        AgentKind::Gemini => &[
            "GOOGLE_GEMINI_BASE_URL",
            "GOOGLE_VERTEX_BASE_URL",
            "CODE_ASSIST_ENDPOINT",
        ],
        _ => &[],
    }
}

/// One allowed destination.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Destination {
    /// A host name (lower case) or a `*.`-pattern, or an IP literal.
    host: String,
    /// `None`: 443 and 80.
    port: Option<u16>,
}

impl Destination {
    fn matches(&self, host: &str, port: u16) -> bool {
        let port_ok = match self.port {
            Some(p) => p == port,
            None => port == 443 || port == 80,
        };
        let host_ok = match self.host.strip_prefix("*.") {
            Some(domain) => host.len() > domain.len() + 1 && host.ends_with(&format!(".{domain}")),
            None => self.host == host,
        };
        port_ok && host_ok
    }

    fn describe(&self) -> String {
        match self.port {
            Some(port) if self.host.contains(':') => format!("[{}]:{port}", self.host),
            Some(port) => format!("{}:{port}", self.host),
            None => self.host.clone(),
        }
    }
}

/// The hosts one agent may reach.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlist {
    destinations: Vec<Destination>,
}

impl Allowlist {
    /// The allowlist of `spec`, whose environment (after the allowlist of variables and
    /// config's `env`) is `env`.
    pub fn for_agent(spec: &AgentSpec, env: &BTreeMap<OsString, OsString>) -> Allowlist {
        let mut list = Allowlist::default();
        // The providers over HTTPS only: on port 80 a CDN in front of them routes by the
        // request's `Host`, which would carry data to any site it serves.
        for host in provider_hosts(spec.kind) {
            list.push(host, Some(443));
        }
        for var in base_url_variables(spec.kind) {
            if let Some(url) = env.get(&OsString::from(var)).and_then(|v| v.to_str()) {
                list.push_url(url);
            }
        }
        for url in crate::dispatch::environment::codex_provider_settings(spec, "base_url") {
            list.push_url(&url);
        }
        for entry in &spec.network_allow {
            list.push_entry(entry);
        }
        list
    }

    /// Adds a host with an optional port.
    fn push(&mut self, host: &str, port: Option<u16>) {
        let host = normalize_host(host);
        if host.is_empty() {
            return;
        }
        let dest = Destination { host, port };
        if !self.destinations.contains(&dest) {
            self.destinations.push(dest);
        }
    }

    /// Adds the host and port of a URL (`http://127.0.0.1:8080/v1`).
    fn push_url(&mut self, url: &str) {
        if let Ok(url) = reqwest::Url::parse(url.trim())
            && let Some(host) = url.host_str()
        {
            self.push(host, url.port_or_known_default());
        }
    }

    /// Adds a config entry: a URL, `host:port`, `host` or `*.domain`.
    fn push_entry(&mut self, entry: &str) {
        let entry = entry.trim();
        if entry.contains("://") {
            return self.push_url(entry);
        }
        match entry.rsplit_once(':') {
            Some((host, port)) if !host.contains(':') || host.starts_with('[') => {
                match port.parse::<u16>() {
                    Ok(port) => self.push(host, Some(port)),
                    Err(_) => self.push(entry, None),
                }
            }
            _ => self.push(entry, None),
        }
    }

    /// Whether `host:port` may be reached.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        let host = normalize_host(host);
        self.destinations.iter().any(|d| d.matches(&host, port))
    }

    /// The allowed endpoints on the loopback interface, by port: they are forwarded into the
    /// agent's own network namespace, whose loopback is its own.
    pub fn loopback_ports(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = self
            .destinations
            .iter()
            .filter(|d| is_loopback(&d.host))
            .filter_map(|d| d.port)
            .collect();
        ports.sort_unstable();
        ports.dedup();
        ports
    }

    /// Every destination, as the report and `deep-review agents` print them.
    pub fn describe(&self) -> Vec<String> {
        self.destinations
            .iter()
            .map(Destination::describe)
            .collect()
    }
}

/// Lower case, without brackets or a trailing dot.
fn normalize_host(host: &str) -> String {
    host.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// Whether a host names this machine's loopback interface.
pub fn is_loopback(host: &str) -> bool {
    let host = normalize_host(host);
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// An agent's network in a few words, for the retro table: `allowlist, 2 refused`.
pub fn summary(record: &NetworkRecord) -> String {
    match record.refused {
        0 => record.mode.clone(),
        n => format!("{}, {n} refused", record.mode),
    }
}

/// The run notes about agents' networks: each agent that had connections refused (with where
/// they went) and each that ran on the open network.
pub fn notes(runs: &[crate::types::RawReview], bundle_id: &str) -> Vec<String> {
    let mut notes = Vec::new();
    for run in runs {
        let Some(net) = &run.network else { continue };
        let name = crate::text::printable_line(run.display_name.as_deref().unwrap_or(&run.agent));
        if net.mode == "open" {
            notes.push(format!(
                "Network: {name} ran with the host's network (`network = \"open\"` in config): its connections were not filtered"
            ));
        }
        if net.refused > 0 {
            notes.push(format!(
                "Network: {name}'s sandbox refused {} connection{} ({}); each is in runs/{bundle_id}/{}/{}",
                net.refused,
                if net.refused == 1 { "" } else { "s" },
                net.refused_hosts.join(", "),
                crate::dispatch::backend::commands::safe_name(&run.agent),
                crate::bundle::NETWORK_FILE
            ));
        }
    }
    notes
}

/// The most lines one agent's `network.jsonl` gets: past it only the counts grow.
const LOG_LINES: u64 = 2_000;

/// One connection as `network.jsonl` records it.
#[derive(Debug, Serialize)]
struct LogLine<'a> {
    at: String,
    host: &'a str,
    port: u16,
    allowed: bool,
    /// `proxy` (CONNECT or a plain-HTTP request) or `forward` (a local endpoint's port).
    via: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

/// What one agent's connections did: the log file and the counts the report shows.
pub struct Activity {
    log: Mutex<Option<std::fs::File>>,
    allowed: AtomicU64,
    refused: AtomicU64,
    refused_hosts: Mutex<Vec<String>>,
    allowlist: Allowlist,
}

/// The distinct refused destinations kept for the report.
const REFUSED_HOSTS_KEPT: usize = 8;

impl Activity {
    /// Starts the log at `agent_dir/network.jsonl` (appending: retries add to it).
    pub fn new(agent_dir: &Path, allowlist: Allowlist) -> Activity {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(agent_dir.join(crate::bundle::NETWORK_FILE))
            .ok();
        Activity {
            log: Mutex::new(log),
            allowed: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            refused_hosts: Mutex::new(Vec::new()),
            allowlist,
        }
    }

    pub fn allowlist(&self) -> &Allowlist {
        &self.allowlist
    }

    /// Records one connection.
    pub fn record(&self, host: &str, port: u16, allowed: bool, via: &str, reason: Option<&str>) {
        // The agent chose the host name: a key put into it is hidden like any other, here
        // before JSON escapes could change a secret's characters.
        let host = crate::redact::redact(host);
        let counter = if allowed {
            &self.allowed
        } else {
            &self.refused
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if !allowed && let Ok(mut hosts) = self.refused_hosts.lock() {
            let dest = format!("{}:{port}", crate::text::printable_line(&host));
            if hosts.len() < REFUSED_HOSTS_KEPT && !hosts.contains(&dest) {
                hosts.push(dest);
            }
        }
        let total = self.allowed.load(Ordering::Relaxed) + self.refused.load(Ordering::Relaxed);
        if total > LOG_LINES {
            return;
        }
        let line = LogLine {
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            host: &host,
            port,
            allowed,
            via,
            reason,
        };
        if let (Ok(mut log), Ok(text)) = (self.log.lock(), serde_json::to_string(&line))
            && let Some(file) = log.as_mut()
        {
            let _ = writeln!(file, "{text}");
        }
    }

    /// The record the report and `meta.json` carry.
    pub fn record_for_report(&self, mode: &str) -> NetworkRecord {
        NetworkRecord {
            mode: mode.to_string(),
            allowed_hosts: self.allowlist.describe(),
            connections: self.allowed.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            refused_hosts: self
                .refused_hosts
                .lock()
                .map(|h| h.clone())
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<OsString, OsString> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn an_agent_reaches_its_provider_its_base_url_and_what_config_adds() {
        let mut claude = AgentSpec::new("claude", "claude");
        claude.network_allow = vec![
            "proxy.corp.example:8443".into(),
            "*.internal.example".into(),
            "https://gw.example/v1".into(),
        ];
        let list = Allowlist::for_agent(
            &claude,
            &env(&[("ANTHROPIC_BASE_URL", "http://127.0.0.1:4567")]),
        );
        assert!(list.allows("api.anthropic.com", 443));
        assert!(list.allows("API.Anthropic.com.", 443));
        assert!(!list.allows("api.anthropic.com", 22));
        assert!(list.allows("127.0.0.1", 4567));
        assert!(!list.allows("127.0.0.1", 4568));
        assert!(list.allows("proxy.corp.example", 8443));
        assert!(list.allows("a.internal.example", 443));
        assert!(!list.allows("internal.example", 443));
        assert!(!list.allows("evilinternal.example", 443));
        assert!(list.allows("gw.example", 443));
        assert!(!list.allows("api.openai.com", 443), "another provider");
        assert!(!list.allows("evil.example", 443));
        assert_eq!(list.loopback_ports(), vec![4567]);
    }

    #[test]
    fn a_custom_command_reaches_nothing_unless_config_says() {
        let spec = AgentSpec::new("mine", "/bin/true");
        let list = Allowlist::for_agent(&spec, &env(&[("ANTHROPIC_BASE_URL", "http://x")]));
        assert!(list.describe().is_empty());
        assert!(!list.allows("x", 80));
    }

    #[test]
    fn codex_reaches_the_providers_its_arguments_name() {
        let mut codex = AgentSpec::new("codex", "codex");
        codex.extra_args = vec![
            "-c".into(),
            "model_providers.gw.base_url=http://127.0.0.1:9000/v1".into(),
        ];
        let list = Allowlist::for_agent(&codex, &BTreeMap::new());
        assert!(list.allows("127.0.0.1", 9000));
        assert!(list.allows("chatgpt.com", 443));
    }
}
