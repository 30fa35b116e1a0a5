//! One read-only checkout of the head commit per agent, in a temporary directory.
//!
//! Agents never run in the user's checkout: `git worktree add --detach` gives each one its own
//! copy of the commit under review (a dirty working tree stays out of the review and out of
//! reach). After the run the worktree is checked for changes, then removed, also when the
//! run failed or was cancelled ([`Drop`] removes it when nothing else did).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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
        let sha = resolve_commit(repo, head)?;
        // No hooks of the user's (a post-checkout hook could write into the worktree or take
        // long) and no LFS downloads (a review reads code, and the network may be off).
        let out = git(
            repo,
            [
                OsStr::new("-c"),
                OsStr::new("core.hooksPath=/dev/null"),
                OsStr::new("worktree"),
                OsStr::new("add"),
                OsStr::new("--detach"),
                OsStr::new("--quiet"),
                path.as_os_str(),
                OsStr::new(&sha),
            ],
        )
        .with_context(|| format!("could not run git in {}", repo.display()))?;
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
        Ok(wt)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The full sha of the checked-out commit.
    pub fn head(&self) -> &str {
        &self.head
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

fn remove_worktree(repo: &Path, path: &Path) -> Result<()> {
    let out = git(
        repo,
        [
            OsStr::new("worktree"),
            OsStr::new("remove"),
            OsStr::new("--force"),
            OsStr::new("--force"),
            path.as_os_str(),
        ],
    );
    // Whatever git said, the directory goes and the repo forgets it.
    let dir_result = if path.exists() {
        std::fs::remove_dir_all(path)
            .with_context(|| format!("could not delete worktree directory {}", path.display()))
    } else {
        Ok(())
    };
    let _ = git(repo, ["worktree", "prune"]);
    let out = out?;
    if !out.status.success() && path.exists() {
        bail!(
            "`git worktree remove {}` failed: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    dir_result
}

/// The full sha of a revision that names a commit.
pub fn resolve_commit(repo: &Path, rev: &str) -> Result<String> {
    let spec = format!("{rev}^{{commit}}");
    let out = git(
        repo,
        [
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            spec.as_str(),
        ],
    )
    .with_context(|| format!("could not run git in {}", repo.display()))?;
    if !out.status.success() {
        bail!(
            "`{rev}` is not a commit in {}: give a branch, tag or sha that exists there",
            repo.display()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn git<I, S>(dir: &Path, args: I) -> std::io::Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_LFS_SKIP_SMUDGE", "1")
        .stdin(std::process::Stdio::null())
        .output()
}
