//! The git environments CI hands deep-review, on real repositories: a shallow clone, a checkout
//! owned by another user, a bare repository, and a clone with no local base branch.

use std::path::Path;
use std::process::Command;

use crate::support::repo::Repo;
use deep_review::target::{TargetSpec, resolve};

fn spec(target: Option<&str>) -> TargetSpec {
    TargetSpec {
        target: target.map(str::to_string),
        ..TargetSpec::default()
    }
}

/// Runs plain git (no user or system config) in `dir`.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// An upstream with `main` (three commits) and `feat` (two commits off main's second).
fn upstream() -> Repo {
    let up = Repo::new();
    up.write("a.txt", "1\n");
    up.commit("one");
    up.write("a.txt", "2\n");
    up.commit("two");
    up.git(&["checkout", "-q", "-b", "feat"]);
    up.write("f.txt", "f1\n");
    up.commit("feat one");
    up.write("f.txt", "f2\n");
    up.commit("feat two");
    up.git(&["checkout", "-q", "main"]);
    up.write("a.txt", "3\n");
    up.commit("three");
    up
}

/// `git clone ARGS <upstream> <dir>/clone`, returning the clone's path.
fn clone(up: &Repo, dir: &Path, args: &[&str]) -> std::path::PathBuf {
    let url = format!("file://{}", up.path().display());
    let dest = dir.join("clone");
    let mut all = vec!["clone", "-q"];
    all.extend_from_slice(args);
    all.push(&url);
    let dest_str = dest.to_str().unwrap().to_string();
    all.push(&dest_str);
    git(dir, &all);
    dest
}

#[test]
fn shallow_clone_names_unshallow_and_fetch_depth() {
    let up = upstream();
    let dir = tempfile::tempdir().unwrap();
    let c = clone(&up, dir.path(), &["--depth", "1", "--no-single-branch"]);
    git(&c, &["checkout", "-q", "-b", "feat", "origin/feat"]);

    for target in [Some("origin/main..origin/feat"), Some("main..feat"), None] {
        let err = resolve(&c, &spec(target)).unwrap_err().to_string();
        assert!(err.contains("share no history"), "{target:?}: {err}");
        assert!(err.contains("shallow clone"), "{target:?}: {err}");
        assert!(err.contains("git fetch --unshallow"), "{target:?}: {err}");
        assert!(err.contains("fetch-depth: 0"), "{target:?}: {err}");
    }

    // Doing what the message says makes the review possible.
    git(&c, &["fetch", "-q", "--unshallow"]);
    let t = resolve(&c, &spec(None)).unwrap();
    assert_eq!(t.base_ref, "origin/main");
    let subjects: Vec<&str> = t.commits.iter().map(|c| c.subject.as_str()).collect();
    assert_eq!(subjects, ["feat one", "feat two"]);
}

#[test]
fn shallow_clone_without_any_base_says_to_fetch_one() {
    let up = upstream();
    let dir = tempfile::tempdir().unwrap();
    // What a CI checkout of one branch gives: that branch's tip and nothing else.
    let c = clone(&up, dir.path(), &["--depth", "1", "--branch", "feat"]);
    git(&c, &["remote", "set-head", "origin", "--delete"]);
    git(&c, &["checkout", "-q", "-b", "topic"]);
    git(&c, &["branch", "-q", "-D", "feat"]);
    let err = resolve(&c, &spec(None)).unwrap_err().to_string();
    assert!(err.contains("no base to compare"), "{err}");
    assert!(err.contains("shallow clone"), "{err}");
    assert!(err.contains("fetch-depth: 0"), "{err}");
}

#[test]
fn missing_local_base_falls_back_to_origin() {
    let up = upstream();
    let dir = tempfile::tempdir().unwrap();
    let c = clone(&up, dir.path(), &["--branch", "feat"]);
    // No local main: only origin/main.
    assert!(!git(&c, &["branch", "--list"]).contains("main"));
    let main_tip = git(up.path(), &["rev-parse", "main"]);
    let fork = git(up.path(), &["rev-parse", "main~1"]);

    let t = resolve(&c, &spec(Some("main..feat"))).unwrap();
    assert_eq!(t.base_ref, "origin/main");
    assert_eq!(t.base, main_tip);
    assert_eq!(t.merge_base, fork);
    assert_eq!(t.commits.len(), 2);

    let t = resolve(
        &c,
        &TargetSpec {
            base: Some("main".into()),
            ..spec(None)
        },
    )
    .unwrap();
    assert_eq!(t.base_ref, "origin/main");

    // A name that is nowhere still says so.
    let err = resolve(&c, &spec(Some("nosuch..feat")))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("`nosuch` is not a branch or commit"),
        "{err}"
    );
}

#[test]
fn bare_repository_and_git_dir_get_their_own_messages() {
    let up = upstream();
    let dir = tempfile::tempdir().unwrap();
    let bare = clone(&up, dir.path(), &["--bare"]);
    let err = resolve(&bare, &spec(Some("main..feat")))
        .unwrap_err()
        .to_string();
    assert!(err.contains("is a bare repository"), "{err}");
    assert!(err.contains("git clone"), "{err}");
    assert!(!err.contains("not inside a git repository"), "{err}");

    let err = resolve(&up.path().join(".git"), &spec(None))
        .unwrap_err()
        .to_string();
    assert!(err.contains("inside a .git directory"), "{err}");
}

/// A checkout owned by another user, as in a CI container: as root, the repository is given to
/// another uid with chown, so git itself refuses it. (Not root: git's own switch for the same
/// refusal, `GIT_TEST_ASSUME_DIFFERENT_OWNER`.) Run through the binary, with an empty global
/// git config of its own, so a `safe.directory = *` on the machine cannot hide the refusal; then
/// the command the message gives is run, and the same review works.
#[test]
fn other_owner_is_reported_as_git_says_it_with_the_safe_directory_fix() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n");
    repo.commit("a");
    repo.git(&["checkout", "-q", "-b", "feat"]);
    repo.write("a.txt", "b\n");
    repo.commit("b");

    let root = unsafe { libc::geteuid() } == 0;
    if root {
        let status = Command::new("chown")
            .args(["-R", "4242:4242"])
            .arg(repo.path())
            .status()
            .unwrap();
        assert!(status.success(), "chown as root");
    }
    let home = tempfile::tempdir().unwrap();
    let global = home.path().join("gitconfig");
    std::fs::write(&global, "").unwrap();
    let run = || {
        let mut cmd = assert_cmd::Command::cargo_bin("deep-review").unwrap();
        cmd.args(["run", "--dry-run", "main..feat"])
            .current_dir(repo.path())
            .env("XDG_CONFIG_HOME", home.path())
            .env("GIT_CONFIG_GLOBAL", &global)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("SUDO_UID")
            .env_remove("CI");
        if !root {
            cmd.env("GIT_TEST_ASSUME_DIFFERENT_OWNER", "1");
        }
        cmd.output().unwrap()
    };

    let out = run();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("detected dubious ownership in repository at"),
        "{stderr}"
    );
    assert!(!stderr.contains("not inside a git repository"), "{stderr}");
    let fix = stderr
        .split('`')
        .find(|s| s.starts_with("git config --global --add safe.directory "))
        .unwrap_or_else(|| panic!("no safe.directory command in {stderr}"))
        .to_string();

    // The fix, as the message gives it.
    let status = Command::new("sh")
        .args(["-c", &fix])
        .env("GIT_CONFIG_GLOBAL", &global)
        .status()
        .unwrap();
    assert!(status.success(), "{fix}");
    if root {
        let out = run();
        assert!(
            out.status.success(),
            "after `{fix}`: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("nothing was run"));
    }
}

/// `consolidate --repo` and `trust` on a checkout another user owns give git's refusal and the
/// `safe.directory` command, as `run`, `list`, `stats` and `resolve` do (issue 33 item 5), not
/// "not a git repository". Set up as above: chown as root, git's own switch otherwise.
#[test]
fn consolidate_and_trust_give_the_safe_directory_advice_too() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n");
    repo.commit("a");
    let review = tempfile::tempdir().unwrap();
    let raw = review.path().join("r.md");
    std::fs::write(
        &raw,
        "**Verdict**: Merge\n\n## Executive Summary\n\nFine.\n",
    )
    .unwrap();
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        let status = Command::new("chown")
            .args(["-R", "4242:4242"])
            .arg(repo.path())
            .status()
            .unwrap();
        assert!(status.success(), "chown as root");
    }
    let home = tempfile::tempdir().unwrap();
    let global = home.path().join("gitconfig");
    std::fs::write(&global, "").unwrap();
    let repo_arg = repo.path().to_str().unwrap().to_string();
    let raw_arg = format!("a={}", raw.display());
    for args in [
        vec!["consolidate", "--raw", &raw_arg, "--repo", &repo_arg],
        vec!["trust", "--repo", &repo_arg],
    ] {
        let mut cmd = assert_cmd::Command::cargo_bin("deep-review").unwrap();
        cmd.args(&args)
            .current_dir(home.path())
            .env("XDG_CONFIG_HOME", home.path())
            .env("GIT_CONFIG_GLOBAL", &global)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("SUDO_UID")
            .env_remove("CI");
        if !root {
            cmd.env("GIT_TEST_ASSUME_DIFFERENT_OWNER", "1");
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("dubious ownership")
                && stderr.contains("git config --global --add safe.directory "),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("not a git repository"), "{stderr}");
        assert!(!stderr.contains("not inside a git repository"), "{stderr}");
    }
}
