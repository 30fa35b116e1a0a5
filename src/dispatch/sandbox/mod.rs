//! The OS sandbox an agent CLI runs in.
//!
//! An agent reads the change under review, and the change can be written to steer it: prompt
//! injection is the expected attack. The CLIs' own "read-only" modes are rules the model is asked
//! to follow inside the CLI; they do not confine the process. So every agent process runs in a
//! sandbox built from established parts, and the sandbox holds against the agent itself, also
//! when deep-review runs as root (CI containers do):
//!
//! - **bubblewrap** (`bwrap`, the sandbox of Flatpak and of Claude Code's own sandbox runtime),
//!   when installed and when the kernel lets it make namespaces ([`bwrap`]): its own user, PID,
//!   mount, network, IPC and UTS namespaces; a fresh `/proc` that shows only the agent's
//!   processes; the system, the checkout and the repository's objects read-only; a private
//!   `/tmp` and `/dev/shm`; no `/run`, `/var`, home directory or UNIX socket of the user's; no
//!   capabilities; a new session (no controlling terminal, so `/dev/tty` cannot be opened); and
//!   every process of the agent killed with the run, also when deep-review is killed.
//! - **Landlock** inside it ([`landlock`]), applied by deep-review's helper
//!   ([`inner`]) just before the agent starts: files, TCP ports, signals and abstract sockets.
//! - **A throwaway state home** ([`home`]): the CLI's configuration directories are copies made
//!   for the run, seeded with the user's login, so nothing the agent writes reaches the user's own
//!   configuration.
//! - **Egress only to its provider** ([`crate::dispatch::network`]): the agent's network
//!   namespace has only a loopback device, on which deep-review's filtering proxy listens.
//!
//! Without bubblewrap, Landlock alone (with the capabilities dropped, a new session and the
//! proxy) is what is left, and [`Layers`] says what that does not cover. Without Landlock either,
//! only the CLI's own mode and the throwaway home remain, and the report says so.

pub mod bwrap;
pub mod home;
pub mod inner;
pub mod landlock;
pub mod launch;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::types::{AgentKind, AgentSpec};

/// Which sandbox a run asks for: `DEEP_REVIEW_SANDBOX` = `auto` (the default: the strongest
/// available), `landlock` (Landlock alone, to compare or where bwrap misbehaves) or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Auto,
    LandlockOnly,
    Off,
}

impl Mode {
    /// The mode the environment asks for.
    pub fn from_env() -> Result<Mode, String> {
        match std::env::var("DEEP_REVIEW_SANDBOX") {
            Err(_) => Ok(Mode::Auto),
            Ok(value) => match value.trim().to_ascii_lowercase().as_str() {
                "" | "auto" => Ok(Mode::Auto),
                "landlock" => Ok(Mode::LandlockOnly),
                "none" | "off" => Ok(Mode::Off),
                other => Err(format!(
                    "DEEP_REVIEW_SANDBOX=`{}` is not a sandbox mode: use auto, landlock or none",
                    crate::text::printable_line(other)
                )),
            },
        }
    }
}

/// The layers an agent runs under: what the report, `meta.json` and `deep-review agents` name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layers {
    /// bubblewrap's namespaces with Landlock inside (`landlock_abi` 0: the kernel has none).
    Bwrap { landlock_abi: i32 },
    /// Landlock alone, with capabilities dropped and a new session.
    LandlockOnly { abi: i32 },
    /// No OS sandbox: why.
    None { why: String },
}

impl Layers {
    /// The short name: `bwrap+landlock`, `landlock only: ...`, `none: ...`.
    pub fn name(&self) -> String {
        match self {
            Layers::Bwrap { landlock_abi } if *landlock_abi > 0 => "bwrap+landlock".into(),
            Layers::Bwrap { .. } => "bwrap (no Landlock in this kernel)".into(),
            Layers::LandlockOnly { .. } => format!("landlock only: {}", self.not_covered()),
            Layers::None { why } => format!(
                "none ({why}): the agent CLI's own read-only mode and a throwaway state home only"
            ),
        }
    }

    /// What these layers leave open, in one clause (empty for the full set).
    pub fn not_covered(&self) -> String {
        match self {
            Layers::Bwrap { landlock_abi } if *landlock_abi >= 6 => String::new(),
            Layers::Bwrap { .. } => {
                "signals and abstract sockets are scoped by namespaces only".into()
            }
            Layers::LandlockOnly { abi } => {
                let mut open = vec![
                    "processes not isolated (daemons can outlive a killed run; UNIX sockets of the user's are reachable)",
                ];
                if *abi < 4 {
                    open.push("network not isolated");
                } else {
                    open.push(
                        "network limited to the proxy's TCP port (UDP and that port on other hosts not covered)",
                    );
                }
                if *abi < 6 {
                    open.push("signals and abstract sockets not scoped");
                }
                // SAFETY: geteuid has no preconditions.
                if unsafe { libc::geteuid() } == 0 {
                    open.push("as root, files under the system directories only root may read are readable");
                }
                open.join("; ")
            }
            Layers::None { .. } => "files, processes and network not isolated".into(),
        }
    }

    /// Whether the agent cannot write to its checkout, so that one checkout serves every agent.
    pub fn confines_files(&self) -> bool {
        !matches!(self, Layers::None { .. })
    }

    /// Whether the agent has a network namespace of its own (reachable only through the proxy).
    pub fn own_network(&self) -> bool {
        matches!(self, Layers::Bwrap { .. })
    }
}

/// The sandbox of one dispatch: the layers every agent process gets, and the helper that runs
/// inside bwrap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub layers: Layers,
    pub helper: Option<PathBuf>,
}

impl Plan {
    /// The plan for `mode` on this machine with `helper`.
    pub fn new(mode: Mode, helper: Option<PathBuf>) -> Plan {
        Plan {
            layers: layers_for(mode, helper.as_deref()),
            helper,
        }
    }
}

/// What this machine offers, probed once per process.
#[derive(Debug, Clone)]
pub struct Support {
    /// `bwrap`, when it is installed and could make its namespaces here; else why not.
    pub bwrap: Result<PathBuf, String>,
    /// The kernel's Landlock ABI, 0 when it has none.
    pub landlock_abi: i32,
}

/// The probe's result, cached.
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(|| Support {
        bwrap: bwrap::probe(),
        landlock_abi: if landlock::available() {
            landlock::kernel_abi()
        } else {
            0
        },
    })
}

/// The layers a run in `mode` gets on this machine. `helper` is deep-review's own executable,
/// run inside bwrap to apply Landlock and open the network: without it bwrap cannot be used.
pub fn layers_for(mode: Mode, helper: Option<&Path>) -> Layers {
    let support = support();
    let landlock_only = |support: &Support| {
        if support.landlock_abi > 0 {
            Layers::LandlockOnly {
                abi: support.landlock_abi,
            }
        } else {
            Layers::None {
                why: "this kernel has no Landlock".into(),
            }
        }
    };
    match mode {
        Mode::Off => Layers::None {
            why: "DEEP_REVIEW_SANDBOX=none".into(),
        },
        Mode::LandlockOnly => landlock_only(support),
        Mode::Auto => match (&support.bwrap, helper) {
            (Ok(_), Some(_)) => Layers::Bwrap {
                landlock_abi: support.landlock_abi,
            },
            _ => landlock_only(support),
        },
    }
}

/// The sandbox of this machine in one line, for `deep-review agents` and `run --dry-run`:
/// the layers and, when bwrap is not used, why.
pub fn describe_machine(plan: &Plan) -> String {
    let support = support();
    let mut line = plan.layers.name();
    if let (Layers::LandlockOnly { .. } | Layers::None { .. }, Err(why)) =
        (&plan.layers, &support.bwrap)
    {
        line.push_str(&format!(" (no bwrap: {why})"));
    }
    if support.landlock_abi > 0 {
        line.push_str(&format!("; Landlock ABI {}", support.landlock_abi));
    }
    line
}

/// Where `spec`'s agent may connect, in one line: its allowlist, or that its network is open.
pub fn describe_network(spec: &AgentSpec, plan: &Plan) -> String {
    if spec.network == crate::types::NetworkMode::Open {
        return "open (network = \"open\" in config): not filtered".into();
    }
    let env = crate::dispatch::environment::agent_env(spec, std::env::vars_os(), &spec.env);
    let hosts = crate::dispatch::network::Allowlist::for_agent(spec, &env).describe();
    let how = if plan.layers.own_network() {
        "only through deep-review's proxy"
    } else {
        "through deep-review's proxy (not enforced without bwrap)"
    };
    if hosts.is_empty() {
        format!("none ({how}; add hosts with `network_allow`)")
    } else {
        format!("{} ({how})", hosts.join(", "))
    }
}

/// Whether agents can be confined at all here (the tests and benches that need it ask).
pub fn available() -> bool {
    layers_for(Mode::Auto, Some(Path::new("/"))).confines_files()
}

/// deep-review's own executable, which serves as the helper inside bwrap: the running program
/// when it is deep-review (a test or bench binary that calls the library is not).
pub fn default_helper() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let name = exe.file_name()?.to_str()?;
    (name == "deep-review").then_some(exe)
}

/// What one agent may reach on the file system, shared by both layers: bwrap binds exactly
/// these, and Landlock allows exactly these.
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

/// The system directories every process reads. Not `/run` (sockets, service tokens), not
/// `/var` (`/var/lib` holds container service-account tokens), not `/home` or `/root`.
pub const SYSTEM_READ: &[&str] = &[
    "/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/opt", "/snap", "/nix",
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
        // The CLIs read /proc (node reads its own status) and /dev (null, urandom): under bwrap
        // both are the sandbox's own.
        g.read.push(PathBuf::from("/proc"));
        g.read.push(PathBuf::from("/dev"));
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

    /// The Landlock rules for these grants, with TCP limited to `connect_tcp` (`None`: open).
    pub fn landlock_rules(&self, connect_tcp: Option<Vec<u16>>) -> landlock::Rules {
        let mut write_files = self.write_files.clone();
        // A socket is connected to by path: Landlock (before ABI 9) does not govern that, but
        // the path must be readable for the bind to be of use.
        write_files.extend(self.sockets.iter().cloned());
        landlock::Rules {
            read: self.read.clone(),
            write: self.write.clone(),
            write_files,
            connect_tcp,
        }
    }

    /// Creates the directories the agent may write that do not exist yet (a cache named in
    /// `sandbox_write` on its first run): a path that does not exist can be neither bound nor
    /// allowed.
    pub fn ensure_dirs(&self) {
        for dir in &self.write {
            let _ = std::fs::create_dir_all(dir);
        }
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
    fn layers_say_what_they_leave_open() {
        let full = Layers::Bwrap { landlock_abi: 7 };
        assert_eq!(full.name(), "bwrap+landlock");
        assert!(full.not_covered().is_empty());
        let alone = Layers::LandlockOnly { abi: 7 };
        assert!(
            alone
                .name()
                .starts_with("landlock only: processes not isolated"),
            "{}",
            alone.name()
        );
        assert!(alone.name().contains("network limited"), "{}", alone.name());
        let old = Layers::LandlockOnly { abi: 3 };
        assert!(
            old.name().contains("network not isolated"),
            "{}",
            old.name()
        );
        assert!(old.name().contains("signals"), "{}", old.name());
        assert!(!Layers::None { why: "x".into() }.confines_files());
    }

    #[test]
    fn the_system_read_list_leaves_out_run_var_and_homes() {
        for path in ["/run", "/var", "/var/lib", "/home", "/root", "/tmp"] {
            assert!(!SYSTEM_READ.contains(&path), "{path} must not be readable");
        }
    }
}
