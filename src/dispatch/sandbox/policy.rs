//! What an agent may do, as data every platform's sandbox renders: read the system, the
//! checkout and the repository's objects; write its scratch directory and throwaway home (and
//! `sandbox_write`); connect to the UNIX sockets `sandbox_sockets` names. No libc, no `cfg`:
//! bubblewrap's mounts, Landlock's rules and Seatbelt's profile are each made from [`Grants`].

use std::path::{Path, PathBuf};

use crate::types::{AgentKind, AgentSpec};

/// What one agent may reach on the file system, shared by every layer: bwrap binds exactly
/// these, Landlock allows exactly these, and Seatbelt's profile allows exactly these.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    /// Read and execute.
    pub read: Vec<PathBuf>,
    /// Read and write.
    pub write: Vec<PathBuf>,
    /// Single files that may be written.
    pub write_files: Vec<PathBuf>,
    /// UNIX sockets of the user's that `sandbox_sockets` lets through (bound as they are).
    pub sockets: Vec<PathBuf>,
}

/// Where an agent may connect, as every platform's layer renders it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Egress {
    /// The host's network, unfiltered (`network = "open"` in the trusted config).
    Open,
    /// Only deep-review's filtering proxy on loopback port `proxy`, and the `forwarded` loopback
    /// ports of the local endpoints the agent is allowed (a model server on `127.0.0.1:PORT`).
    ProxyOnly { proxy: u16, forwarded: Vec<u16> },
}

impl Egress {
    /// The loopback TCP ports the agent may connect to; `None` for an open network.
    pub fn tcp_ports(&self) -> Option<Vec<u16>> {
        match self {
            Egress::Open => None,
            Egress::ProxyOnly { proxy, forwarded } => {
                let mut ports = forwarded.clone();
                ports.push(*proxy);
                Some(ports)
            }
        }
    }

    /// Whether connections go through deep-review's proxy (and are filtered there).
    pub fn filtered(&self) -> bool {
        matches!(self, Egress::ProxyOnly { .. })
    }
}

/// The system directories every process reads. Not `/run` (sockets, service tokens), not
/// `/var` (`/var/lib` holds container service-account tokens), not `/home` or `/root`.
pub const SYSTEM_READ: &[&str] = &[
    "/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/opt", "/snap", "/nix",
];

/// The devices an agent may read: what the CLIs and their tools use (`/dev/null` may be
/// written too). Not `/dev/shm`, `/dev/pts`, `/dev/ptmx`, `/dev/tty` (no agent has a
/// controlling terminal) or any disk.
pub const DEVICES_READ: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// Files under the system directories that no agent needs and that a process of root could
/// otherwise read as their owner: bwrap covers them with an empty file or directory.
pub const SYSTEM_MASKED: &[&str] = &["/etc/shadow", "/etc/gshadow", "/etc/ssh", "/etc/sudoers"];

/// Where a machine keeps its private configuration: walked for what only its owner or group may
/// read ([`private_system_entries`]).
const PRIVATE_CONFIG_ROOT: &str = "/etc";

/// The most entries of [`PRIVATE_CONFIG_ROOT`] looked at: a usual `/etc` holds a few thousand.
const PRIVATE_CONFIG_WALK_LIMIT: usize = 50_000;

/// What bwrap covers under the system directories: [`SYSTEM_MASKED`], and every entry of `/etc`
/// that other users may not read (`/etc/ssl/private`, `/etc/sudoers.d`, WireGuard and
/// NetworkManager keys, a cluster's admin config). As root the agent's uid maps to root's
/// outside, so it would read them as their owner; a normal user cannot. Walked once a process.
pub fn system_masked() -> &'static [PathBuf] {
    static MASKED: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    MASKED.get_or_init(|| {
        let mut masked: Vec<PathBuf> = SYSTEM_MASKED.iter().map(PathBuf::from).collect();
        for entry in
            private_system_entries(Path::new(PRIVATE_CONFIG_ROOT), PRIVATE_CONFIG_WALK_LIMIT)
        {
            if !masked.iter().any(|m| entry.starts_with(m)) {
                masked.push(entry);
            }
        }
        masked
    })
}

/// The entries under `root` that other users may not read (a file without `o+r`, a directory
/// without `o+rx`), not descending into those; symbolic links are not followed. At most
/// `limit` entries are looked at.
fn private_system_entries(root: &Path, limit: usize) -> Vec<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let mut private = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > limit {
                return private;
            }
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            let mode = meta.permissions().mode();
            if meta.is_dir() {
                if mode & 0o005 != 0o005 {
                    private.push(entry.path());
                } else {
                    pending.push(entry.path());
                }
            } else if meta.is_file() && mode & 0o004 == 0 {
                private.push(entry.path());
            }
        }
    }
    private
}

/// Where one agent runs, what it runs and where it keeps its state.
pub struct AgentPlaces<'a> {
    pub spec: &'a AgentSpec,
    /// The checkout under review (read-only).
    pub checkout: &'a Path,
    /// The repository whose objects the checkout borrows (its objects are read-only).
    pub repo: &'a Path,
    /// The agent's scratch directory (its `TMPDIR`).
    pub scratch: &'a Path,
    /// The agent's throwaway state home.
    pub home: &'a Path,
    /// deep-review's helper, when it runs inside the sandbox.
    pub helper: Option<&'a Path>,
}

impl Grants {
    /// What `places.spec` may read and write.
    pub fn for_agent(places: &AgentPlaces<'_>) -> Grants {
        let spec = places.spec;
        let mut g = Grants::default();
        g.read.extend(SYSTEM_READ.iter().map(PathBuf::from));
        // The CLIs read /proc (node reads its own status; /dev/stdin and /dev/fd/N lead there)
        // and a few devices, not all of /dev: under Landlock alone it is the host's, with other
        // programs' shared memory (/dev/shm) and other terminals (/dev/pts/N).
        g.read.push(PathBuf::from("/proc"));
        g.read.extend(DEVICES_READ.iter().map(PathBuf::from));
        g.read.push(places.checkout.to_path_buf());
        // The checkout borrows the repository's objects: those, and nothing else of its git
        // directory (its config holds CI's token and remotes' credentials; the store is there).
        if let Some(git_dir) = common_git_dir(places.repo) {
            g.read
                .extend(crate::dispatch::worktree::object_dirs(&git_dir));
        }
        for program in [spec.command.as_str(), "node"] {
            if let Some(root) = install_root(program) {
                g.read.push(root);
            }
        }
        if let Some(helper) = places.helper {
            g.read.push(helper.to_path_buf());
        }
        g.write.push(places.scratch.to_path_buf());
        g.write.push(places.home.to_path_buf());
        g.write_files.push(PathBuf::from("/dev/null"));
        g.read.extend(spec.sandbox_read.iter().cloned());
        g.write.extend(spec.sandbox_write.iter().cloned());
        g.sockets.extend(spec.sandbox_sockets.iter().cloned());
        g
    }

    /// Creates the directories the agent may write that do not exist yet (a cache named in
    /// `sandbox_write` on its first run): a path that does not exist can be neither bound nor
    /// allowed. Returns those it created (they are the agent's: [`super::linux::identity`]).
    pub fn ensure_dirs(&self) -> Vec<PathBuf> {
        let mut created = Vec::new();
        for dir in &self.write {
            if !dir.exists() && std::fs::create_dir_all(dir).is_ok() {
                created.push(dir.clone());
            }
        }
        created
    }
}

/// Whether `kind` is an agent CLI whose state deep-review knows how to seed.
pub fn knows_state_of(kind: AgentKind) -> bool {
    matches!(
        kind,
        AgentKind::Claude | AgentKind::Codex | AgentKind::Gemini
    )
}

/// The repository's shared `.git` directory (for a worktree: the main one's).
fn common_git_dir(repo: &Path) -> Option<PathBuf> {
    let dir = crate::git::git_text(
        repo,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )
    .ok()?;
    Some(PathBuf::from(dir))
}

/// Where an agent's program is installed, to be readable in the sandbox: for a file inside a
/// `node_modules` tree, the directory that holds that tree (an npm prefix); for a file in a
/// `bin` directory, that directory's parent (`/opt/tool/bin/x` → `/opt/tool`); else the
/// program's own directory. Never a directory shared by unrelated files (`/`, `/tmp`,
/// `/var/tmp`, `/dev/shm`) or the home directory or one above it (`~/bin/tool` would open all of
/// `$HOME`): then the program file alone.
fn install_root(program: &str) -> Option<PathBuf> {
    let found = crate::dispatch::backend::commands::find_program(program)?;
    let real = std::fs::canonicalize(&found).unwrap_or(found);
    let comps: Vec<_> = real.components().collect();
    let dir = real.parent()?;
    let root: PathBuf = match comps.iter().position(|c| c.as_os_str() == "node_modules") {
        Some(i) => comps[..i].iter().collect(),
        None if dir.file_name().is_some_and(|n| n == "bin") => dir.parent()?.to_path_buf(),
        None => dir.to_path_buf(),
    };
    let shared = ["/", "/tmp", "/var/tmp", "/dev/shm", "/usr", "/opt"]
        .iter()
        .any(|s| root == Path::new(s));
    let home = dirs::home_dir().and_then(|h| std::fs::canonicalize(&h).ok().or(Some(h)));
    let above_home = home.is_some_and(|home| home.starts_with(&root));
    if shared || above_home {
        Some(real)
    } else {
        Some(root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What only the owner or group may read is found, and not descended into; what others
    /// may read is not; the walk stops at its limit.
    #[test]
    fn private_entries_are_those_others_may_not_read() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let mode = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };
        let open = root.path().join("ssl");
        let private = open.join("private");
        std::fs::create_dir_all(&private).unwrap();
        std::fs::write(private.join("k.key"), "k").unwrap();
        std::fs::write(open.join("cert.pem"), "c").unwrap();
        std::fs::write(root.path().join("shadow-"), "s").unwrap();
        mode(&root.path().join("shadow-"), 0o640);
        mode(&private, 0o700);
        let mut found = private_system_entries(root.path(), 100);
        found.sort();
        assert_eq!(found, vec![root.path().join("shadow-"), private.clone()]);
        assert!(private_system_entries(root.path(), 1).len() <= 1);
        mode(&private, 0o755);
    }

    #[test]
    fn the_install_root_of_an_npm_package_is_its_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("prefix/node_modules/pkg/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let exe = bin.join("tool");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let root = install_root(exe.to_str().unwrap()).unwrap();
        assert_eq!(
            std::fs::canonicalize(root).unwrap(),
            std::fs::canonicalize(dir.path().join("prefix")).unwrap()
        );
    }

    #[test]
    fn a_script_in_a_temporary_directory_opens_that_directory_not_tmp() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("agent.sh");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let root = install_root(exe.to_str().unwrap()).unwrap();
        assert_eq!(root, std::fs::canonicalize(dir.path()).unwrap());
        let sh = install_root("/bin/sh").unwrap();
        assert_ne!(sh, PathBuf::from("/"), "never the whole file system");
    }

    #[test]
    fn the_system_read_list_leaves_out_run_var_and_homes() {
        for path in ["/run", "/var", "/var/lib", "/home", "/root", "/tmp"] {
            assert!(!SYSTEM_READ.contains(&path), "{path} must not be readable");
        }
    }
}
