//! Running the git CLI read-only, with every user setting that would change its output pinned,
//! and its failures turned into one clear sentence.

use std::path::Path;
use std::process::Command;

use anyhow::Context;

/// Runs `git -C repo ARGS` and returns its stdout as bytes. Settings that change the output we
/// parse (quoted paths, colour, external diff drivers, pagers) are pinned here so a user's
/// `~/.gitconfig` cannot break the parsers.
pub fn git_bytes(repo: &Path, args: &[&str]) -> anyhow::Result<Vec<u8>> {
    let output = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["-c", "core.quotePath=true", "-c", "color.ui=false"])
        .args(args)
        .env("GIT_PAGER", "cat")
        .env("LC_ALL", "C")
        .env_remove("GIT_EXTERNAL_DIFF")
        .output()
        .with_context(|| {
            format!(
                "could not start `git` in {}: is git installed and on PATH?",
                repo.display()
            )
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        anyhow::bail!(
            "`git {}` failed in {}: {}",
            args.join(" "),
            repo.display(),
            stderr.trim()
        );
    }
    Ok(output.stdout)
}

/// [`git_bytes`] as text (lossy UTF-8), trimmed of the trailing newline.
pub fn git_text(repo: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = git_bytes(repo, args)?;
    Ok(String::from_utf8_lossy(&out)
        .trim_end_matches('\n')
        .to_string())
}

/// Like [`git_text`] but `None` when git exits non-zero (a probe: "is this a ref?").
pub fn git_probe(repo: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("LC_ALL", "C")
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&output.stdout)
            .trim_end_matches('\n')
            .to_string(),
    )
}
