//! The git environment a review starts in, explained: CI checkouts are shallow, CI containers
//! run as another user than the one who owns the checkout, and some runners hand over a bare
//! repository. Each gets a sentence that says what git found and what to do, instead of a
//! generic "not a git repository".

use std::path::{Path, PathBuf};

use crate::git::git_probe;

/// The repository's top level, or one sentence saying why `repo` is not a working copy deep-review
/// can read (not a repository, owned by another user, bare, a `.git` directory).
pub fn repo_root(repo: &Path) -> anyhow::Result<PathBuf> {
    if !repo.is_dir() {
        anyhow::bail!(
            "{} is not a directory: pass a git repository with `--repo DIR`",
            repo.display()
        );
    }
    let output = crate::git::command(repo)
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .map_err(|e| {
            anyhow::anyhow!(
                "could not start `git` in {}: {e}: is git installed and on PATH?",
                repo.display()
            )
        })?;
    let top = String::from_utf8_lossy(&output.stdout)
        .trim_end_matches('\n')
        .to_string();
    if output.status.success() && !top.is_empty() {
        return Ok(PathBuf::from(top));
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    if let Some(message) = dubious_ownership(repo, &stderr) {
        anyhow::bail!(message);
    }
    if git_probe(repo, &["rev-parse", "--is-bare-repository"]).as_deref() == Some("true") {
        anyhow::bail!(
            "{} is a bare repository (it has no working tree): deep-review reads a working copy's \
             commits; clone it (`git clone {} checkout`) and run deep-review in the clone",
            repo.display(),
            repo.display()
        );
    }
    if git_probe(repo, &["rev-parse", "--is-inside-git-dir"]).as_deref() == Some("true") {
        anyhow::bail!(
            "{} is inside a .git directory: run deep-review in the working copy above it",
            repo.display()
        );
    }
    anyhow::bail!(
        "{} is not inside a git repository: run deep-review in one or pass `--repo DIR`",
        repo.display()
    )
}

/// git's refusal to read `repo` because another user owns it, with the `safe.directory`
/// command that lifts it; `None` when git reads it (or fails for another reason). For commands
/// that read a repository without resolving a change (`consolidate --repo`, `trust`), so every
/// command gives the same advice.
pub fn ownership_refusal(repo: &Path) -> Option<String> {
    let output = crate::git::command(repo)
        .args(["rev-parse", "--git-dir"])
        .output()
        .ok()?;
    if output.status.success() {
        return None;
    }
    dubious_ownership(repo, &String::from_utf8_lossy(&output.stderr))
}

/// git's refusal to read a repository that another user owns (`safe.directory`, git 2.35.2 and
/// later), as git says it, with the command that lifts it. `None` for any other failure.
fn dubious_ownership(repo: &Path, stderr: &str) -> Option<String> {
    let line = stderr
        .lines()
        .find(|l| l.contains("dubious ownership"))?
        .trim();
    let said = line.strip_prefix("fatal: ").unwrap_or(line);
    // git names the directory it checked: `... in repository at '/srv/repo'`.
    let dir = said
        .split_once(" at '")
        .and_then(|(_, rest)| rest.strip_suffix('\''))
        .map(str::to_string)
        .unwrap_or_else(|| repo.display().to_string());
    let quoted = shell_quote(&dir);
    Some(format!(
        "git refuses to read {}: {said} (it belongs to another user than the one running \
         deep-review, as in CI containers). If you trust this repository, run `git config \
         --global --add safe.directory {quoted}` and run deep-review again",
        repo.display()
    ))
}

/// `path` quoted for a POSIX shell when it holds anything but plain path characters.
fn shell_quote(path: &str) -> String {
    let plain = !path.is_empty()
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+' | ':'));
    if plain {
        path.to_string()
    } else {
        format!("'{}'", path.replace('\'', r"'\''"))
    }
}

/// Whether the repository is a shallow clone (`git clone --depth`, CI checkouts).
pub fn is_shallow(root: &Path) -> bool {
    git_probe(root, &["rev-parse", "--is-shallow-repository"]).as_deref() == Some("true")
}

/// What to do in a shallow clone when the base's history is missing.
pub const SHALLOW_HINT: &str = "this is a shallow clone (as CI checkouts are by default), so the \
    history that joins them was not fetched: run `git fetch --unshallow` (or, in GitHub Actions, \
    check out with `fetch-depth: 0`), then run deep-review again";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ownership_message_keeps_git_words_and_gives_the_fix() {
        let stderr = "fatal: detected dubious ownership in repository at '/srv/my repo'\n\
                      To add an exception for this directory, call:\n\n\
                      \tgit config --global --add safe.directory '/srv/my repo'\n";
        let msg = dubious_ownership(Path::new("/srv/my repo/src"), stderr).unwrap();
        assert!(
            msg.contains("detected dubious ownership in repository at '/srv/my repo'"),
            "{msg}"
        );
        assert!(
            msg.contains("git config --global --add safe.directory '/srv/my repo'"),
            "{msg}"
        );
        assert_eq!(
            dubious_ownership(Path::new("/x"), "fatal: not a git repository"),
            None
        );
        assert_eq!(shell_quote("/srv/a-b_c.d"), "/srv/a-b_c.d");
        assert_eq!(shell_quote("/srv/it's"), r"'/srv/it'\''s'");
    }
}
