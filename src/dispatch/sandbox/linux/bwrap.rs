//! bubblewrap: the namespaces an agent runs in, as a `bwrap` command line.
//!
//! bwrap starts with an empty root (a tmpfs) and mounts only what it is told, so the sandbox
//! holds what [`Grants`] lists and nothing else: the system directories read-only (with
//! `/etc/shadow`, `/etc/gshadow`, `/etc/sudoers` and `/etc/ssh` covered), the checkout and the
//! repository's objects read-only, the agent's throwaway home and scratch directory writable,
//! and fresh `/proc`, `/dev`, `/tmp` and `/dev/shm`. Paths keep their names inside, so the
//! command line, the checkout path and the CLIs' state paths mean the same inside and out.
//!
//! The process runs in a new user namespace as an ordinary uid with every capability dropped,
//! even when deep-review runs as root: root's powers (mounting, reading other users' files,
//! `CAP_SYS_PTRACE`) never enter the sandbox. `--die-with-parent` and the PID namespace kill the
//! agent's every process, daemons included, when its run ends or deep-review dies, even by
//! SIGKILL. The controlling terminal is already gone: deep-review starts bwrap in a session of
//! its own (`setsid`, [`crate::dispatch::sandbox::launch::ChildSetup`]) with pipes for its standard streams, so
//! `/dev/tty` cannot be opened and no descriptor is a terminal to push input into. bwrap's
//! `--new-session` is left out on purpose: it would put the agent in a group of its own, out of
//! reach of the TERM that deep-review sends the group to let the agent stop cleanly (bwrap
//! itself ignores that TERM, see `ChildSetup`, and the helper inside restores it for the agent).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::dispatch::sandbox::policy::{Grants, SYSTEM_READ, system_masked};

/// The uid and gid an agent has inside when deep-review runs as root: an ordinary user.
/// (A user's own uid stays theirs.)
const UNPRIVILEGED_ID: u32 = 1000;

/// How long the probe may take before bwrap is taken as unusable.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Finds bwrap and checks that it can make the namespaces deep-review asks for here (a
/// container without user namespaces, or an AppArmor profile that forbids them, makes it fail).
pub fn probe() -> Result<PathBuf, String> {
    let bwrap = crate::dispatch::backend::commands::find_program("bwrap")
        .filter(|p| p.is_absolute())
        .ok_or_else(|| "bwrap is not installed (apt-get install bubblewrap)".to_string())?;
    let mut probe = std::process::Command::new(&bwrap);
    probe
        .args(namespace_args(true))
        .args(["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"])
        .args(["--", "true"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    if super::identity::drops_root() {
        // As root, agents' bwrap runs as the unprivileged uid: the probe asks whether that
        // uid may make the namespaces (a kernel may allow them to root alone).
        use std::os::unix::process::CommandExt;
        probe
            .uid(super::identity::AGENT_UID)
            .gid(super::identity::AGENT_UID);
    }
    let mut child = probe
        .spawn()
        .map_err(|e| format!("bwrap could not be started: {e}"))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(bwrap),
            Ok(Some(_)) => {
                let mut err = String::new();
                if let Some(mut stderr) = child.stderr.take() {
                    use std::io::Read;
                    let _ = (&mut stderr).take(4096).read_to_string(&mut err);
                }
                return Err(format!(
                    "bwrap cannot make namespaces here: {}",
                    crate::dispatch::output::one_sentence(err.trim())
                ));
            }
            Ok(None) if started.elapsed() < PROBE_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("bwrap did not answer its probe".into());
            }
        }
    }
}

/// The namespace, identity and lifetime options; with `own_network` a network namespace too.
fn namespace_args(own_network: bool) -> Vec<OsString> {
    // SAFETY: getuid and getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let (uid, gid) = if uid == 0 {
        (UNPRIVILEGED_ID, UNPRIVILEGED_ID)
    } else {
        (uid, gid)
    };
    let mut args: Vec<OsString> = [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--cap-drop",
        "ALL",
        "--hostname",
        "deep-review-sandbox",
    ]
    .map(OsString::from)
    .to_vec();
    if own_network {
        args.push("--unshare-net".into());
    }
    args.extend(["--uid".into(), uid.to_string().into()]);
    args.extend(["--gid".into(), gid.to_string().into()]);
    args
}

/// One mount of the sandbox, in the order bwrap must make them (parents before children).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mount {
    ReadOnly(PathBuf),
    Writable(PathBuf),
    /// A symlink at `at` to `target`, as the system has it (`/lib` → `usr/lib`).
    Symlink {
        at: PathBuf,
        target: PathBuf,
    },
    /// An empty directory over a system directory.
    EmptyDir(PathBuf),
    /// An empty file over a system file.
    EmptyFile(PathBuf),
}

impl Mount {
    fn path(&self) -> &Path {
        match self {
            Mount::ReadOnly(p) | Mount::Writable(p) | Mount::EmptyDir(p) | Mount::EmptyFile(p) => p,
            Mount::Symlink { at, .. } => at,
        }
    }

    /// bwrap's options for this mount; a granted path is bound from `source(path)` (its
    /// staged copy as root, else itself).
    fn push_args(&self, args: &mut Vec<OsString>, source: &dyn Fn(&Path) -> PathBuf) {
        let mut two = |flag: &str, a: &Path, b: &Path| {
            args.push(flag.into());
            args.push(a.into());
            args.push(b.into());
        };
        match self {
            Mount::ReadOnly(p) => two("--ro-bind", &source(p), p),
            Mount::Writable(p) => two("--bind", &source(p), p),
            Mount::Symlink { at, target } => two("--symlink", target, at),
            Mount::EmptyFile(p) => two("--ro-bind", Path::new("/dev/null"), p),
            Mount::EmptyDir(p) => {
                args.push("--tmpfs".into());
                args.push(p.into());
                args.push("--remount-ro".into());
                args.push(p.into());
            }
        }
    }
}

/// The mounts for `grants`: system directories as the machine has them, then every granted
/// path (skipping those that do not exist), parents first.
fn mounts(grants: &Grants) -> Vec<Mount> {
    let mut mounts = Vec::new();
    for dir in SYSTEM_READ.iter().map(Path::new) {
        match std::fs::read_link(dir) {
            Ok(target) => mounts.push(Mount::Symlink {
                at: dir.to_path_buf(),
                target,
            }),
            Err(_) if dir.is_dir() => mounts.push(Mount::ReadOnly(dir.to_path_buf())),
            Err(_) => {}
        }
    }
    for masked in system_masked() {
        match std::fs::symlink_metadata(masked) {
            Ok(meta) if meta.is_dir() => mounts.push(Mount::EmptyDir(masked.to_path_buf())),
            Ok(_) => mounts.push(Mount::EmptyFile(masked.to_path_buf())),
            Err(_) => {}
        }
    }
    let system: Vec<&Path> = SYSTEM_READ.iter().map(Path::new).collect();
    let mut granted: Vec<Mount> = Vec::new();
    let kept = |p: &PathBuf| p.is_absolute() && p.exists() && !is_sandbox_own(p);
    for p in grants.read.iter().filter(|p| kept(p)) {
        // Under a system directory already bound read-only: nothing to add.
        if !system.iter().any(|s| p.starts_with(s)) {
            granted.push(Mount::ReadOnly(p.clone()));
        }
    }
    for p in grants
        .write
        .iter()
        .chain(&grants.write_files)
        .chain(&grants.sockets)
        .filter(|p| kept(p))
    {
        granted.push(Mount::Writable(p.clone()));
    }
    // Parents before children, so a writable directory inside a read-only one stays writable
    // and a read-only one inside a writable one stays read-only.
    granted.sort_by_key(|m| m.path().components().count());
    granted.dedup();
    mounts.extend(granted);
    mounts
}

/// `/proc` and `/dev` (with `/dev/null`) and `/tmp` itself are the sandbox's own, never the
/// host's (a bind of a device node would not even work: binds are `nodev`).
fn is_sandbox_own(path: &Path) -> bool {
    path.starts_with("/proc") || path.starts_with("/dev") || path == Path::new("/tmp")
}

/// The paths bwrap binds for `grants` beyond the system directories (the checkout, the
/// objects, the programs, the agent's own directories, what the config grants), each once,
/// in the order they are mounted: what root stages for bwrap when it drops to the agent's uid
/// ([`super::identity::Staging`]).
pub fn granted_sources(grants: &Grants) -> Vec<PathBuf> {
    let mut sources: Vec<PathBuf> = Vec::new();
    for mount in mounts(grants) {
        if let Mount::ReadOnly(p) | Mount::Writable(p) = &mount
            && !SYSTEM_READ.iter().any(|s| p == Path::new(s))
            && !sources.contains(p)
        {
            sources.push(p.clone());
        }
    }
    sources
}

/// The whole bwrap command line up to and including `--`: what runs after it is deep-review's
/// helper with the agent's command. With `staged`, each of [`granted_sources`] is bound from
/// where [`super::identity::Staging`] put it rather than from its own path.
pub fn args(grants: &Grants, own_network: bool, cwd: &Path, staged: bool) -> Vec<OsString> {
    let sources = if staged {
        granted_sources(grants)
    } else {
        Vec::new()
    };
    let source = |path: &Path| -> PathBuf {
        match sources.iter().position(|s| s == path) {
            Some(i) => super::identity::Staging::stage_of(i),
            None => path.to_path_buf(),
        }
    };
    let mut args = namespace_args(own_network);
    for (flag, path) in [
        ("--proc", "/proc"),
        ("--dev", "/dev"),
        ("--tmpfs", "/tmp"),
        ("--tmpfs", "/dev/shm"),
    ] {
        args.push(flag.into());
        args.push(path.into());
    }
    for mount in mounts(grants) {
        mount.push_args(&mut args, &source);
    }
    args.push("--chdir".into());
    args.push(cwd.into());
    args.push("--".into());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(args: &[OsString], flag: &str, path: &Path) -> Option<usize> {
        args.windows(3)
            .position(|w| w[0] == *flag && w[2] == *path.as_os_str())
    }

    #[test]
    fn binds_are_made_parents_first_and_read_only_where_granted_so() {
        let dir = tempfile::tempdir().unwrap();
        let checkout = dir.path().join("checkout");
        let cache = checkout.join("cache");
        std::fs::create_dir_all(&cache).unwrap();
        let grants = Grants {
            read: vec![checkout.clone(), PathBuf::from("/usr/share")],
            write: vec![cache.clone()],
            ..Grants::default()
        };
        let args = args(&grants, true, &checkout, false);
        let ro = position(&args, "--ro-bind", &checkout).expect("checkout bound read-only");
        let rw = position(&args, "--bind", &cache).expect("cache bound writable");
        assert!(ro < rw, "the parent must be mounted first: {args:?}");
        assert!(
            position(&args, "--ro-bind", Path::new("/usr/share")).is_none(),
            "a path under a system directory needs no bind of its own"
        );
        assert!(args.iter().any(|a| a == "--unshare-net"));
        assert!(args.iter().any(|a| a == "--die-with-parent"));
        assert_eq!(args.last().unwrap(), "--");
        // Nothing of /run, /var or /home is ever bound.
        for a in &args {
            let a = a.to_string_lossy();
            assert!(
                !(a.starts_with("/run") || a.starts_with("/var") || a == "/home"),
                "{a} is bound"
            );
        }
    }

    #[test]
    fn an_open_network_keeps_the_host_network() {
        let args = args(&Grants::default(), false, Path::new("/"), false);
        assert!(!args.iter().any(|a| a == "--unshare-net"));
        assert!(args.iter().any(|a| a == "--unshare-pid"));
    }
}
