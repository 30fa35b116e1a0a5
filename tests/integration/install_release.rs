//! The install path of release binaries: scripts/install-release.sh (what the GitHub Action, the
//! GitLab template and the docs run) against a release served from 127.0.0.1, laid out as dist
//! lays out a GitHub release (`TAG/deep-review-TARGET.tar.gz` holding
//! `deep-review-TARGET/deep-review`, its `.sha256`, and `sha256.sum` for every archive), with
//! the deep-review binary this test build made. Real bash, curl, tar and git.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

use crate::install_release_support::{Release, action_install_step, run_script, tag_of_this_build};

#[test]
fn installs_the_release_binary_after_checking_its_checksum() {
    let release = Release::serve(&tag_of_this_build());
    let dest = TempDir::new().unwrap();
    let out = run_script(
        &release,
        &["--version", &release.tag, "--dest"],
        dest.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bin_dir = dest.path().join("bin");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        bin_dir.to_str().unwrap()
    );
    assert_eq!(
        version_of(&bin_dir.join("deep-review")),
        version_of(&built_binary())
    );
    assert!(stderr(&out).contains("SHA-256"), "{}", stderr(&out));
    let agents =
        std::fs::read(dest.path().join("share/deep-review/install-agent-clis.sh")).unwrap();
    assert_eq!(
        agents,
        std::fs::read(root().join("scripts/install-agent-clis.sh")).unwrap()
    );
    assert_eq!(
        release.requests(),
        vec![
            format!("/{}/sha256.sum", release.tag),
            release.archive_path()
        ]
    );
}

#[test]
fn a_tampered_archive_is_refused_and_nothing_installed() {
    let release = Release::serve(&tag_of_this_build());
    // A binary of the attacker's, packed as the release is, after sha256.sum was written.
    release.replace_binary_after_checksums("#!/bin/sh\necho pwned\n");
    let dest = TempDir::new().unwrap();
    std::fs::create_dir_all(dest.path().join("bin")).unwrap();
    std::fs::write(dest.path().join("bin/deep-review"), "the previous install").unwrap();
    let out = run_script(
        &release,
        &["--version", &release.tag, "--dest"],
        dest.path(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(
        message.contains(&format!("the SHA-256 of {}", release.archive_name())),
        "{message}"
    );
    assert!(
        message.contains("tampered with; nothing was installed"),
        "{message}"
    );
    let kept = std::fs::read_to_string(dest.path().join("bin/deep-review")).unwrap();
    assert_eq!(kept, "the previous install");
    assert_eq!(
        std::fs::read_dir(dest.path().join("bin")).unwrap().count(),
        1,
        "no partial file left"
    );
}

#[test]
fn an_archive_the_checksum_file_does_not_list_is_refused() {
    let release = Release::serve(&tag_of_this_build());
    release.write_checksums("");
    let dest = TempDir::new().unwrap();
    let out = run_script(
        &release,
        &["--version", &release.tag, "--dest"],
        dest.path(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("lists no checksum of"),
        "{}",
        stderr(&out)
    );
    assert!(!dest.path().join("bin/deep-review").exists());
}

#[test]
fn a_version_without_a_release_exits_3_for_a_source_build() {
    let release = Release::serve(&tag_of_this_build());
    let dest = TempDir::new().unwrap();
    let out = run_script(&release, &["--version", "v99.0.0", "--dest"], dest.path());
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("v99.0.0/sha256.sum (HTTP 404)"),
        "{}",
        stderr(&out)
    );
    assert!(!dest.path().join("bin").exists());
}

#[test]
fn a_release_of_another_version_is_refused() {
    // The server's v99.0.0 holds this build's binary, which says another version.
    let release = Release::serve("v99.0.0");
    let dest = TempDir::new().unwrap();
    let out = run_script(&release, &["--version", "v99.0.0", "--dest"], dest.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not version 99.0.0"),
        "{}",
        stderr(&out)
    );
    assert!(!dest.path().join("bin/deep-review").exists());
}

#[test]
fn plain_http_to_another_host_is_refused_before_any_download() {
    let release = Release::serve(&tag_of_this_build());
    let dest = TempDir::new().unwrap();
    let out = Command::new("bash")
        .arg(script())
        .args(["--version", &release.tag, "--dest"])
        .arg(dest.path())
        .env(
            "DEEP_REVIEW_RELEASE_URL",
            "http://releases.example.invalid/download",
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("must be an https URL"),
        "{}",
        stderr(&out)
    );
    assert!(release.requests().is_empty());
}

#[test]
fn the_action_step_installs_the_release_its_tagged_commit_names() {
    let release = Release::serve(&tag_of_this_build());
    let repo = release.tagged_repo();
    let dest = TempDir::new().unwrap();
    let run = action_install_step(&release, &repo, &repo.released, dest.path());
    assert_eq!(run.output.status.code(), Some(0), "{}", stderr(&run.output));
    assert_eq!(run.github_output, "installed=true\n");
    let installed = dest.path().join(".deep-review/bin/deep-review");
    assert_eq!(version_of(&installed), version_of(&built_binary()));
}

#[test]
fn the_action_step_at_a_commit_without_a_release_says_it_builds_from_source() {
    let release = Release::serve(&tag_of_this_build());
    let repo = release.tagged_repo();
    let dest = TempDir::new().unwrap();
    for ref_ in [repo.later.as_str(), "main"] {
        let run = action_install_step(&release, &repo, ref_, dest.path());
        assert_eq!(run.output.status.code(), Some(0), "{}", stderr(&run.output));
        assert_eq!(run.github_output, "installed=false\n", "{ref_}");
        let said = String::from_utf8_lossy(&run.output.stdout);
        assert!(
            said.contains("has no release binary (above): building deep-review from source"),
            "{said}"
        );
        assert!(!dest.path().join(".deep-review/bin/deep-review").exists());
    }
    assert!(
        release.requests().is_empty(),
        "nothing is downloaded for a commit without a release"
    );
}

#[test]
fn the_action_step_fails_on_a_tampered_release() {
    let release = Release::serve(&tag_of_this_build());
    release.replace_binary_after_checksums("#!/bin/sh\necho pwned\n");
    let repo = release.tagged_repo();
    let dest = TempDir::new().unwrap();
    let run = action_install_step(&release, &repo, &release.tag, dest.path());
    assert_eq!(run.output.status.code(), Some(1), "{}", stderr(&run.output));
    assert!(run.github_output.is_empty(), "{}", run.github_output);
    assert!(
        stderr(&run.output).contains("tampered with"),
        "{}",
        stderr(&run.output)
    );
    assert!(!dest.path().join(".deep-review/bin/deep-review").exists());
}

#[test]
fn the_gitlab_template_carries_this_very_script() {
    let template = std::fs::read_to_string(root().join("templates/deep-review.yml")).unwrap();
    let script = std::fs::read_to_string(script()).unwrap();
    let embedded = crate::install_release_support::embedded_script(&template);
    assert!(
        embedded == script,
        "templates/deep-review.yml's install-release.sh differs from scripts/install-release.sh: copy the script into the template's heredoc"
    );
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn script() -> PathBuf {
    root().join("scripts/install-release.sh")
}

pub(crate) fn built_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_deep-review"))
}

fn version_of(bin: &Path) -> String {
    let out = Command::new(bin).arg("--version").output().unwrap();
    assert!(out.status.success(), "{} --version: {out:?}", bin.display());
    String::from_utf8(out.stdout).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
