//! `TargetSpec::uncommitted` (`run --uncommitted`) on real repositories: the working tree's
//! staged, unstaged and untracked changes are reviewed as one commit object on top of HEAD,
//! and the index, the working tree, the stash and the refs are byte-identical afterwards.

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::repo::Repo;
use deep_review::target::{TargetSpec, resolve};
use deep_review::types::ChangeKind;

fn uncommitted() -> TargetSpec {
    TargetSpec {
        uncommitted: true,
        ..TargetSpec::default()
    }
}

/// Every file under `dir` (`.git/index` and the working tree; not git's object store, where the
/// snapshot's objects are meant to go) with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".git/objects" || rel == ".git/logs" {
                continue;
            }
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// main with three files; then every kind of uncommitted change.
fn dirty_repo() -> (Repo, String) {
    let repo = Repo::new();
    repo.write(".gitignore", "*.log\n");
    repo.write("src/lib.rs", "pub fn a() {}\n");
    repo.write("src/partly.rs", "one\n");
    repo.write("gone.txt", "bye\n");
    let head = repo.commit("initial");
    // Unstaged edit.
    repo.write("src/lib.rs", "pub fn a() {}\npub fn b() {}\n");
    // Staged new file.
    repo.write("src/staged.rs", "pub fn s() {}\n");
    repo.git(&["add", "src/staged.rs"]);
    // Staged, then edited again: the working tree's version is what is reviewed.
    repo.write("src/partly.rs", "two\n");
    repo.git(&["add", "src/partly.rs"]);
    repo.write("src/partly.rs", "three\n");
    // Untracked, deleted, ignored.
    repo.write("notes/new.md", "untracked\n");
    std::fs::remove_file(repo.file("gone.txt")).unwrap();
    repo.write("debug.log", "ignored\n");
    (repo, head)
}

#[test]
fn working_tree_changes_are_reviewed_and_nothing_is_touched() {
    let (repo, head) = dirty_repo();
    let files_before = snapshot(repo.path());
    let index_before = std::fs::read(repo.file(".git/index")).unwrap();
    let status_before = repo.git(&["status", "--porcelain=v2", "-uall", "--ignored"]);
    let refs_before = repo.git(&["for-each-ref"]);

    let t = resolve(repo.path(), &uncommitted()).unwrap();

    assert_eq!(t.base, head);
    assert_eq!(t.merge_base, head);
    assert_eq!(t.base_ref, "HEAD");
    assert_ne!(t.head, head);
    assert_eq!(repo.git(&["rev-parse", &format!("{}^", t.head)]), head);
    assert_eq!(t.branch.as_deref(), Some("main"));
    assert_eq!(t.label, "main-uncommitted");
    assert_eq!(t.commits.len(), 1);
    assert!(t.commits[0].subject.starts_with("Uncommitted changes"));

    let mut paths: Vec<(&str, ChangeKind)> = t
        .changed_files
        .iter()
        .map(|f| (f.path.as_str(), f.kind))
        .collect();
    paths.sort_by_key(|p| p.0);
    assert_eq!(
        paths,
        [
            ("gone.txt", ChangeKind::Deleted),
            ("notes/new.md", ChangeKind::Added),
            ("src/lib.rs", ChangeKind::Modified),
            ("src/partly.rs", ChangeKind::Modified),
            ("src/staged.rs", ChangeKind::Added),
        ],
        "staged, unstaged, untracked and deleted; the ignored debug.log is not"
    );
    assert_eq!(
        repo.git(&["show", &format!("{}:src/partly.rs", t.head)]),
        "three",
        "the working tree's version, not the staged one"
    );

    // Byte-identical afterwards: .git/index, every working file, status, refs, stash.
    assert_eq!(
        std::fs::read(repo.file(".git/index")).unwrap(),
        index_before
    );
    assert_eq!(snapshot(repo.path()), files_before);
    assert_eq!(
        repo.git(&["status", "--porcelain=v2", "-uall", "--ignored"]),
        status_before
    );
    assert_eq!(repo.git(&["for-each-ref"]), refs_before);
    assert_eq!(repo.git(&["stash", "list"]), "");
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), head);
    // The staged-only version is still what is staged.
    assert_eq!(repo.git(&["show", ":src/partly.rs"]), "two");
}

#[test]
fn a_clean_working_tree_has_nothing_to_review() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n");
    repo.commit("a");
    repo.write("ignored.log", "x\n");
    repo.write(".git/info/exclude", "*.log\n");
    let err = resolve(repo.path(), &uncommitted())
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("nothing to review"), "{err}");
    assert!(err.contains("no changes against HEAD"), "{err}");
}

#[test]
fn with_a_base_the_branch_and_its_edits_are_reviewed_together() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n");
    let fork = repo.commit("a");
    repo.git(&["checkout", "-q", "-b", "feat"]);
    repo.write("b.txt", "b\n");
    repo.commit("add b");
    repo.write("c.txt", "c, not committed\n");

    let t = resolve(
        repo.path(),
        &TargetSpec {
            base: Some("main".into()),
            ..uncommitted()
        },
    )
    .unwrap();
    assert_eq!(t.merge_base, fork);
    let mut paths: Vec<&str> = t.changed_files.iter().map(|f| f.path.as_str()).collect();
    paths.sort();
    assert_eq!(paths, ["b.txt", "c.txt"]);
    assert_eq!(t.commits.len(), 2);

    let err = resolve(
        repo.path(),
        &TargetSpec {
            target: Some("main..feat".into()),
            ..uncommitted()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("takes no head"), "{err}");
}
