//! GitHub as a [`Forge`]: pull requests and conversation comments over REST, review threads
//! (and resolving them) over GraphQL, as GitHub's own API splits them.
//!
//! GitHub.com by default; GitHub Enterprise through `GITHUB_API_URL` and `GITHUB_GRAPHQL_URL`
//! (what GitHub Actions sets on every runner) or the host of the `origin` remote.

pub mod http;
pub mod location;
pub mod review;

use std::path::Path;

use anyhow::Context;
use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Comment, Discussion, Forge, PrRef, PullRequest, ReviewDraft, ReviewPosted, Thread};
use crate::types::RequestKind;
use http::{Client, ForgeApi as _};
pub use location::MissingToken;

/// Pages of review threads read at most (100 threads a page).
const MAX_THREAD_PAGES: usize = 20;
/// Newest comments read per thread, to find deep-review's own replies.
const RECENT_COMMENTS: usize = 20;
/// Commits read at most (GitHub lists 250 at most anyway).
const MAX_COMMIT_PAGES: usize = 3;

/// A repository on GitHub, with a token.
pub struct GitHub {
    client: Client,
    slug: String,
}

/// The error was "no token": `post --dry-run` carries on offline.
pub fn is_missing_token(err: &anyhow::Error) -> bool {
    err.downcast_ref::<MissingToken>().is_some()
}

impl GitHub {
    /// The repository of `pr` (see [`location::locate`]) and a token for it.
    pub fn connect(repo: &Path, pr: &PrRef) -> anyhow::Result<GitHub> {
        let location = location::locate(repo, pr)?;
        let token = location::token(&location)?;
        let slug = location.slug();
        Ok(GitHub {
            client: Client::new(location, token)?,
            slug,
        })
    }

    fn pull_url(&self, number: u64, rest: &str) -> anyhow::Result<reqwest::Url> {
        self.client.repo_url(&format!("pulls/{number}{rest}"))
    }
}

#[derive(Deserialize)]
struct ApiUser {
    login: String,
}

#[derive(Deserialize)]
struct ApiRef {
    #[serde(rename = "ref")]
    name: String,
    sha: String,
}

#[derive(Deserialize)]
struct ApiPull {
    number: u64,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    user: Option<ApiUser>,
    #[serde(default)]
    html_url: Option<String>,
    #[serde(default)]
    state: Option<String>,
    base: ApiRef,
    head: ApiRef,
}

#[derive(Deserialize)]
struct ApiCommit {
    sha: String,
}

#[derive(Deserialize)]
struct ApiComment {
    id: u64,
    #[serde(default)]
    user: Option<ApiUser>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    html_url: Option<String>,
}

impl From<ApiComment> for Comment {
    fn from(c: ApiComment) -> Comment {
        Comment {
            id: c.id.to_string(),
            author: c.user.map(|u| u.login),
            body: c.body.unwrap_or_default(),
            url: c.html_url,
        }
    }
}

/// The review threads of a pull request, a page at a time, with who the token is. Two
/// slices of each thread's comments: the first (the one that opened it, where deep-review's
/// marker is) and the newest (where its "no longer found" reply would be).
const THREADS_QUERY: &str =
    "query($owner: String!, $name: String!, $number: Int!, $after: String) {
  viewer { login }
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id isResolved isOutdated path line originalLine
          first: comments(first: 1) { totalCount nodes { fullDatabaseId author { login } body url } }
          recent: comments(last: 20) { nodes { fullDatabaseId author { login } body url } }
        }
      }
    }
  }
}";

const RESOLVE_MUTATION: &str = "mutation($thread: ID!) {
  resolveReviewThread(input: { threadId: $thread }) { thread { id isResolved } }
}";

/// A reply in a review thread, named by the thread's node id. GitHub's REST reply endpoint
/// (`POST .../comments/{id}/replies`) is not enabled for GitHub Apps, whose tokens Actions gives.
const REPLY_MUTATION: &str = "mutation($thread: ID!, $body: String!) {
  addPullRequestReviewThreadReply(input: { pullRequestReviewThreadId: $thread, body: $body }) {
    comment { fullDatabaseId }
  }
}";

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GqlComment {
    /// A `BigInt`: GitHub's ids are past 2^31 (the deprecated `databaseId` is an `Int`), and
    /// GraphQL writes a `BigInt` as a string.
    #[serde(default)]
    full_database_id: Option<Value>,
    #[serde(default)]
    author: Option<ApiUser>,
    #[serde(default)]
    body: String,
    #[serde(default)]
    url: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GqlComments {
    #[serde(default)]
    total_count: Option<usize>,
    #[serde(default)]
    nodes: Vec<Option<GqlComment>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GqlThread {
    id: String,
    #[serde(default)]
    is_resolved: bool,
    #[serde(default)]
    is_outdated: bool,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    line: Option<u32>,
    #[serde(default)]
    original_line: Option<u32>,
    first: GqlComments,
    recent: GqlComments,
}

fn comment_of(c: GqlComment) -> Option<Comment> {
    let id = match c.full_database_id? {
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s,
        Value::Number(n) => n.as_u64()?.to_string(),
        _ => return None,
    };
    Some(Comment {
        id,
        author: c.author.map(|a| a.login),
        body: c.body,
        url: c.url,
    })
}

impl Forge for GitHub {
    fn name(&self) -> &'static str {
        "GitHub"
    }

    fn kind(&self) -> RequestKind {
        RequestKind::PullRequest
    }

    fn repository(&self) -> &str {
        &self.slug
    }

    fn head_refspec(&self, number: u64) -> String {
        format!("refs/pull/{number}/head")
    }

    fn pull_request(&self, number: u64) -> anyhow::Result<PullRequest> {
        let what = format!("pull request #{number}");
        let pull: ApiPull = self.client.get(self.pull_url(number, "")?, &what)?;
        let (commits, _) = self.client.get_all::<ApiCommit>(
            self.pull_url(number, "/commits")?,
            &format!("the commits of pull request #{number}"),
        )?;
        let commits: Vec<String> = commits
            .into_iter()
            .take(MAX_COMMIT_PAGES * 100)
            .map(|c| c.sha)
            .collect();
        Ok(PullRequest {
            number: pull.number,
            title: pull.title.unwrap_or_default(),
            body: pull.body.unwrap_or_default(),
            author: pull.user.map(|u| u.login),
            url: pull.html_url.unwrap_or_else(|| {
                format!(
                    "https://{}/{}/pull/{number}",
                    self.client.location.host, self.slug
                )
            }),
            base_ref: pull.base.name,
            base_sha: pull.base.sha,
            head_ref: pull.head.name,
            head_sha: pull.head.sha,
            commits,
            open: pull.state.as_deref() != Some("closed"),
        })
    }

    fn discussion(&self, number: u64) -> anyhow::Result<Discussion> {
        let what = format!("the review threads of pull request #{number}");
        let mut discussion = Discussion::default();
        let mut after: Option<String> = None;
        for page in 0..MAX_THREAD_PAGES {
            let (data, errors) = self.client.graphql(
                THREADS_QUERY,
                json!({
                    "owner": self.client.location.owner,
                    "name": self.client.location.name,
                    "number": number,
                    "after": after,
                }),
                &what,
            )?;
            // A partial answer (a field GitHub could not give, such as an id too large for
            // its type) would lose threads without a word: every error stops the read.
            if !errors.is_empty() {
                return Err(http::graphql_error(&errors, &what));
            }
            let data = http::require_data(data, &errors, &what)?;
            if discussion.viewer.is_none() {
                discussion.viewer = data["viewer"]["login"].as_str().map(str::to_string);
            }
            let threads = &data["repository"]["pullRequest"]["reviewThreads"];
            if threads.is_null() {
                anyhow::bail!(
                    "GitHub has no pull request #{number} in {} (GraphQL answered without it): check the number and GITHUB_REPOSITORY",
                    self.slug
                );
            }
            let nodes: Vec<Option<GqlThread>> = serde_json::from_value(threads["nodes"].clone())
                .with_context(|| {
                    format!("GitHub's answer for {what} is not what its API documents")
                })?;
            for node in nodes.into_iter().flatten() {
                let comment_count = node.first.total_count.unwrap_or(0);
                discussion.threads.push(Thread {
                    id: node.id,
                    path: node.path,
                    line: node.line.or(node.original_line),
                    resolved: node.is_resolved,
                    outdated: node.is_outdated,
                    first: node.first.nodes.into_iter().flatten().find_map(comment_of),
                    recent: node
                        .recent
                        .nodes
                        .into_iter()
                        .flatten()
                        .filter_map(comment_of)
                        .take(RECENT_COMMENTS)
                        .collect(),
                    comment_count,
                });
            }
            let info = &threads["pageInfo"];
            match (info["hasNextPage"].as_bool(), info["endCursor"].as_str()) {
                (Some(true), Some(cursor)) => {
                    after = Some(cursor.to_string());
                    discussion.truncated = page + 1 == MAX_THREAD_PAGES;
                }
                _ => break,
            }
        }
        Ok(discussion)
    }

    fn comments(&self, number: u64) -> anyhow::Result<Vec<Comment>> {
        let (comments, _) = self.client.get_all::<ApiComment>(
            self.client.repo_url(&format!("issues/{number}/comments"))?,
            &format!("the comments of pull request #{number}"),
        )?;
        Ok(comments.into_iter().map(Comment::from).collect())
    }

    fn create_comment(&self, number: u64, body: &str) -> anyhow::Result<String> {
        let created = self.client.send_json(
            Method::POST,
            self.client.repo_url(&format!("issues/{number}/comments"))?,
            &json!({ "body": body }),
            &format!("a comment on pull request #{number}"),
        )?;
        Ok(created["id"]
            .as_u64()
            .map(|id| id.to_string())
            .unwrap_or_default())
    }

    fn update_comment(&self, _number: u64, id: &str, body: &str) -> anyhow::Result<()> {
        let id: u64 = id
            .parse()
            .with_context(|| format!("`{id}` is not a GitHub comment id"))?;
        self.client.send_json(
            Method::PATCH,
            self.client.repo_url(&format!("issues/comments/{id}"))?,
            &json!({ "body": body }),
            "an update of deep-review's summary comment",
        )?;
        Ok(())
    }

    fn refused_comments(&self, number: u64, review: &ReviewDraft) -> anyhow::Result<ReviewPosted> {
        review::refused(&self.client, number, review)
    }

    fn create_review(&self, number: u64, review: &ReviewDraft) -> anyhow::Result<ReviewPosted> {
        review::post(&self.client, number, review)
    }

    fn reply(&self, number: u64, thread: &Thread, body: &str) -> anyhow::Result<()> {
        let what = format!("a reply in a review thread of pull request #{number}");
        let (data, errors) = self.client.graphql(
            REPLY_MUTATION,
            json!({ "thread": thread.id, "body": body }),
            &what,
        )?;
        let data = http::require_data(data, &errors, &what)?;
        if data["addPullRequestReviewThreadReply"]["comment"].is_null() {
            return Err(http::graphql_error(&errors, &what));
        }
        Ok(())
    }

    fn resolve_thread(&self, _number: u64, thread: &Thread) -> anyhow::Result<bool> {
        let what = "resolving a review thread";
        let (data, errors) =
            self.client
                .graphql(RESOLVE_MUTATION, json!({ "thread": thread.id }), what)?;
        if errors.iter().any(http::GraphqlError::is_forbidden) {
            return Ok(false);
        }
        let data = http::require_data(data, &errors, what)?;
        Ok(data["resolveReviewThread"]["thread"]["isResolved"].as_bool() == Some(true))
    }
}
