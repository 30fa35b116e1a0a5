//! Reviewing before committing: the working tree's changes (staged, unstaged, and untracked
//! files that are not ignored) become one commit object on top of HEAD, which the rest of the
//! pipeline reviews like any other commit.
//!
//! The user's index, working tree, stash and refs are left exactly as they were: the snapshot is
//! staged into a private copy of the index (`GIT_INDEX_FILE` in a temporary directory), written
//! as a tree with `write-tree` and wrapped with `commit-tree`, which updates no ref. The only
//! trace is the new objects in the object store, unreachable, which `git gc` prunes in time.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::git::git_probe;

/// What the snapshot commit says it is.
pub const SNAPSHOT_SUBJECT: &str = "Uncommitted changes in the working tree (not a real commit)";

/// Makes a commit whose tree is the working tree of the repository at `root` and whose parent is
/// `parent` (HEAD's sha), and returns its sha. The folders of `leave_out` that are in the working
/// tree (deep-review's own records) are not part of it. An error when there is nothing to
/// review.
pub fn snapshot_commit(root: &Path, parent: &str, leave_out: &[PathBuf]) -> anyhow::Result<String> {
    let scratch = tempfile::Builder::new()
        .prefix("deep-review-index-")
        .tempdir()
        .context("cannot make a temporary directory for the snapshot of the working tree")?;
    let index = scratch.path().join("index");

    // Start from a copy of the real index: it knows which tracked files are unchanged (their
    // stat data), so `git add -A` hashes only what changed, and files tracked despite a
    // `.gitignore` stay tracked. Without an index, start from HEAD's tree.
    match real_index(root) {
        Some(real) if real.is_file() => {
            std::fs::copy(&real, &index).with_context(|| {
                format!(
                    "cannot copy the git index {} to snapshot the working tree",
                    real.display()
                )
            })?;
        }
        _ => {
            with_index(root, &index, &["read-tree", parent])?;
        }
    }
    // Staged, unstaged and untracked-but-not-ignored, over the whole tree.
    let mut add = vec!["add".to_string(), "--all".into(), "--".into(), ":/".into()];
    add.extend(
        leave_out
            .iter()
            .filter_map(|dir| crate::git::path_within(root, dir))
            .map(|rel| format!(":(top,exclude,literal){rel}")),
    );
    let add: Vec<&str> = add.iter().map(String::as_str).collect();
    with_index(root, &index, &add)?;
    let tree = with_index(root, &index, &["write-tree"])?;

    let head_tree = git_probe(root, &["rev-parse", &format!("{parent}^{{tree}}")]);
    if head_tree.as_deref() == Some(tree.as_str()) {
        anyhow::bail!(
            "nothing to review: the working tree of {} has no changes against HEAD (staged, \
             unstaged or untracked files that are not ignored)",
            root.display()
        );
    }

    crate::git::commit_tree(root, &tree, &[parent], SNAPSHOT_SUBJECT)
}

/// The path of the repository's index file (`.git/index`, or a worktree's own).
fn real_index(root: &Path) -> Option<PathBuf> {
    let rel = git_probe(root, &["rev-parse", "--git-path", "index"])?;
    let path = PathBuf::from(rel);
    Some(if path.is_absolute() {
        path
    } else {
        root.join(path)
    })
}

/// Runs git with `GIT_INDEX_FILE` pointing at the private index.
fn with_index(root: &Path, index: &Path, args: &[&str]) -> anyhow::Result<String> {
    let mut cmd = crate::git::command(root);
    cmd.args(args).env("GIT_INDEX_FILE", index);
    stdout_of(cmd, args[0], root)
}

fn stdout_of(mut cmd: std::process::Command, what: &str, root: &Path) -> anyhow::Result<String> {
    let out = cmd.output().with_context(|| {
        format!(
            "could not start `git` in {}: is git installed and on PATH?",
            root.display()
        )
    })?;
    if !out.status.success() {
        anyhow::bail!(
            "could not snapshot the working tree of {}: `git {what}` failed: {}",
            root.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
