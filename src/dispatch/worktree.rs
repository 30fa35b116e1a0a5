//! A checkout of the head commit for agents, in a temporary directory.
//!
//! Agents never run in the user's checkout: each gets a copy of the commit under review (a dirty
//! working tree stays out of the review and out of reach). Two kinds:
//!
//! - [`Worktree::add`]: a linked worktree (`git worktree add --detach`), one per agent when
//!   agents are not confined. Its `.git` points into the repository's git directory, which the
//!   agent then reads whole.
//! - [`Worktree::borrowing`]: a repository of its own whose objects are borrowed from the
//!   user's (`objects/info/alternates`), with a copy of its refs, shared by every sandboxed agent.
//!   An agent needs only the objects: the repository's git directory also holds its
//!   `config` (where CI writes the job's token, `http.extraheader`, and users their remote's
//!   credentials), its hooks and deep-review's own store, none of which it should read.
//!
//! After the run the checkout is checked for changes, then removed, also when the run failed or
//! was cancelled ([`Drop`] removes it when nothing else did).

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
    /// A linked worktree (git keeps a record of it in the repository), not a repository of its
    /// own.
    linked: bool,
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
        Worktree::make(repo, sha, path, Worktree::register)
            .await?
            .check_out(cancel)
            .await
    }

    /// A repository of its own at `path` (which must not exist yet) whose objects are the
    /// user's repository's, borrowed through `objects/info/alternates` (nothing is copied), with
    /// a copy of its branch, remote and tag refs (and its `shallow` list: a shallow clone stays
    /// readable), and commit `sha` checked out. What its git directory holds is deep-review's:
    /// no config, hook or record of the user's.
    pub async fn borrowing(
        repo: &Path,
        sha: &str,
        path: &Path,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Worktree> {
        Worktree::make(repo, sha, path, Worktree::init_borrowing)
            .await?
            .check_out(cancel)
            .await
    }

    /// Runs `step` (git's bookkeeping of a new checkout: quick, blocking) on a blocking thread.
    async fn make(
        repo: &Path,
        sha: &str,
        path: &Path,
        step: fn(&Path, &str, &Path) -> Result<Worktree>,
    ) -> Result<Worktree> {
        let (repo, sha, path) = (repo.to_path_buf(), sha.to_string(), path.to_path_buf());
        tokio::task::spawn_blocking(move || step(&repo, &sha, &path))
            .await
            .context("the checkout task stopped unexpectedly")?
    }

    /// Writes the files of the head commit into the worktree (the slow part on a big
    /// repository), stopping when `cancel` fires.
    async fn check_out(self, cancel: &tokio_util::sync::CancellationToken) -> Result<Worktree> {
        let wt = self;
        let path = wt.path.clone();
        let path = path.as_path();
        // A failure drops `wt`, a failure drops `wt`, which removes the half-made worktree.
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
            linked: true,
            removed: false,
        })
    }

    /// `git init` at `path`, its objects borrowed from `repo`'s, its refs copied, HEAD detached
    /// at `sha`: everything but the files, which [`Worktree::check_out`] writes.
    fn init_borrowing(repo: &Path, sha: &str, path: &Path) -> Result<Worktree> {
        let sha = sha.to_ascii_lowercase();
        let common = crate::git::git_text(
            repo,
            &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        )?;
        let common = PathBuf::from(common);
        let format = crate::git::git_text(repo, &["rev-parse", "--show-object-format"])
            .unwrap_or_else(|_| "sha1".to_string());
        let mut init = std::ffi::OsString::from("--object-format=");
        init.push(&format);
        let out = git(
            repo,
            [
                OsStr::new("init"),
                OsStr::new("--quiet"),
                &init,
                path.as_os_str(),
            ],
        )
        .with_context(|| format!("could not run git in {}", repo.display()))?;
        if !out.status.success() {
            bail!(
                "could not make the checkout {}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let wt = Worktree {
            repo: repo.to_path_buf(),
            path: path.to_path_buf(),
            head: sha.clone(),
            linked: false,
            removed: false,
        };
        // From here on, a failure drops `wt`, which removes the half-made repository.
        let git_dir = path.join(".git");
        let alternates = object_dirs(&common)
            .iter()
            .map(|d| format!("{}\n", d.display()))
            .collect::<String>();
        std::fs::write(git_dir.join("objects/info/alternates"), alternates)
            .context("could not write the checkout's alternates")?;
        if let Ok(shallow) = std::fs::read(common.join("shallow")) {
            std::fs::write(git_dir.join("shallow"), shallow)
                .context("could not copy the shallow list")?;
        }
        let refs = git(
            repo,
            [
                "for-each-ref",
                "--format=%(objectname) %(refname)",
                "refs/heads",
                "refs/remotes",
                "refs/tags",
            ],
        )
        .with_context(|| format!("could not run git in {}", repo.display()))?;
        if refs.status.success() {
            std::fs::write(git_dir.join("packed-refs"), &refs.stdout)
                .context("could not copy the refs")?;
        }
        let out = git(path, ["update-ref", "--no-deref", "HEAD", sha.as_str()])
            .with_context(|| format!("could not run git in {}", path.display()))?;
        if !out.status.success() {
            bail!(
                "could not set the checkout's HEAD to {sha}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(wt)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// [`Worktree::changes`] as a task that owns what it needs, for a blocking thread.
    pub fn change_probe(&self) -> impl FnOnce() -> Vec<String> + Send + 'static {
        let (path, head) = (self.path.clone(), self.head.clone());
        move || changes_in(&path, &head)
    }

    /// What changed since the worktree was made: `git status --porcelain` lines (ignored files
    /// included: a fresh checkout has none) and a moved HEAD. Empty when untouched.
    pub fn changes(&self) -> Vec<String> {
        changes_in(&self.path, &self.head)
    }

    /// Removes the worktree and its directory (for a linked one, git then forgets it: `prune`).
    pub fn remove(mut self) -> Result<()> {
        self.removed = true;
        self.delete()
    }

    fn delete(&self) -> Result<()> {
        if self.linked {
            remove_worktree(&self.repo, &self.path)
        } else if self.path.exists() {
            std::fs::remove_dir_all(&self.path)
                .with_context(|| format!("could not delete checkout {}", self.path.display()))
        } else {
            Ok(())
        }
    }
}

/// The changes of the checkout at `path` whose HEAD should be `head`.
fn changes_in(path: &Path, head: &str) -> Vec<String> {
    let mut changes = Vec::new();
    match git(
        path,
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
    match git(path, ["rev-parse", "HEAD"]) {
        Ok(out) if out.status.success() => {
            let now = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if now != head {
                changes.push(format!("HEAD moved from {head} to {now}"));
            }
        }
        _ => changes.push("HEAD could not be read in the worktree".to_string()),
    }
    changes
}

impl Drop for Worktree {
    fn drop(&mut self) {
        if !self.removed {
            self.removed = true;
            let _ = self.delete();
        }
    }
}

/// The object directories a checkout borrowing from the repository at `common` needs: its own,
/// and those it borrows from in turn (`objects/info/alternates`, relative paths resolved).
pub fn object_dirs(common: &Path) -> Vec<PathBuf> {
    let objects = common.join("objects");
    let mut dirs = vec![objects.clone()];
    if let Ok(text) = std::fs::read_to_string(objects.join("info/alternates")) {
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let dir = objects.join(line);
            if dir.is_dir() && !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
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
