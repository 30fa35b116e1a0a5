//! `target::diff::changed_files` on real git repositories.

use crate::support::repo::Repo;
use deep_review::target::diff::changed_files;
use deep_review::types::{ChangeKind, ChangedFile, Hunk};

fn find<'a>(files: &'a [ChangedFile], path: &str) -> &'a ChangedFile {
    files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("{path} not in {files:#?}"))
}

fn lines(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn added_modified_deleted_with_counts_and_hunks() {
    let repo = Repo::new();
    repo.write("keep.txt", lines(10));
    repo.write("gone.txt", "a\nb\nc\n");
    let base = repo.commit("base");
    let mut text = lines(10).replace("line 3\n", "line three\n");
    text.push_str("line 11\nline 12\n");
    repo.write("keep.txt", text);
    std::fs::remove_file(repo.file("gone.txt")).unwrap();
    repo.write("src/new.rs", "fn main() {}\n");
    let head = repo.commit("change");

    let files = changed_files(repo.path(), &base, &head).unwrap();
    assert_eq!(files.len(), 3, "{files:#?}");

    let keep = find(&files, "keep.txt");
    assert_eq!(keep.kind, ChangeKind::Modified);
    assert_eq!((keep.added, keep.removed), (3, 1));
    assert_eq!(
        keep.hunks,
        vec![
            Hunk {
                old_start: 3,
                old_lines: 1,
                new_start: 3,
                new_lines: 1
            },
            Hunk {
                old_start: 10,
                old_lines: 0,
                new_start: 11,
                new_lines: 2
            },
        ]
    );

    let gone = find(&files, "gone.txt");
    assert_eq!(gone.kind, ChangeKind::Deleted);
    assert_eq!((gone.added, gone.removed), (0, 3));
    assert_eq!(
        gone.hunks,
        vec![Hunk {
            old_start: 1,
            old_lines: 3,
            new_start: 0,
            new_lines: 0
        }]
    );

    let new = find(&files, "src/new.rs");
    assert_eq!(new.kind, ChangeKind::Added);
    assert_eq!((new.added, new.removed), (1, 0));
    assert!(!new.binary && !new.submodule);
}

#[test]
fn renames_are_followed_with_old_path() {
    let repo = Repo::new();
    repo.write("old name.txt", lines(20));
    let base = repo.commit("base");
    std::fs::remove_file(repo.file("old name.txt")).unwrap();
    repo.write(
        "dir/new name.txt",
        lines(20).replace("line 5\n", "line five\n"),
    );
    let head = repo.commit("rename");

    let files = changed_files(repo.path(), &base, &head).unwrap();
    assert_eq!(files.len(), 1, "{files:#?}");
    let f = &files[0];
    assert_eq!(f.path, "dir/new name.txt");
    assert_eq!(f.old_path.as_deref(), Some("old name.txt"));
    assert_eq!(f.kind, ChangeKind::Renamed);
    assert_eq!((f.added, f.removed), (1, 1));
    assert_eq!(
        f.hunks,
        vec![Hunk {
            old_start: 5,
            old_lines: 1,
            new_start: 5,
            new_lines: 1
        }]
    );
}

#[test]
fn binary_files_have_no_counts_or_hunks() {
    let repo = Repo::new();
    repo.write("img.bin", [0u8, 1, 2, 3, 0, 255]);
    let base = repo.commit("base");
    repo.write("img.bin", [0u8, 9, 9, 9, 0, 255, 7]);
    repo.write("new.bin", [0u8; 64]);
    let head = repo.commit("binary");

    let files = changed_files(repo.path(), &base, &head).unwrap();
    for path in ["img.bin", "new.bin"] {
        let f = find(&files, path);
        assert!(f.binary, "{f:#?}");
        assert_eq!((f.added, f.removed), (0, 0));
        assert!(f.hunks.is_empty());
    }
    assert_eq!(find(&files, "new.bin").kind, ChangeKind::Added);
}

#[test]
fn submodules_are_listed_not_diffed() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n");
    let first = repo.commit("first");
    repo.write("a.txt", "b\n");
    let second = repo.commit("second");
    repo.add_gitlink("vendor/lib", &first);
    repo.git(&["commit", "-q", "-m", "add submodule"]);
    let with_sub = repo.git(&["rev-parse", "HEAD"]);
    repo.add_gitlink("vendor/lib", &second);
    repo.git(&["commit", "-q", "-m", "bump submodule"]);
    let bumped = repo.git(&["rev-parse", "HEAD"]);

    let files = changed_files(repo.path(), &second, &with_sub).unwrap();
    let sub = find(&files, "vendor/lib");
    assert!(sub.submodule);
    assert_eq!(sub.kind, ChangeKind::Added);
    assert_eq!((sub.added, sub.removed), (0, 0));
    assert!(sub.hunks.is_empty());

    let files = changed_files(repo.path(), &with_sub, &bumped).unwrap();
    let sub = find(&files, "vendor/lib");
    assert!(sub.submodule);
    assert_eq!(sub.kind, ChangeKind::Modified);
    assert!(sub.hunks.is_empty());
}

#[test]
fn odd_paths_and_header_like_content_survive() {
    let repo = Repo::new();
    repo.write("tab\there.txt", "x\n");
    repo.write("ünï.txt", "-- not a header\nkeep\n");
    let base = repo.commit("base");
    repo.write("tab\there.txt", "y\n");
    repo.write("ünï.txt", "keep\n+++ b/other\n");
    let head = repo.commit("odd");

    let files = changed_files(repo.path(), &base, &head).unwrap();
    assert_eq!(files.len(), 2, "{files:#?}");
    assert_eq!(find(&files, "tab\there.txt").hunks.len(), 1);
    let u = find(&files, "ünï.txt");
    assert_eq!((u.added, u.removed), (1, 1));
    assert_eq!(
        u.hunks,
        vec![
            Hunk {
                old_start: 1,
                old_lines: 1,
                new_start: 0,
                new_lines: 0
            },
            Hunk {
                old_start: 2,
                old_lines: 0,
                new_start: 2,
                new_lines: 1
            },
        ]
    );
}

#[test]
fn user_diff_settings_do_not_change_the_result() {
    let repo = Repo::new();
    repo.write("a.txt", lines(5));
    let base = repo.commit("base");
    repo.write("a.txt", lines(6));
    let head = repo.commit("more");
    repo.git(&["config", "diff.noprefix", "true"]);
    repo.git(&["config", "diff.mnemonicPrefix", "true"]);
    repo.git(&["config", "diff.renames", "false"]);
    repo.git(&["config", "color.diff", "always"]);

    let files = changed_files(repo.path(), &base, &head).unwrap();
    assert_eq!(
        find(&files, "a.txt").hunks,
        vec![Hunk {
            old_start: 5,
            old_lines: 0,
            new_start: 6,
            new_lines: 1
        }]
    );
}

#[test]
fn unknown_revision_is_a_clear_error() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n");
    let base = repo.commit("base");
    let err = changed_files(repo.path(), &base, "no-such-branch")
        .unwrap_err()
        .to_string();
    assert!(err.contains("no-such-branch"), "{err}");
    let err = changed_files(repo.path(), "--output=x", &base)
        .unwrap_err()
        .to_string();
    assert!(err.contains("may not start with"), "{err}");
}

#[test]
fn file_turned_symlink_is_one_type_change() {
    let repo = Repo::new();
    repo.write("target.txt", "t\n");
    repo.write("link", "a\nb\n");
    let base = repo.commit("base");
    std::fs::remove_file(repo.file("link")).unwrap();
    std::os::unix::fs::symlink("target.txt", repo.file("link")).unwrap();
    let head = repo.commit("symlink");

    let files = changed_files(repo.path(), &base, &head).unwrap();
    assert_eq!(files.len(), 1, "{files:#?}");
    let f = &files[0];
    assert_eq!((f.path.as_str(), f.kind), ("link", ChangeKind::TypeChanged));
    assert_eq!((f.added, f.removed), (1, 2));
    // git prints a type change as a deletion and a creation: both hunks land on the one file.
    assert_eq!(
        f.hunks,
        vec![
            Hunk {
                old_start: 1,
                old_lines: 2,
                new_start: 0,
                new_lines: 0
            },
            Hunk {
                old_start: 0,
                old_lines: 0,
                new_start: 1,
                new_lines: 1
            },
        ]
    );
}
