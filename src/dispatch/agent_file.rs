//! The one way deep-review reads a file an agent could have written (its scratch directory and
//! TMPDIR, its throwaway home, its `sandbox_write` directories). deep-review reads it outside
//! the sandbox, as the user (often root), so the file is hostile input in the strongest sense:
//! the agent chooses what the path is.
//!
//! - No symbolic link is followed, the file's own name or any directory on the way: the path
//!   is walked from a directory deep-review made and trusts, one component at a time, each
//!   opened relative to the last with `O_NOFOLLOW` (a link to `/root/.ssh/id_ed25519` or a
//!   linked parent directory is refused, not read).
//! - The file is opened with `O_NONBLOCK`, so a FIFO cannot block the open (and so the run past
//!   its deadline), and only a regular file is read, as the open descriptor says (`fstat`, not
//!   a check of the path that the agent could swap after it).
//! - At most a cap of bytes is read: a file that grows without end (or a device that never
//!   ends) costs the cap, not all memory.
//!
//! A refusal is an error with one sentence saying what was refused and why, for the run's
//! notes. `openat`, `O_NOFOLLOW`, `O_NONBLOCK` and `fstat` are POSIX: the same on Linux and
//! macOS.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

use rustix::fs::{FileType, Mode, OFlags};

/// Why a file an agent wrote was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// There is no such file: nothing to note, the agent wrote none.
    Missing,
    /// The file is there but was not read; the sentence says why.
    Unsafe(String),
}

impl Refused {
    /// The note for the run's record, or `None` when the file is simply absent.
    pub fn note(&self) -> Option<&str> {
        match self {
            Refused::Missing => None,
            Refused::Unsafe(why) => Some(why),
        }
    }
}

/// Reads `relative` under `trusted` (a directory deep-review made; its own path is trusted),
/// following no link, reading a regular file only and at most `cap` bytes.
pub fn read(trusted: &Path, relative: &Path, cap: u64) -> Result<Vec<u8>, Refused> {
    let shown = trusted.join(relative);
    let shown = crate::text::printable_line(&shown.display().to_string());
    let refuse = |why: &str| Refused::Unsafe(format!("{shown} was not read: {why}"));
    let names = components(relative).ok_or_else(|| refuse("its path leaves its directory"))?;
    let Some((file_name, dirs)) = names.split_last() else {
        return Err(refuse("it names no file"));
    };
    let mut dir = open_dir(None, trusted).map_err(|e| opened(e, &refuse))?;
    for name in dirs {
        dir = open_dir(Some(&dir), Path::new(name)).map_err(|e| opened(e, &refuse))?;
    }
    let file = rustix::fs::openat(
        &dir,
        Path::new(file_name),
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| opened(e, &refuse))?;
    let stat = rustix::fs::fstat(&file).map_err(|e| refuse(&format!("fstat failed: {e}")))?;
    let kind = FileType::from_raw_mode(stat.st_mode as _);
    if kind != FileType::RegularFile {
        return Err(refuse(&format!(
            "it is a {}, not a regular file",
            kind_name(kind)
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::from(file)
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| refuse(&format!("reading it failed: {e}")))?;
    if bytes.len() as u64 > cap {
        return Err(refuse(&format!("it is larger than {cap} bytes")));
    }
    Ok(bytes)
}

/// Removes `relative` under `trusted` (a stale file an agent wrote, before the next attempt),
/// following no link on the way: a linked parent directory could otherwise point the removal at
/// a file of the user's. A missing file is no error.
pub fn remove(trusted: &Path, relative: &Path) -> std::io::Result<()> {
    let invalid = || std::io::Error::from(std::io::ErrorKind::InvalidInput);
    let names = components(relative).ok_or_else(invalid)?;
    let (file_name, dirs) = names.split_last().ok_or_else(invalid)?;
    let walk = || -> rustix::io::Result<()> {
        let mut dir = open_dir(None, trusted)?;
        for name in dirs {
            dir = open_dir(Some(&dir), Path::new(name))?;
        }
        rustix::fs::unlinkat(&dir, Path::new(file_name), rustix::fs::AtFlags::empty())
    };
    match walk() {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
        Err(err) => Err(err.into()),
    }
}

/// [`read`] as text (lossy UTF-8).
pub fn read_text(trusted: &Path, relative: &Path, cap: u64) -> Result<String, Refused> {
    read(trusted, relative, cap).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The plain names of `relative`, or `None` when it is absolute or climbs out (`..`).
fn components(relative: &Path) -> Option<Vec<&std::ffi::OsStr>> {
    relative
        .components()
        .filter(|c| *c != Component::CurDir)
        .map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect()
}

/// Opens a directory (relative to `parent`, or the trusted root itself), following no link.
fn open_dir(parent: Option<&OwnedFd>, name: &Path) -> rustix::io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    match parent {
        Some(dir) => rustix::fs::openat(dir, name, flags | OFlags::NOFOLLOW, Mode::empty()),
        None => rustix::fs::open(name, flags, Mode::empty()),
    }
}

/// An open that failed: absent, a link (`ELOOP` for the file; `ENOTDIR` for a linked
/// directory opened with `O_DIRECTORY | O_NOFOLLOW`), or another error.
fn opened(err: rustix::io::Errno, refuse: &impl Fn(&str) -> Refused) -> Refused {
    match err {
        rustix::io::Errno::NOENT => Refused::Missing,
        rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR => {
            refuse("it or a directory on its path is a symbolic link or not a directory")
        }
        other => refuse(&format!("it could not be opened: {other}")),
    }
}

fn kind_name(kind: FileType) -> &'static str {
    match kind {
        FileType::Fifo => "FIFO",
        FileType::CharacterDevice => "character device",
        FileType::BlockDevice => "block device",
        FileType::Socket => "socket",
        FileType::Directory => "directory",
        FileType::Symlink => "symbolic link",
        _ => "special file",
    }
}

#[cfg(test)]
#[path = "agent_file_tests.rs"]
mod tests;
