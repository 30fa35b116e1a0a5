//! Seatbelt: the policy as a `sandbox-exec` profile.
//!
//! The profile is [`seatbelt_base.sbpl`](./seatbelt_base.sbpl) (closed by default, the few
//! process, Mach, sysctl and device rules every CLI needs) followed by the rules this file makes
//! from [`Grants`] and [`Egress`]: `file-read*` beneath each read root, `file-read*` and
//! `file-write*` beneath each write root and on each single writable file, connections only to
//! the proxy's loopback port and the forwarded ones, and to the UNIX sockets `sandbox_sockets`
//! names. Nothing else.
//!
//! Paths never enter the profile's text, where a quote or a backslash in a directory name could
//! end a string and add a rule: each one is a parameter, `(param "READ_0")`, given to
//! `sandbox-exec` as `-DREAD_0=/path` (as Codex CLI does). Each path is canonical
//! (`/private/var/...` for `/var/...`, `/private/tmp` for `/tmp`: Seatbelt compares the path a
//! file is opened by after links are resolved). What the policy masks under the system
//! directories (`/etc/master.passwd`, `/etc/sudoers`, what other users may not read) is carved
//! out of the read roots with `require-not`, so no rule's order matters (Codex's writable roots
//! carve `.git` out the same way). `sandbox-exec` is called by its absolute path
//! ([`SANDBOX_EXEC`]): a `PATH` entry cannot stand in for it.
//!
//! Plain text from data, so the tests on Linux check it ([`super::seatbelt_tests`]); only the
//! launch is macOS's.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::dispatch::sandbox::policy::{Egress, Grants, system_masked};

/// The only `sandbox-exec` deep-review runs (Codex does the same: one in a `PATH` directory
/// the user can write could be anything).
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// What every profile starts with.
pub const BASE: &str = include_str!("seatbelt_base.sbpl");

/// Files under the system directories no agent needs, masked on macOS too: the password hashes
/// (macOS's shadow file) besides what [`system_masked`] finds.
const MACOS_MASKED: &[&str] = &["/private/etc/master.passwd"];

/// The macOS socket through which the system's resolver answers, for an open network only
/// (with the proxy, the proxy resolves names).
const RESOLVER_SOCKET: &str = "/private/var/run/mDNSResponder";

/// A profile and the paths its parameters name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub text: String,
    /// `(name, path)`: given as `-Dname=path`.
    pub params: Vec<(String, PathBuf)>,
}

impl Profile {
    /// The profile for `grants` and `egress`, with what the system directories mask.
    pub fn new(grants: &Grants, egress: &Egress) -> Profile {
        let mut masked: Vec<PathBuf> = system_masked().to_vec();
        masked.extend(MACOS_MASKED.iter().map(PathBuf::from));
        Profile::with_masked(grants, egress, &masked)
    }

    /// The profile for `grants` and `egress`, with `masked` carved out of the read roots.
    pub fn with_masked(grants: &Grants, egress: &Egress, masked: &[PathBuf]) -> Profile {
        let mut r = Renderer::default();
        r.text.push_str(BASE);
        r.reads(grants, masked);
        r.writes(grants);
        r.network(grants, egress);
        Profile {
            text: r.text,
            params: r.params,
        }
    }

    /// `sandbox-exec`'s arguments that run `program args` under this profile.
    pub fn command_args(&self, program: &str, args: &[String]) -> Vec<OsString> {
        let mut out: Vec<OsString> = vec!["-p".into(), self.text.clone().into()];
        for (name, path) in &self.params {
            let mut define = OsString::from(format!("-D{name}="));
            define.push(path.as_os_str());
            out.push(define);
        }
        out.push("--".into());
        out.push(program.into());
        out.extend(args.iter().map(OsString::from));
        out
    }
}

/// The profile's text and parameters as they are made.
#[derive(Default)]
struct Renderer {
    text: String,
    params: Vec<(String, PathBuf)>,
}

impl Renderer {
    /// A new parameter `PREFIX_N` for `path` (made canonical), as a `(param ...)` form.
    fn param(&mut self, prefix: &str, path: &Path) -> String {
        let name = format!("{prefix}_{}", self.params.len());
        self.params.push((name.clone(), canonical(path)));
        format!("(param \"{name}\")")
    }

    /// Read (and map executable: native modules, dylibs) beneath each read root, less what is
    /// masked beneath it; the root's ancestors may be looked up (`stat`, `realpath`), no more.
    fn reads(&mut self, grants: &Grants, masked: &[PathBuf]) {
        let masked: Vec<PathBuf> = masked.iter().map(|m| canonical(m)).collect();
        let mut filters = Vec::new();
        for root in grants.read.iter().filter(|p| !device_or_proc(p)) {
            let real = canonical(root);
            let inside: Vec<&PathBuf> = masked.iter().filter(|m| m.starts_with(&real)).collect();
            let subpath = format!("(subpath {})", self.param("READ", root));
            if inside.is_empty() {
                filters.push(subpath);
                continue;
            }
            let mut all = vec![subpath];
            for m in inside {
                all.push(format!(
                    "(require-not (subpath {}))",
                    self.param("MASKED", m)
                ));
            }
            filters.push(format!("(require-all {})", all.join(" ")));
        }
        self.rule("file-read* file-map-executable", &filters);
        self.ancestors(grants);
    }

    /// `file-read-metadata` on every directory above a granted path, so that a path to it can
    /// be resolved by a program that checks each step; not their contents.
    fn ancestors(&mut self, grants: &Grants) {
        let mut seen: Vec<PathBuf> = Vec::new();
        let roots = grants
            .read
            .iter()
            .chain(&grants.write)
            .chain(&grants.write_files);
        for root in roots.chain(&grants.sockets).filter(|p| !device_or_proc(p)) {
            for dir in canonical(root).ancestors().skip(1) {
                if dir != Path::new("/") && !seen.iter().any(|s| s == dir) {
                    seen.push(dir.to_path_buf());
                }
            }
        }
        let filters: Vec<String> = seen
            .iter()
            .map(|dir| format!("(literal {})", self.param("ANCESTOR", dir)))
            .collect();
        self.rule("file-read-metadata", &filters);
    }

    /// Read and write beneath each write root, and on each single file (`/dev/null` is in the
    /// base profile).
    fn writes(&mut self, grants: &Grants) {
        let mut filters: Vec<String> = Vec::new();
        for root in &grants.write {
            filters.push(format!("(subpath {})", self.param("WRITE", root)));
        }
        for file in grants.write_files.iter().filter(|p| !device_or_proc(p)) {
            filters.push(format!("(literal {})", self.param("WRITE_FILE", file)));
        }
        self.rule("file-read* file-write*", &filters);
    }

    /// Outbound connections: the proxy's and the forwarded loopback ports only (or, for an open
    /// network, any IP address and the system's resolver); the UNIX sockets of `sockets`.
    fn network(&mut self, grants: &Grants, egress: &Egress) {
        match egress.tcp_ports() {
            Some(ports) => {
                let filters: Vec<String> = ports
                    .iter()
                    .map(|port| format!("(remote ip \"localhost:{port}\")"))
                    .collect();
                self.rule("network-outbound", &filters);
            }
            None => {
                self.rule("network-outbound", &["(remote ip \"*:*\")".to_string()]);
                self.rule(
                    "network-outbound",
                    &[format!(
                        "(remote unix-socket (subpath \"{RESOLVER_SOCKET}\"))"
                    )],
                );
            }
        }
        if grants.sockets.is_empty() {
            return;
        }
        let filters: Vec<String> = grants
            .sockets
            .iter()
            .map(|s| format!("(remote unix-socket (subpath {}))", self.param("SOCKET", s)))
            .collect();
        self.rule("system-socket", &["(socket-domain AF_UNIX)".to_string()]);
        self.rule("network-outbound", &filters);
    }

    /// `(allow OPERATIONS FILTER...)`, one filter a line; nothing when there is no filter (an
    /// allow without a filter would allow the operations everywhere).
    fn rule(&mut self, operations: &str, filters: &[String]) {
        if filters.is_empty() {
            return;
        }
        self.text.push_str(&format!("\n(allow {operations}"));
        for filter in filters {
            self.text.push_str("\n  ");
            self.text.push_str(filter);
        }
        self.text.push_str(")\n");
    }
}

/// `/dev` and `/proc` are Linux's grants: macOS has no `/proc`, and its `/dev` holds the raw
/// disks, so the base profile names the devices an agent may use one by one instead.
fn device_or_proc(path: &Path) -> bool {
    path.starts_with("/dev") || path.starts_with("/proc")
}

/// `path` with every link resolved, as Seatbelt sees it: for a path that does not exist yet
/// (a `sandbox_write` cache made on first use), its nearest existing ancestor resolved and the
/// rest appended. macOS's own links are resolved without the disk too (`/var`, `/tmp` and
/// `/etc` lead to `/private/...`), so a profile made anywhere names what a Mac opens.
pub fn canonical(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            let mut out = real;
            out.extend(rest.iter().rev());
            return private_prefix(&out);
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return private_prefix(path),
        }
    }
}

/// `/var/x` → `/private/var/x` (and `/tmp`, `/etc`): the links macOS has at its root.
fn private_prefix(path: &Path) -> PathBuf {
    for link in ["/var", "/tmp", "/etc"] {
        if let Ok(rest) = path.strip_prefix(link) {
            return Path::new("/private")
                .join(link.trim_start_matches('/'))
                .join(rest);
        }
    }
    path.to_path_buf()
}
