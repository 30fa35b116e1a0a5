//! Forges: where pull requests live. The pipeline reads a pull request as a target (its title,
//! description, author, refs and unresolved review threads) and posts a report back to it
//! through the [`Forge`] trait alone; GitHub ([`github`]) is the first implementation, and a
//! GitLab merge request needs only another one (its notes, discussions and `resolve`).
//!
//! ```text
//! run 236 / '#236' / URL ──► PrRef ──► connect ──► Forge::pull_request + discussion
//!                                                 └─► target::PullRequestTarget (TargetSpec + threads)
//! post ID ──► Report + Target ──► post::plan (pure) ──► post::apply (Forge calls)
//! ```
//!
//! Everything a forge returns that a person wrote (titles, descriptions, thread bodies, branch
//! names, logins) is untrusted: it goes into the brief inside the material markers, into reports
//! escaped, and never into a command line unchecked. Everything posted is escaped by
//! [`sanitize`] so an agent's text cannot mention people en masse or forge deep-review's markers.

pub mod diff_lines;
pub mod github;
pub mod markers;
pub mod post;
pub mod render;
pub mod sanitize;
pub mod suggestion;
pub mod target;

use std::path::Path;

/// A pull request as the target names it: `236`, `#236`, `owner/name#236` or its web address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrRef {
    pub number: u64,
    /// `owner/name` when the reference names it (a URL, `owner/name#N`).
    pub repository: Option<String>,
    /// The web host when the reference is a URL (`github.com`, `git.example.com`).
    pub host: Option<String>,
}

impl PrRef {
    /// Reads a target as a pull request reference; `None` when it is a branch or a range.
    ///
    /// A plain number is a pull request: branches named only by digits must be given as
    /// `refs/heads/236` or `236..` forms.
    pub fn parse(target: &str) -> Option<PrRef> {
        let t = target.trim();
        if let Some(n) = number(t.strip_prefix('#').unwrap_or(t)) {
            return Some(PrRef {
                number: n,
                repository: None,
                host: None,
            });
        }
        if let Some(rest) = t
            .strip_prefix("https://")
            .or_else(|| t.strip_prefix("http://"))
        {
            // https://HOST/OWNER/NAME/pull/N[/files][?query][#fragment]
            let rest = rest.split(['?', '#']).next().unwrap_or(rest);
            let parts: Vec<&str> = rest.split('/').collect();
            if let [host, owner, name, kind, n, ..] = parts.as_slice()
                && matches!(*kind, "pull" | "pulls")
                && plain_name(owner)
                && plain_name(name)
                && !host.is_empty()
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-:".contains(c))
            {
                return Some(PrRef {
                    number: number(n)?,
                    repository: Some(format!("{owner}/{name}")),
                    host: Some(host.to_ascii_lowercase()),
                });
            }
            return None;
        }
        // owner/name#N, as gh writes it.
        let (repo, n) = t.split_once('#')?;
        let (owner, name) = repo.split_once('/')?;
        (plain_name(owner) && plain_name(name)).then_some(())?;
        Some(PrRef {
            number: number(n)?,
            repository: Some(repo.to_string()),
            host: None,
        })
    }
}

/// A positive decimal number of at most 12 digits.
fn number(s: &str) -> Option<u64> {
    (!s.is_empty() && s.len() <= 12 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
        .filter(|n| *n > 0)
}

/// An owner or repository name as forges allow them: letters, digits, `-`, `_`, `.`, and not
/// `.`/`..` (a path step).
pub fn plain_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A pull request as the forge describes it. Text fields are the author's: untrusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    pub number: u64,
    pub title: String,
    pub body: String,
    /// The author's login.
    pub author: Option<String>,
    /// The pull request's web page.
    pub url: String,
    /// The branch it merges into (`main`) and that branch's commit the forge compares against.
    pub base_ref: String,
    pub base_sha: String,
    /// The branch it comes from and its newest commit.
    pub head_ref: String,
    pub head_sha: String,
    /// The commits as the forge lists them (full shas, oldest first; bounded).
    pub commits: Vec<String>,
    /// Merged or closed: still reviewable, but the user should know.
    pub open: bool,
}

/// One comment of a review thread or of the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// The forge's id for it (what edits and replies name).
    pub id: String,
    pub author: Option<String>,
    pub body: String,
    pub url: Option<String>,
}

/// A review thread: comments on a line of the diff, resolvable as one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    /// The forge's id for the thread (what resolving names).
    pub id: String,
    pub path: Option<String>,
    pub line: Option<u32>,
    pub resolved: bool,
    pub outdated: bool,
    /// The comment that opened the thread.
    pub first: Option<Comment>,
    /// The newest comments (bounded), to find deep-review's own replies.
    pub recent: Vec<Comment>,
    /// How many comments the thread has in all.
    pub comment_count: usize,
}

/// The review threads of a pull request and who the token acts as.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discussion {
    /// The login the token acts as: deep-review's own comments are the ones it wrote.
    pub viewer: Option<String>,
    pub threads: Vec<Thread>,
    /// The forge had more threads than were read (bounded pagination).
    pub truncated: bool,
}

/// A review to create: one body and comments on lines of the diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewDraft {
    /// The commit the comments' lines refer to.
    pub commit: String,
    pub body: String,
    pub comments: Vec<InlineComment>,
}

/// A comment on lines `start_line..=line` of `path` at the head (the new side of the diff).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineComment {
    pub path: String,
    /// The first line of a multi-line comment; `None` for a one-line comment.
    pub start_line: Option<u32>,
    pub line: u32,
    pub body: String,
    /// The finding's fingerprint, for what `post` prints.
    pub fingerprint: String,
}

/// An inline comment the forge would not take (its lines are not on the forge's own diff):
/// the review was posted without it, and the summary lists its finding with its location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedComment {
    pub fingerprint: String,
    pub path: String,
    pub start_line: Option<u32>,
    pub line: u32,
    /// Why, as the end of a sentence.
    pub reason: String,
}

/// What a forge offers deep-review. Methods block (each implementation runs its own I/O) and
/// fail with one sentence that says what to do.
pub trait Forge {
    /// How the user knows it: `GitHub`.
    fn name(&self) -> &'static str;
    /// `owner/name` of the repository the pull requests are in.
    fn repository(&self) -> &str;
    /// The ref the forge keeps a pull request's head at, to fetch it when it is not local.
    fn head_refspec(&self, number: u64) -> String;
    fn pull_request(&self, number: u64) -> anyhow::Result<PullRequest>;
    /// Every review thread of the pull request (resolved ones too), and who the token is.
    fn discussion(&self, number: u64) -> anyhow::Result<Discussion>;
    /// The pull request's conversation comments (not on lines).
    fn comments(&self, number: u64) -> anyhow::Result<Vec<Comment>>;
    fn create_comment(&self, number: u64, body: &str) -> anyhow::Result<()>;
    fn update_comment(&self, number: u64, id: &str, body: &str) -> anyhow::Result<()>;
    /// The inline comments of `review` the forge would not take (their lines are not on its own
    /// diff), found before posting so the review can go without them. None known by default.
    fn refused_comments(
        &self,
        _number: u64,
        _review: &ReviewDraft,
    ) -> anyhow::Result<Vec<RefusedComment>> {
        Ok(Vec::new())
    }
    /// Posts the review; when the forge refuses it whole for its inline comments, posts nothing
    /// and returns them all. Never posts two reviews for one draft.
    fn create_review(
        &self,
        number: u64,
        review: &ReviewDraft,
    ) -> anyhow::Result<Vec<RefusedComment>>;
    /// Replies in `thread`.
    fn reply(&self, number: u64, thread: &Thread, body: &str) -> anyhow::Result<()>;
    /// Resolves `thread`; `Ok(false)` when the token may not.
    fn resolve_thread(&self, thread: &Thread) -> anyhow::Result<bool>;
}

/// The forge of pull request `pr` for the repository at `repo` (any directory inside it). Only
/// GitHub today: GitHub.com, or GitHub Enterprise through `GITHUB_API_URL`.
pub fn connect(repo: &Path, pr: &PrRef) -> anyhow::Result<Box<dyn Forge>> {
    Ok(Box::new(github::GitHub::connect(repo, pr)?))
}

/// The forge a report of pull request `pr` (as the target recorded it) is posted to, without a
/// token when `token_optional` and none is found (`post --dry-run` offline).
pub fn connect_for_report(
    repo: &Path,
    pr: &crate::types::PrInfo,
    token_optional: bool,
) -> anyhow::Result<Option<Box<dyn Forge>>> {
    let mut reference = PrRef {
        number: pr.number,
        repository: None,
        host: None,
    };
    if let Some(url) = &pr.url
        && let Some(parsed) = PrRef::parse(url)
    {
        reference = parsed;
    }
    match github::GitHub::connect(repo, &reference) {
        Ok(forge) => Ok(Some(Box::new(forge))),
        Err(err) if token_optional && github::is_missing_token(&err) => Ok(None),
        Err(err) => Err(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_request_references() {
        let n = |n| {
            Some(PrRef {
                number: n,
                repository: None,
                host: None,
            })
        };
        assert_eq!(PrRef::parse("236"), n(236));
        assert_eq!(PrRef::parse("#236"), n(236));
        assert_eq!(
            PrRef::parse("https://github.com/o/r-x.y/pull/236/files?w=1#top"),
            Some(PrRef {
                number: 236,
                repository: Some("o/r-x.y".into()),
                host: Some("github.com".into()),
            })
        );
        assert_eq!(
            PrRef::parse("o/r#7").map(|r| (r.number, r.repository)),
            Some((7, Some("o/r".into())))
        );
        for not_pr in [
            "main",
            "main..feat",
            "0",
            "#",
            "#x",
            "1234567890123",
            "https://github.com/o/r/tree/main",
            "https://github.com/o/../pull/3",
            "https://github.com/o/r/pull/x",
            "a/b/c#3",
            "feat#3",
        ] {
            assert_eq!(PrRef::parse(not_pr), None, "{not_pr}");
        }
    }
}
