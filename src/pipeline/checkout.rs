//! "Your checkout was not touched", checked rather than assumed. Agents run in their own
//! checkout under a sandbox, but the report only says the user's checkout is as it was after
//! comparing it before and after the agents ran: HEAD, the index, the working tree (every dirty
//! or untracked file by size and time), `.git/config` and the hooks.
//!
//! Everything is read with the project's git runner, which pins `core.fsmonitor` and
//! `core.hooksPath` off: reading the checkout runs nothing its config names.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::types::CheckoutCheck;

/// What was read, as comparable parts with a name each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot(Vec<(&'static str, String)>);

/// Reads the checkout at `repo` (its top level). `store`, deep-review's own record, is left out
/// when `--store` puts it inside the working tree: the run writes there.
pub fn snapshot(repo: &Path, store: &Path) -> Snapshot {
    let git = |args: &[&str]| -> String {
        crate::git::git_bytes(repo, args)
            .map(|b| hash(&b))
            .unwrap_or_else(|e| format!("unreadable: {e:#}"))
    };
    let mut status_args = vec![
        "status".to_string(),
        "--porcelain=v1".into(),
        "-z".into(),
        "--untracked-files=all".into(),
        "--".into(),
        ".".into(),
    ];
    status_args.extend(
        crate::git::path_within(repo, store).map(|rel| format!(":(top,exclude,literal){rel}")),
    );
    let status_args: Vec<&str> = status_args.iter().map(String::as_str).collect();
    let status = crate::git::git_bytes(repo, &status_args).unwrap_or_default();
    // A file already dirty before the run stays in `status` if an agent edits it again: its
    // size and time say whether it changed.
    let mut dirty = Vec::new();
    for entry in status.split(|b| *b == 0).filter(|e| e.len() > 3) {
        let path = String::from_utf8_lossy(&entry[3..]).into_owned();
        let meta = std::fs::symlink_metadata(repo.join(&path))
            .map(|m| {
                use std::os::unix::fs::MetadataExt;
                format!("{} {} {}", m.len(), m.mtime(), m.mtime_nsec())
            })
            .unwrap_or_else(|_| "gone".into());
        dirty.push(format!("{path} {meta}"));
    }
    let git_dir = crate::git::git_text(repo, &["rev-parse", "--absolute-git-dir"])
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| repo.join(".git"));
    Snapshot(vec![
        ("HEAD", head(repo)),
        ("the index", git(&["ls-files", "--stage", "-z"])),
        (
            "the working tree",
            hash(&[status.as_slice(), dirty.join("\n").as_bytes()].concat()),
        ),
        (".git/config", file_hash(&git_dir.join("config"))),
        ("the hooks", dir_listing(&git_dir.join("hooks"))),
    ])
}

/// What differs between two snapshots, as the report says it.
pub fn compare(before: &Snapshot, after: &Snapshot) -> CheckoutCheck {
    let changed: Vec<String> = before
        .0
        .iter()
        .zip(&after.0)
        .filter(|(b, a)| b.1 != a.1)
        .map(|(b, _)| b.0.to_string())
        .collect();
    CheckoutCheck {
        checked: before.0.iter().map(|(name, _)| name.to_string()).collect(),
        changed,
    }
}

fn head(repo: &Path) -> String {
    let sha = crate::git::git_text(repo, &["rev-parse", "--verify", "--quiet", "HEAD"])
        .unwrap_or_default();
    let branch =
        crate::git::git_text(repo, &["symbolic-ref", "--quiet", "HEAD"]).unwrap_or_default();
    format!("{branch} {sha}")
}

fn hash(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn file_hash(path: &Path) -> String {
    std::fs::read(path)
        .map(|b| hash(&b))
        .unwrap_or_else(|_| "absent".into())
}

/// Every file under `dir` with its size and content hash (hooks are small).
fn dir_listing(dir: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return "absent".into();
    };
    let mut lines: Vec<String> = entries
        .flatten()
        .map(|e| {
            format!(
                "{} {}",
                e.file_name().to_string_lossy(),
                file_hash(&e.path())
            )
        })
        .collect();
    lines.sort();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn every_kind_of_change_to_the_checkout_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        git(repo, &["init", "-q"]);
        git(repo, &["config", "user.email", "t@example.com"]);
        git(repo, &["config", "user.name", "T"]);
        std::fs::write(repo.join("a.rs"), "a\n").unwrap();
        git(repo, &["add", "."]);
        git(repo, &["commit", "-qm", "one"]);
        // Dirty before the run, as a user's checkout often is.
        std::fs::write(repo.join("a.rs"), "a dirty\n").unwrap();
        // A store that `--store` put in the working tree.
        let store = repo.join("my-store");
        std::fs::create_dir_all(&store).unwrap();
        let before = snapshot(repo, &store);
        // deep-review's own writes are not changes to the checkout.
        std::fs::write(store.join("x.md"), "report").unwrap();
        assert!(compare(&before, &snapshot(repo, &store)).changed.is_empty());

        std::fs::write(repo.join("a.rs"), "a dirtier, and longer\n").unwrap();
        std::fs::write(repo.join(".git/hooks/post-checkout"), "#!/bin/sh\n").unwrap();
        git(repo, &["config", "core.fsmonitor", "touch /tmp/x"]);
        let check = compare(&before, &snapshot(repo, &store));
        assert_eq!(
            check.changed,
            ["the working tree", ".git/config", "the hooks"],
            "{check:?}"
        );
    }
}
