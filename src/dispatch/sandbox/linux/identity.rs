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
use std::os::unix::ffi::OsStrExt;
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

/// One granted path and where it is staged.
struct Staged {
    source: CString,
    /// `STAGE/N`.
    stage: CString,
    is_dir: bool,
}

/// The granted paths of one attempt, ready to be staged in its child.
pub struct Staging {
    staged: Vec<Staged>,
    stage_root: CString,
    tmpfs: CString,
    tmpfs_options: CString,
    root: CString,
}

impl Staging {
    /// Readies each of `paths` (as root, before any uid change): a path that is not there is
    /// an error that names it.
    pub fn open(paths: &[PathBuf]) -> std::io::Result<Staging> {
        if paths.len() > MAX_STAGED {
            return Err(std::io::Error::other(format!(
                "{} paths granted: at most {MAX_STAGED} can be bound",
                paths.len()
            )));
        }
        let mut staged = Vec::with_capacity(paths.len());
        for (i, path) in paths.iter().enumerate() {
            let is_dir = std::fs::metadata(path)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?
                .is_dir();
            staged.push(Staged {
                source: CString::new(path.as_os_str().as_bytes()).map_err(std::io::Error::other)?,
                stage: cstring(format!("{STAGE}/{i}"))?,
                is_dir,
            });
        }
        Ok(Staging {
            staged,
            stage_root: cstring(STAGE.to_string())?,
            tmpfs: cstring("tmpfs".to_string())?,
            tmpfs_options: cstring("mode=0755,size=64k".to_string())?,
            root: cstring("/".to_string())?,
        })
    }

    /// Where bwrap finds the `i`-th path given to [`Staging::open`].
    pub fn stage_of(i: usize) -> PathBuf {
        Path::new(STAGE).join(i.to_string())
    }

    /// In the child, as root, between `fork` and `exec` (system calls only): a mount
    /// namespace of its own; each granted path opened in it (a bind's source must be a mount
    /// of the caller's namespace), a tmpfs over [`STAGE`], each path bound there from its
    /// descriptor (its own path may be under the tmpfs now); the working directory moved to
    /// `/`; then every privilege given up for [`AGENT_UID`] for good.
    pub fn enter(&self) -> std::io::Result<()> {
        // SAFETY: unshare and mount with C strings prepared in the parent.
        unsafe {
            check(libc::unshare(libc::CLONE_NEWNS))?;
            check(libc::mount(
                std::ptr::null(),
                self.root.as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
        }
        let mut sources = [0 as libc::c_int; MAX_STAGED];
        for (fd, staged) in sources.iter_mut().zip(&self.staged) {
            // SAFETY: open with a C string prepared in the parent.
            *fd = unsafe { libc::open(staged.source.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
            check(*fd)?;
        }
        // SAFETY: mount with C strings prepared in the parent.
        unsafe {
            check(libc::mount(
                self.tmpfs.as_ptr(),
                self.stage_root.as_ptr(),
                self.tmpfs.as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                self.tmpfs_options.as_ptr().cast(),
            ))?;
        }
        for (fd, staged) in sources.iter().zip(&self.staged) {
            bind_staged(*fd, staged)?;
        }
        give_standard_pipes()?;
        // SAFETY: chdir, setgroups, setgid and setuid with a C string and integers.
        unsafe {
            check(libc::chdir(self.root.as_ptr()))?;
            check(libc::setgroups(0, std::ptr::null()))?;
            check(libc::setgid(AGENT_UID))?;
            check(libc::setuid(AGENT_UID))?;
        }
        Ok(())
    }
}

/// Makes the pipes deep-review gave the child as its standard streams [`AGENT_UID`]'s: a
/// pipe made by root is root's (mode 0600), and a program that opens `/dev/stdin` or
/// `/dev/stderr` (links into `/proc/self/fd`) opens it anew, by its owner's permissions. Only
/// pipes: a stream that is a file or a device is left as it is. System calls only.
fn give_standard_pipes() -> std::io::Result<()> {
    for fd in 0..3 {
        // SAFETY: fstat into a stack value and fchown of the child's own descriptors.
        unsafe {
            let mut stat: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut stat) == 0 && stat.st_mode & libc::S_IFMT == libc::S_IFIFO {
                check(libc::fchown(fd, AGENT_UID, AGENT_UID))?;
            }
        }
    }
    Ok(())
}

/// The most granted paths one agent may have staged (the checkout, its objects, programs,
/// its own directories, and what the config adds).
const MAX_STAGED: usize = 256;

/// A system call's result as an error, when it failed.
fn check(result: libc::c_int) -> std::io::Result<()> {
    if result < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Makes `staged.stage` (a directory, or an empty file for a file) and binds the path open at
/// `fd` there, by `/proc/self/fd/N`; closes `fd`. System calls only.
fn bind_staged(fd: libc::c_int, staged: &Staged) -> std::io::Result<()> {
    let mut path = [0u8; 32];
    let source = proc_fd_path(fd, &mut path);
    // SAFETY: mkdir, open, close and mount with C strings, the one built on the stack above.
    unsafe {
        if staged.is_dir {
            check(libc::mkdir(staged.stage.as_ptr(), 0o755))?;
        } else {
            let file = libc::open(
                staged.stage.as_ptr(),
                libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                0o644,
            );
            check(file)?;
            libc::close(file);
        }
        check(libc::mount(
            source,
            staged.stage.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        ))?;
        libc::close(fd);
    }
    Ok(())
}

/// `/proc/self/fd/N` as a C string in `buf`, without allocating (between `fork` and `exec`).
fn proc_fd_path(fd: libc::c_int, buf: &mut [u8; 32]) -> *const libc::c_char {
    const PREFIX: &[u8] = b"/proc/self/fd/";
    buf[..PREFIX.len()].copy_from_slice(PREFIX);
    let mut digits = [0u8; 10];
    let mut n = fd.unsigned_abs();
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..len {
        buf[PREFIX.len() + i] = digits[len - 1 - i];
    }
    buf[PREFIX.len() + len] = 0;
    buf.as_ptr().cast()
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
    let fix = format!(
        "as root, agents run as uid {AGENT_UID}: give that uid access (chown or chmod) or leave it out"
    );
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    /// A directory only its owner may enter is named, one every uid may use is not; one made
    /// the agent's is its own to write.
    #[test]
    fn the_descriptor_path_is_built_without_allocating() {
        let mut buf = [0u8; 32];
        let path = proc_fd_path(1234, &mut buf);
        // SAFETY: proc_fd_path wrote a NUL-terminated string into buf.
        let text = unsafe { std::ffi::CStr::from_ptr(path) };
        assert_eq!(text.to_str().unwrap(), "/proc/self/fd/1234");
        let path = proc_fd_path(0, &mut buf);
        // SAFETY: as above.
        let text = unsafe { std::ffi::CStr::from_ptr(path) };
        assert_eq!(text.to_str().unwrap(), "/proc/self/fd/0");
    }

    #[test]
    fn grants_the_agents_uid_cannot_use_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let private = dir.path().join("private");
        let open = dir.path().join("open");
        std::fs::create_dir(&private).unwrap();
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let notes = unreachable_grants(&[private.clone(), open.clone()], &[], &[]);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("cannot read") && notes[0].contains("private"));
        assert!(notes[0].contains(&AGENT_UID.to_string()));
        // Writing needs w for others, or the directory being the agent's own.
        assert_eq!(
            unreachable_grants(&[], std::slice::from_ref(&open), &[]).len(),
            1
        );
        if drops_root() {
            std::fs::write(open.join("seed"), "x").unwrap();
            give_to_agent(&open).unwrap();
            assert_eq!(
                std::fs::metadata(open.join("seed")).unwrap().uid(),
                AGENT_UID
            );
            assert!(unreachable_grants(&[], &[open], &[]).is_empty());
        }
    }
}
