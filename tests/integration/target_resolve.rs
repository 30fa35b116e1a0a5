//! `target::resolve` on real git repositories: the forms of TARGET, upstreams, detached HEAD,
//! and a dirty working tree that must stay as it was.

use std::process::Command;

use crate::support::repo::Repo;
use deep_review::target::{TargetSpec, resolve};
use deep_review::types::ChangeKind;
use deep_review::types::{PrInfo, RequestKind};

fn spec(target: Option<&str>) -> TargetSpec {
    TargetSpec {
        target: target.map(str::to_string),
        ..TargetSpec::default()
    }
}

/// main: base commit, then `later on main` after feat forked. feat: two commits.
/// Returns (fork sha, feat head sha). Leaves `feat` checked out.
fn forked_repo(repo: &Repo) -> (String, String) {
    repo.write("README.md", "hello\n");
    repo.write("src/lib.rs", "pub fn a() {}\n");
    let fork = repo.commit("initial");
    repo.git(&["checkout", "-q", "-b", "feat"]);
    repo.write("src/lib.rs", "pub fn a() {}\npub fn b() {}\n");
    repo.commit("Add b");
    repo.write("src/new.rs", "pub fn c() {}\n");
    let head = repo.commit("Add c");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("MAIN_ONLY.md", "later\n");
    repo.commit("later on main");
    repo.git(&["checkout", "-q", "feat"]);
    (fork, head)
}

fn paths(t: &deep_review::types::Target) -> Vec<&str> {
    t.changed_files.iter().map(|f| f.path.as_str()).collect()
}

#[test]
fn named_branch_is_reviewed_from_its_merge_base_with_main() {
    let repo = Repo::new();
    let (fork, head) = forked_repo(&repo);
    repo.git(&["checkout", "-q", "main"]);

    let t = resolve(repo.path(), &spec(Some("feat"))).unwrap();
    assert_eq!(t.head, head);
    assert_eq!(t.merge_base, fork);
    assert_eq!(t.base_ref, "main");
    assert_ne!(
        t.base, fork,
        "base is main's tip, merge-base the fork point"
    );
    assert_eq!(t.branch.as_deref(), Some("feat"));
    assert_eq!(t.label, "feat");
    assert_eq!(t.author.as_deref(), Some("Test Author"));
    let subjects: Vec<&str> = t.commits.iter().map(|c| c.subject.as_str()).collect();
    assert_eq!(subjects, ["Add b", "Add c"]);
    let last = &t.commits[1].sha;
    assert!(
        last.len() >= 7 && last.len() < 40 && head.starts_with(last.as_str()),
        "{last}"
    );
    assert_eq!(
        paths(&t),
        ["src/lib.rs", "src/new.rs"],
        "main's later commit is not part of it"
    );
    assert_eq!(t.diff_command(), format!("git diff {fork}..{head}"));
    assert_eq!(
        t.repo.canonicalize().unwrap(),
        repo.path().canonicalize().unwrap()
    );
}

#[test]
fn base_dot_dot_head_and_triple_dot() {
    let repo = Repo::new();
    let (fork, head) = forked_repo(&repo);
    for form in ["main..feat", "main...feat"] {
        let t = resolve(repo.path(), &spec(Some(form))).unwrap();
        assert_eq!(
            (t.merge_base.as_str(), t.head.as_str()),
            (fork.as_str(), head.as_str()),
            "{form}"
        );
        assert_eq!(t.branch.as_deref(), Some("feat"));
    }
    // Shas on both sides: no branch, the label is the head's short sha.
    let t = resolve(repo.path(), &spec(Some(&format!("{fork}..{head}")))).unwrap();
    assert_eq!(t.branch, None);
    assert_eq!(t.label, head[..12]);
    assert_eq!(t.commits.len(), 2);
}

#[test]
fn base_and_head_flags_override_the_target() {
    let repo = Repo::new();
    let (fork, _head) = forked_repo(&repo);
    let first_feat = repo.git(&["rev-parse", "feat~1"]);
    let s = TargetSpec {
        target: Some("main..feat".into()),
        head: Some("feat~1".into()),
        base: Some(fork.clone()),
        ..TargetSpec::default()
    };
    let t = resolve(repo.path(), &s).unwrap();
    assert_eq!(t.head, first_feat);
    assert_eq!(t.merge_base, fork);
    assert_eq!(paths(&t), ["src/lib.rs"]);
}

#[test]
fn nothing_means_current_branch_against_main() {
    let repo = Repo::new();
    let (fork, head) = forked_repo(&repo);
    let t = resolve(repo.path(), &spec(None)).unwrap();
    assert_eq!((t.merge_base, t.head), (fork, head));
    assert_eq!(t.branch.as_deref(), Some("feat"));
    assert_eq!(t.base_ref, "main");
}

#[test]
fn master_is_a_default_branch_too() {
    let repo = Repo::new();
    repo.git(&["checkout", "-q", "-b", "master"]);
    repo.write("a", "a\n");
    let fork = repo.commit("a");
    repo.git(&["checkout", "-q", "-b", "topic"]);
    repo.write("b", "b\n");
    repo.commit("b");
    let t = resolve(repo.path(), &spec(None)).unwrap();
    assert_eq!(t.base_ref, "master");
    assert_eq!(t.merge_base, fork);
}

/// A clone of a repo whose origin has `main` and `develop`.
fn clone_with_develop() -> (Repo, tempfile::TempDir, String, String) {
    let upstream = Repo::new();
    upstream.write("a.txt", "a\n");
    let main_tip = upstream.commit("on main");
    upstream.git(&["checkout", "-q", "-b", "develop"]);
    upstream.write("d.txt", "d\n");
    let develop_tip = upstream.commit("on develop");
    upstream.git(&["checkout", "-q", "main"]);
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new("git")
        .args(["clone", "-q"])
        .arg(upstream.path())
        .arg(dir.path().join("clone"))
        .status()
        .unwrap();
    assert!(status.success());
    let clone = Repo {
        dir: tempfile::tempdir().unwrap(),
    };
    // Move the clone into the Repo's own temp dir so it is cleaned up with it.
    std::fs::remove_dir(clone.path()).unwrap();
    std::fs::rename(dir.path().join("clone"), clone.path()).unwrap();
    clone.git(&["config", "user.name", "Test Author"]);
    clone.git(&["config", "user.email", "author@example.com"]);
    (clone, dir, main_tip, develop_tip)
}

#[test]
fn nothing_uses_the_upstream_when_it_is_another_branch() {
    let (clone, _keep, _main_tip, develop_tip) = clone_with_develop();
    clone.git(&["checkout", "-q", "-b", "feat", "--track", "origin/develop"]);
    clone.write("f.txt", "f\n");
    let head = clone.commit("feature work");

    let t = resolve(clone.path(), &spec(None)).unwrap();
    assert_eq!(t.base_ref, "origin/develop");
    assert_eq!(t.merge_base, develop_tip);
    assert_eq!(t.head, head);
    assert_eq!(paths(&t), ["f.txt"]);
}

#[test]
fn own_remote_copy_as_upstream_falls_back_to_origin_head() {
    let (clone, _keep, main_tip, _develop_tip) = clone_with_develop();
    clone.git(&["checkout", "-q", "-b", "feat", "origin/main"]);
    clone.write("f.txt", "f\n");
    clone.commit("feature work");
    // Pretend it was pushed: origin/feat == feat, and feat tracks it.
    clone.git(&["update-ref", "refs/remotes/origin/feat", "HEAD"]);
    clone.git(&["branch", "-q", "--set-upstream-to=origin/feat"]);

    let t = resolve(clone.path(), &spec(None)).unwrap();
    assert_eq!(
        t.base_ref, "origin/main",
        "origin/HEAD points at origin/main"
    );
    assert_eq!(t.merge_base, main_tip);
    assert_eq!(paths(&t), ["f.txt"]);
}

#[test]
fn detached_head_has_no_branch() {
    let repo = Repo::new();
    let (fork, head) = forked_repo(&repo);
    repo.git(&["checkout", "-q", "--detach", "feat"]);
    let t = resolve(repo.path(), &spec(None)).unwrap();
    assert_eq!(t.branch, None);
    assert_eq!((t.merge_base, t.head.clone()), (fork, head.clone()));
    assert_eq!(t.label, head[..12]);
}

#[test]
fn pr_metadata_names_the_label() {
    let repo = Repo::new();
    forked_repo(&repo);
    let s = TargetSpec {
        pr: Some(PrInfo {
            number: 236,
            title: "Implement it".into(),
            url: None,
            kind: RequestKind::PullRequest,
        }),
        description: Some("Body".into()),
        ..spec(Some("feat"))
    };
    let t = resolve(repo.path(), &s).unwrap();
    assert_eq!(t.label, "pr-236");
    assert_eq!(t.title().as_deref(), Some("Implement it"));
    assert_eq!(t.description.as_deref(), Some("Body"));
    let mut mr = s.clone();
    mr.pr.as_mut().unwrap().kind = RequestKind::MergeRequest;
    assert_eq!(resolve(repo.path(), &mr).unwrap().label, "mr-236");
}

#[test]
fn renames_binaries_and_submodules_come_through() {
    let repo = Repo::new();
    repo.write("old.txt", "one\ntwo\nthree\nfour\nfive\n");
    repo.write("logo.png", [0u8, 1, 2, 0]);
    let base = repo.commit("base");
    repo.git(&["checkout", "-q", "-b", "feat"]);
    std::fs::rename(repo.file("old.txt"), repo.file("new.txt")).unwrap();
    repo.write("logo.png", [0u8, 3, 4, 0, 5]);
    repo.git(&["add", "-A"]);
    repo.add_gitlink("third_party/dep", &base);
    repo.git(&["commit", "-q", "-m", "rename, binary, submodule"]);

    let t = resolve(repo.path(), &spec(Some("feat"))).unwrap();
    let by = |p: &str| t.changed_files.iter().find(|f| f.path == p).unwrap();
    assert_eq!(by("new.txt").kind, ChangeKind::Renamed);
    assert_eq!(by("new.txt").old_path.as_deref(), Some("old.txt"));
    assert!(by("logo.png").binary);
    assert!(by("third_party/dep").submodule);
    assert_eq!(t.changed_files.len(), 3);
}

#[test]
fn dirty_working_tree_is_neither_reviewed_nor_touched() {
    let repo = Repo::new();
    let (_fork, head) = forked_repo(&repo);
    repo.write("src/lib.rs", "uncommitted edit\n");
    repo.write("staged.txt", "staged\n");
    repo.git(&["add", "staged.txt"]);
    repo.write("untracked.txt", "untracked\n");
    let status_before = repo.git(&["status", "--porcelain=v1", "-uall"]);
    let lib_before = std::fs::read(repo.file("src/lib.rs")).unwrap();

    let t = resolve(repo.path(), &spec(None)).unwrap();
    assert_eq!(t.head, head);
    assert_eq!(paths(&t), ["src/lib.rs", "src/new.rs"]);
    let lib = t
        .changed_files
        .iter()
        .find(|f| f.path == "src/lib.rs")
        .unwrap();
    assert_eq!(
        (lib.added, lib.removed),
        (1, 0),
        "the committed change, not the edit"
    );

    assert_eq!(
        repo.git(&["status", "--porcelain=v1", "-uall"]),
        status_before
    );
    assert_eq!(std::fs::read(repo.file("src/lib.rs")).unwrap(), lib_before);
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), head);
}

#[test]
fn errors_are_one_clear_sentence() {
    let repo = Repo::new();
    forked_repo(&repo);
    let err = resolve(repo.path(), &spec(Some("foo")))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("`foo` is not a branch or commit in "),
        "{err}"
    );
    assert!(err.contains("git branch -a"), "{err}");

    let err = resolve(repo.path(), &spec(Some("main..nope")))
        .unwrap_err()
        .to_string();
    assert!(err.contains("`nope` is not a branch or commit"), "{err}");

    repo.git(&["checkout", "-q", "main"]);
    let err = resolve(repo.path(), &spec(None)).unwrap_err().to_string();
    assert!(err.starts_with("nothing to review"), "{err}");

    let not_repo = tempfile::tempdir().unwrap();
    let err = resolve(not_repo.path(), &spec(None))
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not inside a git repository"), "{err}");

    let empty = Repo::new();
    let err = resolve(empty.path(), &spec(None)).unwrap_err().to_string();
    assert!(err.contains("has no commits yet"), "{err}");
}

#[test]
fn no_default_branch_asks_for_a_base() {
    let repo = Repo::new();
    repo.git(&["checkout", "-q", "-b", "trunk"]);
    repo.write("a", "a\n");
    repo.commit("a");
    repo.git(&["checkout", "-q", "-b", "topic"]);
    repo.write("b", "b\n");
    repo.commit("b");
    let err = resolve(repo.path(), &spec(None)).unwrap_err().to_string();
    assert!(err.contains("--base REV"), "{err}");
    let t = resolve(
        repo.path(),
        &TargetSpec {
            base: Some("trunk".into()),
            ..spec(None)
        },
    )
    .unwrap();
    assert_eq!(t.commits.len(), 1);
}
