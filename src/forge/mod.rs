//! Forges: where pull requests live. The pipeline reads a pull request as a target (its title,
//! description, author, refs and unresolved review threads) and posts a report back to it
//! through the [`Forge`] trait alone. GitHub's pull requests ([`github`]), GitLab's merge
//! requests ([`gitlab`]) and Bitbucket Cloud's pull requests ([`bitbucket`]) implement it;
//! everything else here is shared: the reference a user types ([`PrRef`]), the target and its
//! threads ([`target`]), the posting plan across posts and rounds ([`post`]), the text
//! ([`render`]), its escaping ([`sanitize`]) and the hidden markers ([`markers`]).
//!
//! ```text
//! run 236 / '#236' / !42 / URL ──► PrRef ──► connect ──► Forge::pull_request + discussion
//!                                                 └─► target::PullRequestTarget (TargetSpec + threads)
//! post ID ──► Report + Target ──► post::plan (pure) ──► post::apply (Forge calls)
//! ```
//!
//! Everything a forge returns that a person wrote (titles, descriptions, thread bodies, branch
//! names, logins) is untrusted: it goes into the brief inside the material markers, into reports
//! escaped, and never into a command line unchecked. Everything posted is escaped by
//! [`sanitize`] so an agent's text cannot mention people en masse or forge deep-review's markers.

pub mod bitbucket;
pub mod cap;
pub mod diff_lines;
pub mod github;
pub mod gitlab;
pub mod http;
pub mod markers;
pub mod post;
pub mod render;
pub mod sanitize;
pub mod suggestion;
pub mod target;

use std::path::Path;

use crate::types::{Report, RequestKind};

/// A pull request as the target names it: `236`, `#236`, `owner/name#236` or its web address
/// (GitHub's, or Bitbucket Cloud's `.../pull-requests/N`); a GitLab merge request as `!42`,
/// `group/sub/project!42` or its web address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrRef {
    pub number: u64,
    /// `owner/name` (GitLab: `group/sub/project`) when the reference names it.
    pub repository: Option<String>,
    /// The web host when the reference is a URL (`github.com`, `git.example.com`).
    pub host: Option<String>,
    /// Which forge the reference is written for; `None` for a bare number, which the
    /// environment decides ([`connect`]).
    pub kind: Option<RequestKind>,
}

impl PrRef {
    /// Reads a target as a pull request or merge request reference; `None` when it is a branch
    /// or a range.
    ///
    /// A plain number is a pull request (a merge request in GitLab CI): branches named only by
    /// digits must be given as `refs/heads/236` or `236..` forms.
    pub fn parse(target: &str) -> Option<PrRef> {
        let t = target.trim();
        let bare = |n, kind| PrRef {
            number: n,
            repository: None,
            host: None,
            kind,
        };
        if let Some(n) = number(t.strip_prefix('#').unwrap_or(t)) {
            return Some(bare(n, None));
        }
        if let Some(n) = t.strip_prefix('!').and_then(number) {
            return Some(bare(n, Some(RequestKind::MergeRequest)));
        }
        if let Some(rest) = t
            .strip_prefix("https://")
            .or_else(|| t.strip_prefix("http://"))
        {
            let rest = rest.split(['?', '#']).next().unwrap_or(rest);
            return parse_merge_request_url(rest)
                .or_else(|| bitbucket::parse_url(rest))
                .or_else(|| parse_pull_request_url(rest));
        }
        // group/sub/project!N, as glab writes it.
        if let Some((project, n)) = t.split_once('!') {
            project_path(project).then_some(())?;
            return Some(PrRef {
                number: number(n)?,
                repository: Some(project.to_string()),
                host: None,
                kind: Some(RequestKind::MergeRequest),
            });
        }
        // owner/name#N, as gh writes it.
        let (repo, n) = t.split_once('#')?;
        let (owner, name) = repo.split_once('/')?;
        (plain_name(owner) && plain_name(name)).then_some(())?;
        Some(PrRef {
            number: number(n)?,
            repository: Some(repo.to_string()),
            host: None,
            kind: Some(RequestKind::PullRequest),
        })
    }
}

/// `HOST/OWNER/NAME/pull/N[/files]` (after the scheme, without query or fragment).
fn parse_pull_request_url(rest: &str) -> Option<PrRef> {
    let parts: Vec<&str> = rest.split('/').collect();
    let [host, owner, name, kind, n, ..] = parts.as_slice() else {
        return None;
    };
    (matches!(*kind, "pull" | "pulls") && plain_name(owner) && plain_name(name) && web_host(host))
        .then_some(())?;
    Some(PrRef {
        number: number(n)?,
        repository: Some(format!("{owner}/{name}")),
        host: Some(host.to_ascii_lowercase()),
        kind: Some(RequestKind::PullRequest),
    })
}

/// `HOST/GROUP/SUB/PROJECT/-/merge_requests/N[/diffs]` (after the scheme, without query or
/// fragment): GitLab's address of a merge request, with any depth of subgroups.
fn parse_merge_request_url(rest: &str) -> Option<PrRef> {
    let (before, after) = rest.split_once("/-/merge_requests/")?;
    let (host, project) = before.split_once('/')?;
    (web_host(host) && project_path(project)).then_some(())?;
    let n = after.split('/').next()?;
    Some(PrRef {
        number: number(n)?,
        repository: Some(project.to_string()),
        host: Some(host.to_ascii_lowercase()),
        kind: Some(RequestKind::MergeRequest),
    })
}

/// A host (and port) as a web address has it.
fn web_host(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 255
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-:".contains(c))
}

/// The host (lowercased) and path of the `origin` remote's web address, when it is an https one:
/// where a repository's own forge is, when nothing else says.
pub fn origin_web(repo: &std::path::Path) -> Option<(String, String)> {
    let url = crate::target::web_url(repo)?;
    let (host, path) = url.strip_prefix("https://")?.split_once('/')?;
    Some((host.to_ascii_lowercase(), path.to_string()))
}

/// A GitLab project's full path: a group, any subgroups and the project, each a plain name.
pub fn project_path(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    (2..=20).contains(&parts.len()) && parts.iter().all(|p| plain_name(p))
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

/// What creating a review did: the inline comments the forge refused (a line it does not show
/// in its diff), by fingerprint, go to the summary instead, so no finding is lost.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReviewPosted {
    /// Fingerprints of the inline comments not posted.
    pub refused: Vec<String>,
    /// What the user should know, one sentence each.
    pub notes: Vec<String>,
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

/// What a forge offers deep-review. Methods block (each implementation runs its own I/O) and
/// fail with one sentence that says what to do.
pub trait Forge {
    /// How the user knows it: `GitHub`.
    fn name(&self) -> &'static str;
    /// What its change requests are: pull requests or merge requests.
    fn kind(&self) -> RequestKind;
    /// `owner/name` of the repository the pull requests are in.
    fn repository(&self) -> &str;
    /// The ref the forge keeps a pull request's head at, to fetch it when it is not local.
    fn head_refspec(&self, number: u64) -> String;
    fn pull_request(&self, number: u64) -> anyhow::Result<PullRequest>;
    /// Every review thread of the pull request (resolved ones too), and who the token is.
    fn discussion(&self, number: u64) -> anyhow::Result<Discussion>;
    /// The pull request's conversation comments (not on lines).
    fn comments(&self, number: u64) -> anyhow::Result<Vec<Comment>>;
    /// Posts a conversation comment; returns its id.
    fn create_comment(&self, number: u64, body: &str) -> anyhow::Result<String>;
    fn update_comment(&self, number: u64, id: &str, body: &str) -> anyhow::Result<()>;
    /// The inline comments of `review` the forge would not take (their lines are not on its own
    /// diff), found before posting so the review goes without them and the summary lists them.
    /// None known by default.
    fn refused_comments(
        &self,
        _number: u64,
        _review: &ReviewDraft,
    ) -> anyhow::Result<ReviewPosted> {
        Ok(ReviewPosted::default())
    }
    /// Posts the inline comments; those the forge refuses come back in
    /// [`ReviewPosted::refused`].
    fn create_review(&self, number: u64, review: &ReviewDraft) -> anyhow::Result<ReviewPosted>;
    /// Replies in `thread`.
    fn reply(&self, number: u64, thread: &Thread, body: &str) -> anyhow::Result<()>;
    /// Resolves `thread`; `Ok(false)` when the token may not.
    fn resolve_thread(&self, number: u64, thread: &Thread) -> anyhow::Result<bool>;
    /// Publishes the report's findings where the forge keeps static analysis results
    /// (Bitbucket's Code Insights); returns what the user should know. Nothing by default.
    fn publish_insights(&self, _number: u64, _report: &Report) -> anyhow::Result<Vec<String>> {
        Ok(Vec::new())
    }
}

/// The forge of pull request `pr` for the repository at `repo` (any directory inside it):
/// GitHub (GitHub.com, or GitHub Enterprise through `GITHUB_API_URL`), GitLab (GitLab.com or
/// self-managed, through `CI_API_V4_URL` or `origin`'s host) or Bitbucket Cloud (a
/// bitbucket.org address, Bitbucket Pipelines or `origin`'s host).
pub fn connect(repo: &Path, pr: &PrRef) -> anyhow::Result<Box<dyn Forge>> {
    if bitbucket::claims(repo, pr) {
        return Ok(Box::new(bitbucket::Bitbucket::connect(repo, pr)?));
    }
    match kind_of(repo, pr) {
        RequestKind::PullRequest => Ok(Box::new(github::GitHub::connect(repo, pr)?)),
        RequestKind::MergeRequest => Ok(Box::new(gitlab::GitLab::connect(repo, pr)?)),
    }
}

/// Which forge a reference is for: what it says (`!42`, a merge request's address), else the
/// CI it runs in (GitLab CI sets `CI_API_V4_URL`, GitHub Actions `GITHUB_ACTIONS`), else
/// `origin`'s host (`gitlab.com`, `gitlab.*`, the instance `GITLAB_URL` names), else GitHub.
pub fn kind_of(repo: &Path, pr: &PrRef) -> RequestKind {
    if let Some(kind) = pr.kind {
        return kind;
    }
    let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
    if set("CI_API_V4_URL") || std::env::var("GITLAB_CI").is_ok_and(|v| v == "true") {
        return RequestKind::MergeRequest;
    }
    if set("GITHUB_ACTIONS") || set("GITHUB_API_URL") {
        return RequestKind::PullRequest;
    }
    let origin_host = crate::target::web_url(repo).and_then(|url| {
        let rest = url.strip_prefix("https://")?;
        rest.split('/').next().map(str::to_ascii_lowercase)
    });
    match origin_host {
        Some(host)
            if host == "gitlab.com"
                || host.starts_with("gitlab.")
                || gitlab::location::is_named_instance(&host) =>
        {
            RequestKind::MergeRequest
        }
        _ => RequestKind::PullRequest,
    }
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
        kind: Some(pr.kind),
    };
    if let Some(url) = &pr.url
        && let Some(parsed) = PrRef::parse(url).filter(|p| p.kind == Some(pr.kind))
    {
        reference = parsed;
    }
    let connected: anyhow::Result<Box<dyn Forge>> = match pr.kind {
        _ if bitbucket::claims(repo, &reference) => {
            bitbucket::Bitbucket::connect(repo, &reference).map(|f| Box::new(f) as Box<dyn Forge>)
        }
        RequestKind::PullRequest => {
            github::GitHub::connect(repo, &reference).map(|f| Box::new(f) as Box<dyn Forge>)
        }
        RequestKind::MergeRequest => {
            gitlab::GitLab::connect(repo, &reference).map(|f| Box::new(f) as Box<dyn Forge>)
        }
    };
    match connected {
        Ok(forge) => Ok(Some(forge)),
        Err(err)
            if token_optional
                && (github::is_missing_token(&err)
                    || gitlab::is_missing_token(&err)
                    || bitbucket::is_missing_token(&err)) =>
        {
            Ok(None)
        }
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
                kind: None,
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
                kind: Some(RequestKind::PullRequest),
            })
        );
        assert_eq!(
            PrRef::parse("https://bitbucket.org/acme/web-app/pull-requests/7/diff").map(|r| (
                r.number,
                r.repository,
                r.host,
                r.kind
            )),
            Some((
                7,
                Some("acme/web-app".into()),
                Some("bitbucket.org".into()),
                Some(RequestKind::PullRequest)
            ))
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
            "!",
            "!x",
            "feat!3",
            "https://gitlab.com/g/-/merge_requests/3",
            "https://gitlab.com/g/../p/-/merge_requests/3",
            "https://gitlab.com/g/p/-/merge_requests/x",
            "https://gitlab.com/g/p/-/issues/3",
        ] {
            assert_eq!(PrRef::parse(not_pr), None, "{not_pr}");
        }
    }

    #[test]
    fn merge_request_references() {
        let mr = |n, repository: Option<&str>, host: Option<&str>| {
            Some(PrRef {
                number: n,
                repository: repository.map(str::to_string),
                host: host.map(str::to_string),
                kind: Some(RequestKind::MergeRequest),
            })
        };
        assert_eq!(PrRef::parse("!42"), mr(42, None, None));
        assert_eq!(
            PrRef::parse(
                "https://GitLab.Example.com/group/sub/proj/-/merge_requests/42/diffs?view=inline#note_1"
            ),
            mr(42, Some("group/sub/proj"), Some("gitlab.example.com"))
        );
        assert_eq!(
            PrRef::parse("group/sub/proj!7"),
            mr(7, Some("group/sub/proj"), None)
        );
    }
}
