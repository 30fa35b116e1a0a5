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
    /// Adds a detached worktree of commit `sha` (a full sha) at `path`, which must not exist
    /// yet, and checks the commit out into it. The checkout is the slow part on a big
    /// repository; it stops when `cancel` fires (the half-made worktree is removed), so a Ctrl-C
    /// during setup does not wait for it.
    pub async fn add(
        repo: &Path,
        sha: &str,
        path: &Path,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Worktree> {
        let wt = {
            let (repo, sha, path) = (repo.to_path_buf(), sha.to_string(), path.to_path_buf());
            tokio::task::spawn_blocking(move || Worktree::register(&repo, &sha, &path))
                .await
                .context("the worktree task stopped unexpectedly")??
        };
        // From here on, a failure drops `wt`, which removes the half-made worktree.
        let mut checkout = tokio::process::Command::from(crate::git::command(path));
        checkout
            .args(["reset", "--hard", "--quiet", "HEAD"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let out = tokio::select! {
            out = checkout.output() => out.with_context(|| format!("could not run git in {}", path.display()))?,
            _ = cancel.cancelled() => bail!("cancelled while checking out {}", wt.head),
        };
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

    /// `git worktree add --no-checkout`: only git's bookkeeping, quickly and under a lock.
    fn register(repo: &Path, sha: &str, path: &Path) -> Result<Worktree> {
        let sha = sha.to_ascii_lowercase();
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
        Ok(Worktree {
            repo: repo.to_path_buf(),
            path: path.to_path_buf(),
            head: sha,
            removed: false,
        })
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
