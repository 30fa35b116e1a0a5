//! Who the agent is outside its sandbox when deep-review runs as root: an unprivileged uid,
//! never root.
//!
//! bubblewrap gives the agent an ordinary uid *inside* its user namespace, but that uid maps to
//! the uid that started bwrap: as root, to root. The kernel then checks every file the agent
//! opens as root's own, so any root-only file bound into the sandbox (a key under `/opt`, a
//! token under `/usr/local`) is the agent's to read; masking such files one by one holds only
//! for the files a walk found, in the directories it walked, when it walked them. Starting
//! bwrap as an unprivileged uid instead ([`AGENT_UID`]) holds by construction: the agent's uid
//! maps to that uid, and the kernel's own permission checks refuse it whatever only root may
//! read, wherever it is and whenever it appeared.
//!
//! What the agent must reach still works, because root prepares it before letting go:
//!
//! - **Paths under directories that uid could not traverse** (a checkout in a `0700`
//!   temporary directory, CLIs installed under `/root`): root opens each granted path first,
//!   then, in a mount namespace of the child's own (nothing reaches the host's), mounts a
//!   fresh tmpfs over [`STAGE`] and bind-mounts each opened path there; bwrap, started as the
//!   unprivileged uid, binds them from there to their own paths. (bwrap resolves its sources
//!   by path, also for `--ro-bind-fd`, so the descriptors alone would not do.)
//! - **What the agent writes**, its scratch directory and throwaway home, is made that uid's
//!   own ([`give_to_agent`]).
//!
//! What a directory's own mode refuses others (a `0700` directory granted with
//! `sandbox_read`, a root-owned `sandbox_write` directory, a `0600` socket in
//! `sandbox_sockets`) stays refused: the agent is not root. [`unreachable_grants`] names them
//! in the run's notes, with what to do.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// The uid and gid an agent has outside its sandbox when deep-review runs as root: from the
/// range Debian reserves and never allocates (65000–65533), so no account of the machine owns
/// a file under it, and what the agent may read is what every user may read.
pub const AGENT_UID: u32 = 65_533;

/// Where the child stages the granted paths for bwrap: a tmpfs mounted over it in the child's
/// own mount namespace (the host's `/tmp` is untouched). `/tmp` is there on every Linux system
/// and every user may traverse it; bwrap gives the agent a `/tmp` of its own anyway.
pub const STAGE: &str = "/tmp";

/// Whether agents are started as [`AGENT_UID`]: when deep-review runs as root.
pub fn drops_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// One granted path, opened by root, and where it is staged.
struct Staged {
    /// Held open until the child has mounted it (it is mounted by its `/proc/self/fd` path).
    _source: OwnedFd,
    /// `/proc/self/fd/N` of `source`: the path the child mounts from.
    source_path: CString,
    /// `STAGE/N`.
    stage: CString,
    is_dir: bool,
}

/// The granted paths of one attempt, opened and ready to be staged in its child; the
/// descriptors stay open (close-on-exec) until the child has mounted them.
pub struct Staging {
    staged: Vec<Staged>,
    stage_root: CString,
    tmpfs: CString,
    tmpfs_options: CString,
    proc_root: CString,
}

impl Staging {
    /// Opens each of `paths` (as root, before any uid change): a path that cannot be opened
    /// is an error that names it.
    pub fn open(paths: &[PathBuf]) -> std::io::Result<Staging> {
        let mut staged = Vec::with_capacity(paths.len());
        for (i, path) in paths.iter().enumerate() {
            let source = open_path(path)?;
            let is_dir = std::fs::metadata(path)?.is_dir();
            let source_path = cstring(format!("/proc/self/fd/{}", source.as_raw_fd()))?;
            let stage = cstring(format!("{STAGE}/{i}"))?;
            staged.push(Staged {
                _source: source,
                source_path,
                stage,
                is_dir,
            });
        }
        Ok(Staging {
            staged,
            stage_root: cstring(STAGE.to_string())?,
            tmpfs: cstring("tmpfs".to_string())?,
            tmpfs_options: cstring("mode=0755,size=64k".to_string())?,
            proc_root: cstring("/".to_string())?,
        })
    }

    /// Where bwrap finds the `i`-th path given to [`Staging::open`].
    pub fn stage_of(i: usize) -> PathBuf {
        Path::new(STAGE).join(i.to_string())
    }

    /// In the child, as root, between `fork` and `exec` (system calls only): a mount
    /// namespace of its own, a tmpfs over [`STAGE`], each path bound there, the working
    /// directory moved to `/` (the checkout's path may be under the tmpfs now), then every
    /// privilege given up for [`AGENT_UID`] for good.
    pub fn enter(&self) -> std::io::Result<()> {
        let check = |r: libc::c_int| {
            if r < 0 {
                Err(std::io::Error::last_os_error())
            } else {
                Ok(())
            }
        };
        // SAFETY: unshare, mount, mkdir, open, close, chdir, setgroups, setgid and setuid with
        // C strings prepared in the parent.
        unsafe {
            check(libc::unshare(libc::CLONE_NEWNS))?;
            check(libc::mount(
                std::ptr::null(),
                self.proc_root.as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            check(libc::mount(
                self.tmpfs.as_ptr(),
                self.stage_root.as_ptr(),
                self.tmpfs.as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                self.tmpfs_options.as_ptr().cast(),
            ))?;
            for staged in &self.staged {
                if staged.is_dir {
                    check(libc::mkdir(staged.stage.as_ptr(), 0o755))?;
                } else {
                    let fd = libc::open(
                        staged.stage.as_ptr(),
                        libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                        0o644,
                    );
                    check(fd)?;
                    libc::close(fd);
                }
                check(libc::mount(
                    staged.source_path.as_ptr(),
                    staged.stage.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ))?;
            }
            check(libc::chdir(self.proc_root.as_ptr()))?;
            check(libc::setgroups(0, std::ptr::null()))?;
            check(libc::setgid(AGENT_UID))?;
            check(libc::setuid(AGENT_UID))?;
        }
        // The descriptors of the sources are close-on-exec: bwrap gets none of them.
        Ok(())
    }
}

/// An `O_PATH` descriptor of `path`, close-on-exec: enough to mount from, nothing to read.
fn open_path(path: &Path) -> std::io::Result<OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    Ok(OwnedFd::from(file))
}

fn cstring(text: String) -> std::io::Result<CString> {
    CString::new(text).map_err(std::io::Error::other)
}

/// Makes `dir` and everything in it [`AGENT_UID`]'s own (the agent's scratch directory and
/// throwaway home, which deep-review made as root). Symbolic links are changed themselves,
/// never followed.
pub fn give_to_agent(dir: &Path) -> std::io::Result<()> {
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        std::os::unix::fs::lchown(&path, Some(AGENT_UID), Some(AGENT_UID))
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        if path.symlink_metadata()?.is_dir() {
            for entry in std::fs::read_dir(&path)? {
                pending.push(entry?.path());
            }
        }
    }
    Ok(())
}

/// Readies what the agent, as [`AGENT_UID`], must own or reach: its scratch directory, its
/// throwaway home and the `sandbox_write` directories deep-review just `created` become that
/// uid's; a granted path it still could not use is an error that names it and what to do.
pub fn prepare_for_agent(
    grants: &crate::dispatch::sandbox::Grants,
    places: &crate::dispatch::sandbox::AgentPlaces<'_>,
    created: &[PathBuf],
) -> std::io::Result<()> {
    for dir in [places.scratch, places.home]
        .into_iter()
        .chain(created.iter().map(PathBuf::as_path))
    {
        give_to_agent(dir)?;
    }
    let read: Vec<PathBuf> = places.spec.sandbox_read.clone();
    let unreachable = unreachable_grants(&read, &grants.write, &grants.sockets);
    match unreachable.first() {
        None => Ok(()),
        Some(first) => Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            first.clone(),
        )),
    }
}

/// The granted paths that [`AGENT_UID`] cannot use as granted, each with what to do: a
/// directory to read it cannot list, one to write it cannot write, a socket it cannot
/// connect to. Checked on the paths' own modes (their parents are staged by root).
pub fn unreachable_grants(read: &[PathBuf], write: &[PathBuf], sockets: &[PathBuf]) -> Vec<String> {
    let mut notes = Vec::new();
    let fix = format!("as root, agents run as uid {AGENT_UID}: give that uid access (chown or chmod) or leave it out");
    for (paths, need, what) in [
        (read, 0o5, "read"),
        (write, 0o7, "write"),
        (sockets, 0o2, "connect to"),
    ] {
        for path in paths {
            if !others_may(path, need) {
                notes.push(format!(
                    "the agent cannot {what} {}: {fix}",
                    crate::text::printable_line(&path.display().to_string())
                ));
            }
        }
    }
    notes
}

/// Whether `path`'s mode lets an unrelated uid (neither owner nor group) do `need` (rwx bits),
/// or the path is [`AGENT_UID`]'s own. A path that does not exist is not granted at all.
fn others_may(path: &Path, need: u32) -> bool {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Ok(meta) = std::fs::metadata(path) else {
        return true;
    };
    let need = if meta.is_dir() { need } else { need & 0o6 };
    if meta.uid() == AGENT_UID {
        return meta.permissions().mode() & (need << 6) == need << 6;
    }
    meta.permissions().mode() & need == need
}
