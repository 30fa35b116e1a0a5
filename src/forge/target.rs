//! A pull request (or merge request) as the target of a run: read from its forge, its commits
//! made local, its unresolved review threads kept for the brief and the report. The same for
//! every forge: only [`Forge`] calls differ.
//!
//! The target stage itself never talks to a forge: this turns `run 236` into the `TargetSpec`
//! it understands (the pull request's base and head commits, its title and description) and,
//! once it has resolved the commits, fills in what only the forge knows (branch names, author,
//! threads).

use std::path::Path;

use super::{Discussion, Forge, PrRef, PullRequest, Thread, connect, markers};
use crate::git::{git_bytes, resolve_commit};
use crate::target::TargetSpec;
use crate::types::{PrInfo, ReviewThread, Target};

/// Threads kept for a target: the report lists them all, the brief the first few.
pub const MAX_THREADS: usize = 100;
/// The longest thread comment or description kept, in characters.
const MAX_TEXT_CHARS: usize = 8_000;

/// A pull request, read and fetched, ready to be resolved as a target.
#[derive(Debug, Clone)]
pub struct PullRequestTarget {
    /// What the target stage resolves: the pull request's base and head commits.
    pub spec: TargetSpec,
    pub pull_request: PullRequest,
    pub threads: Vec<ReviewThread>,
    /// What the user should know (a closed pull request, threads left out), one sentence each.
    pub notes: Vec<String>,
}

impl PullRequestTarget {
    /// Fills in what the forge knows and git does not.
    pub fn apply(&self, target: &mut Target) {
        let pr = &self.pull_request;
        if !pr.head_ref.is_empty() {
            target.branch = Some(pr.head_ref.clone());
        }
        if !pr.base_ref.is_empty() {
            target.base_ref = pr.base_ref.clone();
        }
        if let Some(login) = pr.author.as_deref().filter(|l| is_login(l)) {
            target.author = Some(format!("@{login}"));
        }
        target.review_threads = self.threads.clone();
    }
}

/// When `spec` names a pull request (`236`, `#236`, its URL): reads it from its forge, fetches
/// its head when it is not local, and returns what to resolve. `None` for any other target.
pub fn resolve(repo: &Path, spec: &TargetSpec) -> anyhow::Result<Option<PullRequestTarget>> {
    let Some(text) = spec.target.as_deref() else {
        return Ok(None);
    };
    let Some(reference) = PrRef::parse(text) else {
        return Ok(None);
    };
    if spec.base.is_some() || spec.head.is_some() || spec.uncommitted {
        anyhow::bail!(
            "{} {text} is reviewed from its own base and head: drop `--base`, `--head` and `--uncommitted`",
            reference.kind.unwrap_or_default().noun()
        );
    }
    let root = crate::target::environment::repo_root(repo)?;
    let forge = connect(&root, &reference)?;
    let named = forge.kind().named(reference.number);
    let pr = forge.pull_request(reference.number)?;
    let discussion = forge.discussion(reference.number)?;
    let mut notes = Vec::new();
    let (base, head) = local_commits(&root, forge.as_ref(), &pr, &mut notes)?;
    if !pr.open {
        notes.push(format!(
            "{named} is closed: reviewing it as it was at {}",
            short(&pr.head_sha)
        ));
    }
    let threads = unresolved(&discussion);
    let total = discussion
        .threads
        .iter()
        .filter(|t| !t.resolved && !is_deep_review(t))
        .count();
    if total > threads.len() || discussion.truncated {
        notes.push(format!(
            "{named} has more unresolved review threads than the {} read: the brief and report carry those",
            threads.len()
        ));
    }
    let spec = TargetSpec {
        target: None,
        base: Some(base),
        head: Some(head),
        pr: Some(PrInfo {
            number: pr.number,
            title: pr.title.clone(),
            url: Some(pr.url.clone()),
            kind: forge.kind(),
        }),
        description: Some(crate::forge::sanitize::truncate(&pr.body, MAX_TEXT_CHARS))
            .filter(|d| !d.trim().is_empty()),
        uncommitted: false,
    };
    Ok(Some(PullRequestTarget {
        spec,
        pull_request: pr,
        threads,
        notes,
    }))
}

/// The unresolved threads people left, oldest first: not deep-review's own (those are its
/// earlier rounds' findings), at most [`MAX_THREADS`].
pub fn unresolved(discussion: &Discussion) -> Vec<ReviewThread> {
    discussion
        .threads
        .iter()
        .filter(|t| !t.resolved && !is_deep_review(t))
        .take(MAX_THREADS)
        .map(|t| ReviewThread {
            path: t.path.clone(),
            line: t.line,
            author: t
                .first
                .as_ref()
                .and_then(|c| c.author.clone())
                .filter(|a| is_login(a)),
            body: t
                .first
                .as_ref()
                .map(|c| crate::forge::sanitize::truncate(c.body.trim(), MAX_TEXT_CHARS))
                .unwrap_or_default(),
            outdated: t.outdated,
            replies: t.comment_count.saturating_sub(1),
            url: t
                .first
                .as_ref()
                .and_then(|c| c.url.clone())
                .filter(|u| u.starts_with("https://") || u.starts_with("http://")),
        })
        .collect()
}

/// A thread deep-review opened (its marker is the first line of the first comment).
fn is_deep_review(thread: &Thread) -> bool {
    thread
        .first
        .as_ref()
        .is_some_and(|c| markers::finding_of(&c.body).is_some() || markers::is_summary(&c.body))
}

/// A forge login: letters, digits, `-`, `_` and `.` (GitLab's usernames take dots), and
/// `[bot]` for GitHub's apps.
fn is_login(s: &str) -> bool {
    let name = s.strip_suffix("[bot]").unwrap_or(s);
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A full commit id: 40 (SHA-1) or 64 (SHA-256) hex digits. Checked before it reaches git.
fn is_sha(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// The pull request's base and head commits, fetched from `origin` when they are not here
/// (the forge's head ref, `refs/pull/N/head` or `refs/merge-requests/N/head`, for the head, the
/// base branch for the base). Returns (base, head).
fn local_commits(
    root: &Path,
    forge: &dyn Forge,
    pr: &PullRequest,
    notes: &mut Vec<String>,
) -> anyhow::Result<(String, String)> {
    for (sha, side) in [(&pr.head_sha, "head"), (&pr.base_sha, "base")] {
        if !is_sha(sha) {
            anyhow::bail!(
                "{} gave `{}` as the {side} commit of {}: not a commit id",
                forge.name(),
                crate::text::printable_line(sha),
                forge.kind().named(pr.number)
            );
        }
    }
    let number = pr.number;
    let named = forge.kind().named(number);
    if resolve_commit(root, &pr.head_sha).is_err() {
        let refspec = forge.head_refspec(number);
        fetch(root, &refspec).map_err(|err| {
            anyhow::anyhow!(
                "the head of {named} ({}) is not in this clone and `git fetch origin {refspec}` failed: {err:#}",
                short(&pr.head_sha)
            )
        })?;
        if resolve_commit(root, &pr.head_sha).is_err() {
            anyhow::bail!(
                "the head of {named} ({}) is not in this clone, and `git fetch origin {refspec}` did not bring it: is `origin` the repository {}?",
                short(&pr.head_sha),
                forge.repository()
            );
        }
    }
    let mut base = pr.base_sha.clone();
    if resolve_commit(root, &base).is_err() {
        let branch = &pr.base_ref;
        let plain = !branch.is_empty()
            && !branch.starts_with('-')
            && !branch.contains("..")
            && branch
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c));
        if plain {
            let _ = fetch(root, &format!("refs/heads/{branch}"));
        }
        if resolve_commit(root, &base).is_err() {
            let fetched = resolve_commit(root, "FETCH_HEAD").ok().filter(|_| plain);
            let Some(fetched) = fetched else {
                anyhow::bail!(
                    "the base of {named} ({}, branch `{}`) is not in this clone and could not be fetched from `origin`",
                    short(&pr.base_sha),
                    crate::text::printable_line(branch)
                );
            };
            notes.push(format!(
                "the base commit {} of {named} is gone from `origin`: reviewing against the branch's newest commit {}",
                short(&pr.base_sha),
                short(&fetched)
            ));
            base = fetched;
        }
    }
    Ok((base, pr.head_sha.clone()))
}

/// `git fetch origin REFSPEC` into `FETCH_HEAD` only (no branch or tag of the user's moves),
/// with the settings every git call has (no hooks, no prompt) and a stall limit so a dead
/// network fails instead of hanging the review.
fn fetch(root: &Path, refspec: &str) -> anyhow::Result<()> {
    git_bytes(
        root,
        &[
            "-c",
            "http.lowSpeedLimit=1000",
            "-c",
            "http.lowSpeedTime=60",
            "fetch",
            "--quiet",
            "--no-tags",
            "origin",
            refspec,
        ],
    )
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forge::Comment;

    fn thread(id: &str, resolved: bool, body: &str) -> Thread {
        Thread {
            id: id.into(),
            path: Some("src/a.rs".into()),
            line: Some(3),
            resolved,
            outdated: false,
            first: Some(Comment {
                id: "1".into(),
                author: Some("rev-iewer".into()),
                body: body.into(),
                url: Some("https://github.com/o/r/pull/1#discussion_r1".into()),
            }),
            recent: vec![],
            comment_count: 3,
        }
    }

    #[test]
    fn unresolved_threads_of_people_are_kept() {
        let discussion = Discussion {
            viewer: Some("bot".into()),
            threads: vec![
                thread("a", false, "Please handle the error."),
                thread("b", true, "Resolved already."),
                thread("c", false, &format!("{}\nI1", markers::finding("abc"))),
            ],
            truncated: false,
        };
        let kept = unresolved(&discussion);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].body, "Please handle the error.");
        assert_eq!(kept[0].author.as_deref(), Some("rev-iewer"));
        assert_eq!(kept[0].replies, 2);
    }

    #[test]
    fn logins_and_shas_are_checked() {
        assert!(is_login("octo-cat"));
        assert!(is_login("github-actions[bot]"));
        assert!(is_login("jane.doe"));
        assert!(is_login("project_278964_bot_0b1f"));
        assert!(!is_login("x @everyone"));
        assert!(is_sha(&"a".repeat(40)));
        assert!(!is_sha("--upload-pack=evil"));
    }
}
