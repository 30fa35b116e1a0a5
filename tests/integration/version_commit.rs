//! `deep-review --version` names the version and the commit it was built from (build.rs), and
//! build.rs reads the commit of a crates.io package from its `.cargo_vcs_info.json`.

use std::process::Command;

#[path = "../../build/vcs_info.rs"]
mod vcs_info;

/// The commit this source tree is at, as git abbreviates it to 12 digits, or `None` when the
/// tree is not a git checkout of its own (then build.rs had none either).
fn source_commit() -> Option<String> {
    let dir = env!("CARGO_MANIFEST_DIR");
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let top = git(&["rev-parse", "--show-toplevel"])?;
    let own = std::fs::canonicalize(top).ok()? == std::fs::canonicalize(dir).ok()?;
    own.then(|| git(&["rev-parse", "HEAD"]))?
        .map(|sha| sha[..12].to_string())
}

#[test]
fn version_names_the_package_version_and_the_commit_built() {
    let out = Command::new(env!("CARGO_BIN_EXE_deep-review"))
        .arg("--version")
        .output()
        .expect("run deep-review --version");
    assert!(out.status.success(), "--version failed: {out:?}");
    let printed = String::from_utf8(out.stdout).expect("--version prints UTF-8");
    let commit = source_commit().unwrap_or_else(|| "unknown".into());
    let want = format!(
        "deep-review {} (commit {commit})\n",
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(printed, want, "--version of a build of this tree");
}

#[test]
fn vcs_info_gives_the_commit_of_a_crates_io_package() {
    let sha = "0123456789abcdef0123456789ABCDEF01234567";
    let json =
        format!("{{\n  \"git\": {{\n    \"sha1\": \"{sha}\"\n  }},\n  \"path_in_vcs\": \"\"\n}}");
    assert_eq!(
        vcs_info::sha_from_vcs_info(&json),
        Some(sha.to_ascii_lowercase())
    );
    let compact = format!("{{\"git\":{{\"sha1\":\"{sha}\",\"dirty\":true}}}}");
    assert_eq!(
        vcs_info::sha_from_vcs_info(&compact),
        Some(sha.to_ascii_lowercase())
    );
}

#[test]
fn vcs_info_without_a_whole_sha_gives_none() {
    for json in [
        "{}",
        "{\"git\": {\"sha1\": \"0123\"}}",
        "{\"git\": {\"sha1\": \"0123456789abcdef0123456789abcdef012345678\"}}",
        "{\"git\": {\"sha1\": \"zz23456789abcdef0123456789abcdef01234567\"}}",
        "{\"git\": {\"sha1\": 12}}",
        "{\"git\": {\"sha1\": \"é123456789abcdef0123456789abcdef0123456\"}}",
        "{\"sha1\"",
    ] {
        assert_eq!(vcs_info::sha_from_vcs_info(json), None, "{json}");
    }
}
