//! What a killed run leaves behind, and its removal by the next run.
//!
//! A run keeps its checkouts in one temporary directory named for its process
//! (`deep-review-run-<pid>-XXXXXX`, with a marker file). A run that ends normally removes it; a
//! run that was killed (SIGKILL, a second Ctrl-C, a crash) cannot. So every run first removes the
//! directories of runs whose process is gone, then has git forget their worktrees
//! (`git worktree prune`).

use std::path::{Path, PathBuf};

const PREFIX: &str = "deep-review-run-";
const MARKER: &str = ".deep-review-run";

/// This run's temporary directory for checkouts: removed when dropped or closed.
#[derive(Debug)]
pub struct WorkRoot(tempfile::TempDir);

impl WorkRoot {
    pub fn create() -> std::io::Result<WorkRoot> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{}-", std::process::id()))
            .tempdir()?;
        std::fs::write(dir.path().join(MARKER), std::process::id().to_string())?;
        Ok(WorkRoot(dir))
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }

    pub fn close(self) -> std::io::Result<()> {
        self.0.close()
    }
}

/// Removes the checkout directories of runs whose process is gone, then prunes `repo`'s
/// worktree records. Best effort: a run never fails because of another run's leftovers.
pub fn prune(repo: &Path) {
    let removed = prune_in(&std::env::temp_dir());
    if removed > 0 || has_stale_worktrees(repo) {
        let _ = crate::git::command(repo)
            .args(["worktree", "prune"])
            .output();
    }
}

/// Removes leftovers under `tmp`; returns how many.
pub fn prune_in(tmp: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let dir: PathBuf = entry.path();
        // Only directories this tool made (the marker) of processes that are gone.
        if pid == std::process::id() || process_alive(pid) || !dir.join(MARKER).is_file() {
            continue;
        }
        if std::fs::remove_dir_all(&dir).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Whether process `pid` exists: `kill(pid, 0)` sends nothing and fails with `ESRCH` only for
/// a process that is gone (`EPERM`: it is there, someone else's). Works where there is no
/// `/proc` (macOS).
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists.
    let sent = unsafe { libc::kill(pid, 0) };
    sent == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Whether git lists a worktree whose directory is gone (a run killed mid-way).
fn has_stale_worktrees(repo: &Path) -> bool {
    let Ok(out) = crate::git::command(repo)
        .args(["worktree", "list", "--porcelain"])
        .output()
    else {
        return false;
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .any(|p| !Path::new(p).exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftovers_of_dead_runs_go_and_live_ones_stay() {
        let tmp = tempfile::tempdir().unwrap();
        // A dead run: a pid that cannot be running (above the kernel's pid limit).
        let dead = tmp.path().join(format!("{PREFIX}4194999-abc"));
        std::fs::create_dir_all(dead.join("claude")).unwrap();
        std::fs::write(dead.join(MARKER), "4194999").unwrap();
        // This process's own directory, and a look-alike without the marker.
        let mine = tmp
            .path()
            .join(format!("{PREFIX}{}-xyz", std::process::id()));
        std::fs::create_dir_all(&mine).unwrap();
        std::fs::write(mine.join(MARKER), "me").unwrap();
        let foreign = tmp.path().join(format!("{PREFIX}4194998-q"));
        std::fs::create_dir_all(&foreign).unwrap();

        assert_eq!(prune_in(tmp.path()), 1);
        assert!(!dead.exists());
        assert!(mine.exists() && foreign.exists());
    }
}
