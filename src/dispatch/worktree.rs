//! One read-only checkout of the head commit per agent, in a temporary directory.
//!
//! Agents never run in the user's checkout: `git worktree add --detach` gives each one its own
//! copy of the commit under review (a dirty working tree stays out of the review and out of
//! reach). After the run the worktree is checked for changes, then removed, also when the
//! run failed or was cancelled ([`Drop`] removes it when nothing else did).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Mutex;

use anyhow::{Context, Result, bail};

/// A detached worktree of one commit. Removed by [`Worktree::remove`] or on drop.
#[derive(Debug)]
pub struct Worktree {
    repo: PathBuf,
    path: PathBuf,
    /// The full sha checked out.
    head: String,
    removed: bool,
}

impl Worktree {
    /// Adds a detached worktree of `head` (any revision) at `path`, which must not exist yet.
    pub fn add(repo: &Path, head: &str, path: &Path) -> Result<Worktree> {
        let sha = if head.len() == 40 && head.bytes().all(|b| b.is_ascii_hexdigit()) {
            head.to_ascii_lowercase()
        } else {
            crate::git::resolve_commit(repo, head)?
        };
        // Two steps: `worktree add --no-checkout` only writes git's bookkeeping, quickly and
        // under a lock; the checkout that writes the files then runs unlocked, so agents'
        // worktrees fill in parallel. `reset --hard` runs no hook of the user's (a
        // post-checkout hook could write into the worktree), and LFS files stay pointers (a
        // review reads code, and the network may be off).
        let args = [
            OsStr::new("worktree"),
            OsStr::new("add"),
            OsStr::new("--detach"),
            OsStr::new("--no-checkout"),
            OsStr::new("--quiet"),
            path.as_os_str(),
            OsStr::new(&sha),
        ];
        // One at a time in this process (see `GIT_LOCK`); tried again after a short wait,
        // because another git process (the user's, another run) may be at it too.
        let add = || locked(|| git(repo, args));
        let mut out = add().with_context(|| format!("could not run git in {}", repo.display()))?;
        for wait_ms in [100, 400] {
            if out.status.success() || path.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(wait_ms));
            out = add().with_context(|| format!("could not run git in {}", repo.display()))?;
        }
        if !out.status.success() {
            bail!(
                "`git worktree add --detach {} {}` failed in {}: {}",
                path.display(),
                sha,
                repo.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let wt = Worktree {
            repo: repo.to_path_buf(),
            path: path.to_path_buf(),
            head: sha,
            removed: false,
        };
        // From here on, a failure drops `wt`, which removes the half-made worktree.
        let out = git(path, ["reset", "--hard", "--quiet", "HEAD"])
            .with_context(|| format!("could not run git in {}", path.display()))?;
        if !out.status.success() {
            bail!(
                "could not check out {} in worktree {}: {}",
                wt.head,
                path.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(wt)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What changed since the worktree was made: `git status --porcelain` lines (ignored files
    /// included: a fresh checkout has none) and a moved HEAD. Empty when untouched.
    pub fn changes(&self) -> Vec<String> {
        let mut changes = Vec::new();
        match git(
            &self.path,
            [
                "status",
                "--porcelain",
                "--ignored",
                "--untracked-files=all",
            ],
        ) {
            Ok(out) if out.status.success() => {
                changes.extend(
                    String::from_utf8_lossy(&out.stdout)
                        .lines()
                        .filter(|l| !l.trim().is_empty())
                        .map(str::to_string),
                );
            }
            Ok(out) => changes.push(format!(
                "git status failed in the worktree: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )),
            Err(err) => changes.push(format!("git status could not run in the worktree: {err}")),
        }
        match git(&self.path, ["rev-parse", "HEAD"]) {
            Ok(out) if out.status.success() => {
                let now = String::from_utf8_lossy(&out.stdout).trim().to_string();
                if now != self.head {
                    changes.push(format!("HEAD moved from {} to {now}", self.head));
                }
            }
            _ => changes.push("HEAD could not be read in the worktree".to_string()),
        }
        changes
    }

    /// Removes the worktree (`git worktree remove --force`, then `prune`) and its directory.
    pub fn remove(mut self) -> Result<()> {
        self.removed = true;
        remove_worktree(&self.repo, &self.path)
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        if !self.removed {
            self.removed = true;
            let _ = remove_worktree(&self.repo, &self.path);
        }
    }
}

/// Runs `f` while no other thread of this process adds or prunes a worktree. Git does not
/// guard concurrent `worktree add`s of one repository against each other: one may read the
/// other's half-written `.git/worktrees/NAME/` and fail ("failed to read
/// .git/worktrees/NAME/commondir"), and a `worktree prune` may forget a worktree that is being
/// added. Measured here, adds in parallel lost more time to such failures than queueing costs:
/// each add (`--no-checkout`) is a few milliseconds; the checkout itself runs unlocked.
fn locked<T>(f: impl FnOnce() -> T) -> T {
    static GIT_LOCK: Mutex<()> = Mutex::new(());
    let _guard = GIT_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    f()
}

/// Deletes the worktree's files, then has git forget it (`worktree prune`).
fn remove_worktree(repo: &Path, path: &Path) -> Result<()> {
    let deleted = if path.exists() {
        std::fs::remove_dir_all(path)
            .with_context(|| format!("could not delete worktree directory {}", path.display()))
    } else {
        Ok(())
    };
    let pruned = locked(|| git(repo, ["worktree", "prune"]));
    deleted?;
    let out = pruned.with_context(|| format!("could not run git in {}", repo.display()))?;
    if !out.status.success() {
        bail!(
            "`git worktree prune` failed in {}: {}",
            repo.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

fn git<I, S>(dir: &Path, args: I) -> std::io::Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    crate::git::command(dir).args(args).output()
}
