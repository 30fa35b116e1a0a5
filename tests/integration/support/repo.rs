//! Real git repositories in temp dirs, made with the git CLI, for the target, brief, run and
//! verify tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A git repository in a temp dir, deleted on drop.
pub struct Repo {
    pub dir: tempfile::TempDir,
}

impl Repo {
    /// `git init -b main` with an identity, in a fresh temp dir.
    pub fn new() -> Repo {
        let dir = tempfile::tempdir().expect("temp dir");
        let repo = Repo { dir };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "user.name", "Test Author"]);
        repo.git(&["config", "user.email", "author@example.com"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo.git(&["config", "core.autocrlf", "false"]);
        repo
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn file(&self, rel: &str) -> PathBuf {
        self.path().join(rel)
    }

    /// The repository's store: `deep-review/` in its git directory.
    pub fn store(&self) -> PathBuf {
        self.path().join(".git/deep-review")
    }

    /// Runs git in the repo; panics with its stderr when it fails (test setup only).
    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(self.path())
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
            .env("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {:?} failed: {}",
            args,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.file(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, content).unwrap();
    }

    /// Publishes the repository as a forge holds it: a bare upstream with `main` and `branch` at
    /// `head_ref` (where the forge keeps a change's head, which clones do not fetch), and a
    /// checkout cloned from it over git's transport (`--no-local`, as from a server), so only
    /// `main` comes. Returns (upstream, checkout).
    pub fn publish(&self, branch: &str, head_ref: &str) -> (tempfile::TempDir, tempfile::TempDir) {
        let upstream = tempfile::tempdir().unwrap();
        let upstream_path = upstream.path().to_str().unwrap();
        self.git(&["init", "-q", "--bare", upstream_path]);
        self.git(&["remote", "add", "upstream", upstream_path]);
        self.git(&["push", "-q", "upstream", "main"]);
        self.git(&["push", "-q", "upstream", &format!("{branch}:{head_ref}")]);
        let checkout = tempfile::tempdir().unwrap();
        let checkout_path = checkout.path().to_str().unwrap();
        self.git(&["clone", "-q", "--no-local", upstream_path, checkout_path]);
        (upstream, checkout)
    }

    /// `git add -A && git commit -m MSG`, returning the new sha.
    pub fn commit(&self, msg: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", msg]);
        self.git(&["rev-parse", "HEAD"])
    }

    /// Points `path` at `sha` as a submodule (a gitlink), without needing a second repository.
    /// Makes the (empty) directory too, as git leaves it for a submodule not checked out, so a
    /// later `git add -A` does not stage the submodule's removal.
    pub fn add_gitlink(&self, path: &str, sha: &str) {
        std::fs::create_dir_all(self.file(path)).unwrap();
        self.git(&[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{sha},{path}"),
        ]);
    }
}
