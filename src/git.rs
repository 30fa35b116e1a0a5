//! Running the git CLI read-only, with every user setting that would change its output pinned,
//! and its failures turned into one clear sentence. Shared by the stages that read the
//! repository (target, brief, dispatch, verify).

use std::path::Path;
use std::process::Command;

use anyhow::Context;

pub mod no_programs;

/// Runs `git -C repo ARGS` and returns its stdout as bytes. Settings that change the output we
/// parse (quoted paths, colour, external diff drivers, pagers) are pinned here so a user's
/// `~/.gitconfig` cannot break the parsers.
pub fn git_bytes(repo: &Path, args: &[&str]) -> anyhow::Result<Vec<u8>> {
    run(repo, args, &[0])
}

/// Runs `git grep` with `args` (the same pinned settings as [`git_bytes`]). Exit status 1
/// means "no match" and gives empty output, not an error.
pub fn git_grep(repo: &Path, args: &[&str]) -> anyhow::Result<Vec<u8>> {
    let mut all = vec!["grep"];
    all.extend_from_slice(args);
    run(repo, &all, &[0, 1])
}

/// `git -C repo` with the one set of settings every git call of deep-review uses:
///
/// - output we parse stays parseable: quoted paths, no colour, no pager, C locale, no external
///   diff driver;
/// - nothing runs that the repository's config or hooks could name: `core.fsmonitor` (a
///   command git runs on `status`), `core.hooksPath` (post-checkout and friends) are pinned off,
///   so a changed `.git/config` cannot make deep-review's own git calls execute code;
/// - no program the change could choose: its `.gitattributes` could select a filter, textconv
///   or diff driver that the user's config defines, and git would run it on `status`, `add`,
///   `reset --hard` and `checkout`; attributes are read from nowhere the change reaches, and
///   every filter driver is emptied ([`no_programs`]);
/// - nothing waits for a person or the network: no terminal prompt, LFS files stay pointers.
///
/// Stdin is closed; callers set stdout and stderr.
pub fn command(repo: &Path) -> Command {
    let mut cmd = bare_command(repo);
    cmd.args(no_programs::args(repo));
    cmd
}

/// `git -C repo` with the settings that pin its output and its hooks, without the per-repository
/// ones of [`no_programs`] (which read the repository's config with this).
fn bare_command(repo: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(repo)
        .args([
            "-c",
            "core.quotePath=true",
            "-c",
            "color.ui=false",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.attributesFile=/dev/null",
        ])
        .env("GIT_PAGER", "cat")
        .env("LC_ALL", "C")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_LFS_SKIP_SMUDGE", "1")
        .env("GIT_ATTR_NOSYSTEM", "1")
        .env_remove("GIT_EXTERNAL_DIFF")
        .env_remove("GIT_ATTR_SOURCE")
        .stdin(std::process::Stdio::null());
    cmd
}

/// Runs git, succeeding on the exit statuses in `ok`.
fn run(repo: &Path, args: &[&str], ok: &[i32]) -> anyhow::Result<Vec<u8>> {
    let output = command(repo).args(args).output().with_context(|| {
        format!(
            "could not start `git` in {}: is git installed and on PATH?",
            repo.display()
        )
    })?;
    if !output.status.code().is_some_and(|c| ok.contains(&c)) {
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

/// The full sha of the commit `rev` names, or an error that names the revision and the
/// repository and says what to give instead.
pub fn resolve_commit(repo: &Path, rev: &str) -> anyhow::Result<String> {
    let spec = format!("{rev}^{{commit}}");
    let sha = if rev.trim().is_empty() || rev.starts_with('-') {
        None
    } else {
        git_probe(
            repo,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &spec,
            ],
        )
    };
    match sha {
        Some(sha) if !sha.is_empty() => Ok(sha),
        _ => anyhow::bail!(
            "`{rev}` is not a commit in {}: give a branch, tag or sha that exists there",
            repo.display()
        ),
    }
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
    let output = command(repo).args(args).output().ok()?;
    if !output.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&output.stdout)
            .trim_end_matches('\n')
            .to_string(),
    )
}

/// `dir` relative to the working tree at `root`, when it is strictly inside it (both read
/// through their symlinks): for a pathspec that leaves it out.
pub fn path_within(root: &Path, dir: &Path) -> Option<String> {
    let root = std::fs::canonicalize(root).ok()?;
    let dir = std::fs::canonicalize(dir).ok()?;
    let rel = dir.strip_prefix(&root).ok()?;
    (!rel.as_os_str().is_empty()).then(|| rel.to_string_lossy().into_owned())
}

/// `git commit-tree TREE -p PARENT... -m MESSAGE`, unsigned, with deep-review as the identity
/// when none is configured (a CI container often has none). Returns the new commit's sha.
pub fn commit_tree(
    repo: &Path,
    tree: &str,
    parents: &[&str],
    message: &str,
) -> anyhow::Result<String> {
    let mut cmd = command(repo);
    cmd.args(["commit-tree", "--no-gpg-sign", tree]);
    for parent in parents {
        cmd.args(["-p", parent]);
    }
    cmd.args(["-m", message]);
    if git_probe(repo, &["var", "GIT_AUTHOR_IDENT"]).is_none() {
        cmd.env("GIT_AUTHOR_NAME", "deep-review")
            .env("GIT_AUTHOR_EMAIL", "deep-review@localhost");
    }
    if git_probe(repo, &["var", "GIT_COMMITTER_IDENT"]).is_none() {
        cmd.env("GIT_COMMITTER_NAME", "deep-review")
            .env("GIT_COMMITTER_EMAIL", "deep-review@localhost");
    }
    let out = cmd
        .output()
        .with_context(|| format!("could not start `git` in {}", repo.display()))?;
    if !out.status.success() {
        anyhow::bail!(
            "`git commit-tree` failed in {}: {}",
            repo.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Runs `git ARGS` with a private index file (`GIT_INDEX_FILE`), so the user's index is never
/// read or written; returns stdout trimmed.
pub fn with_index(repo: &Path, index: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = command(repo)
        .args(args)
        .env("GIT_INDEX_FILE", index)
        .output()
        .with_context(|| format!("could not start `git` in {}", repo.display()))?;
    if !out.status.success() {
        anyhow::bail!(
            "`git {}` failed in {}: {}",
            args.join(" "),
            repo.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
