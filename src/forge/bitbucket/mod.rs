//! Bitbucket Cloud as a [`Forge`]: a pull request, its commits, diff and comments over API 2.0,
//! as Bitbucket documents it, plus a Code Insights report of the findings
//! ([`insights`]). `https://api.bitbucket.org/2.0` by default, `BITBUCKET_API_URL` to point
//! elsewhere (a proxy, the tests' fake); the workspace and repository from the pull request's
//! address, Bitbucket Pipelines' variables or the `origin` remote.
//!
//! How Bitbucket's words map onto the forge's: a pull request names its commits by 12
//! characters, resolved here to full hashes; an inline comment with no parent is a review
//! thread ([`api`]); a comment with neither is a conversation comment (the summary); comments
//! are resolved one thread at a time. Bitbucket escapes raw HTML, so deep-review's markers and
//! HTML are written in a form it does not display ([`body`]).

mod api;
pub mod body;
mod diff;
pub mod http;
mod identity;
mod insights;
pub mod location;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use anyhow::Context;
use reqwest::{Method, StatusCode};
use serde_json::json;

use super::{Comment, Discussion, Forge, PrRef, PullRequest, ReviewDraft, ReviewPosted, Thread};
use crate::types::{Report, RequestKind};
use api::{ApiAccount, ApiComment, ApiDiffstat, ApiHash, ApiPullRequest};
use http::{Client, ForgeApi as _, refused_status};
pub use location::{MissingToken, claims, parse_url};

/// Pages of comments read at most (50 a page).
const MAX_COMMENT_PAGES: usize = 40;
/// Pages of commits and of the diffstat read at most.
const MAX_COMMIT_PAGES: usize = 6;
const MAX_DIFFSTAT_PAGES: usize = 20;

/// The viewer when the token's user is not known: no author's uuid is this.
const NOBODY: &str = "{unknown}";

/// The error was "no token": `post --dry-run` carries on offline.
pub fn is_missing_token(err: &anyhow::Error) -> bool {
    err.downcast_ref::<MissingToken>().is_some()
}

/// What reading a pull request learnt that later calls need.
#[derive(Clone)]
struct Seen {
    /// The branch the pull request comes from: where its head is fetched from.
    source_branch: String,
}

/// A repository on Bitbucket Cloud, with credentials.
pub struct Bitbucket {
    client: Client,
    /// `workspace/repo_slug`.
    full_name: String,
    seen: Mutex<HashMap<u64, Seen>>,
    /// The uuid of the token's user as `/user` says it, asked once; `None` when the token may
    /// not ask.
    asked: OnceLock<Option<String>>,
    /// Who the token is, and the signature of its comments.
    identity: identity::Identity,
}

impl Bitbucket {
    /// The repository of `pr` (see [`location::locate`]) and credentials for it.
    pub fn connect(repo: &Path, pr: &PrRef) -> anyhow::Result<Bitbucket> {
        let location = location::locate(repo, pr)?;
        let token = location::token()?;
        Ok(Bitbucket {
            full_name: location.full_name(),
            identity: identity::Identity::new(token.secret()),
            client: Client::new(location, token)?,
            seen: Mutex::new(HashMap::new()),
            asked: OnceLock::new(),
        })
    }

    fn pr_url(&self, number: u64, rest: &str) -> anyhow::Result<reqwest::Url> {
        self.client
            .repo_url(&format!("pullrequests/{number}{rest}"))
    }

    fn lock_seen(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Seen>> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The token's user's uuid: deep-review's comments are the ones it wrote. `/user` says it
    /// when the token may ask; else the author of a comment among `comments` signed for its
    /// own author ([`identity`]); else [`NOBODY`].
    fn viewer(&self, comments: &[ApiComment]) -> anyhow::Result<Option<String>> {
        let viewer = self
            .asked_user()?
            .or_else(|| self.identity.recognise(comments));
        if let Some(uuid) = &viewer {
            self.identity.set(uuid);
        }
        // Unknown, no comment is deep-review's: a comment someone wrote with a hidden marker
        // is not edited or taken for a finding already posted.
        Ok(Some(viewer.unwrap_or_else(|| NOBODY.to_string())))
    }

    /// `/user`'s uuid, asked once. An access token may not have the account scope (or any user
    /// to ask about); a token Bitbucket rejects has failed on the pull request already.
    fn asked_user(&self) -> anyhow::Result<Option<String>> {
        if let Some(v) = self.asked.get() {
            return Ok(v.clone());
        }
        let asked: anyhow::Result<ApiAccount> = self
            .client
            .get(self.client.api_url("user")?, "the token's user");
        let viewer = match asked {
            Ok(user) => user.uuid,
            Err(err)
                if matches!(
                    refused_status(&err),
                    Some(StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN | StatusCode::NOT_FOUND)
                ) =>
            {
                None
            }
            Err(err) => return Err(err),
        };
        Ok(self.asked.get_or_init(|| viewer).clone())
    }

    /// The full hash of commit `short` (a pull request's 12 characters), checked to be it.
    fn full_hash(&self, short: &str, side: &str, number: u64) -> anyhow::Result<String> {
        if short.is_empty() || short.len() > 64 || !short.bytes().all(|b| b.is_ascii_hexdigit()) {
            anyhow::bail!(
                "Bitbucket gave `{}` as the {side} commit of pull request #{number}: not a commit hash",
                crate::text::printable_line(short)
            );
        }
        let commit: ApiHash = self.client.get(
            self.client.repo_url(&format!("commit/{short}"))?,
            &format!("the {side} commit of pull request #{number}"),
        )?;
        if !commit.hash.starts_with(short) || !matches!(commit.hash.len(), 40 | 64) {
            anyhow::bail!(
                "Bitbucket resolved the {side} commit {short} of pull request #{number} to `{}`: not that commit",
                crate::text::printable_line(&commit.hash)
            );
        }
        Ok(commit.hash)
    }

    /// Every comment of pull request `number`, oldest first.
    fn all_comments(&self, number: u64) -> anyhow::Result<(Vec<ApiComment>, bool)> {
        let (mut comments, truncated) = self.client.get_all::<ApiComment>(
            self.pr_url(number, "/comments")?,
            &format!("the comments of pull request #{number}"),
            MAX_COMMENT_PAGES,
        )?;
        // Ids grow with time: the newest summary is the last one.
        comments.sort_by_key(|c| c.id);
        Ok((comments, truncated))
    }

    /// Posts comment `text` (as the shared renderer writes it) with the other fields of
    /// `fields` (`inline`, `parent`); returns its id. While deep-review does not know its own
    /// uuid, Bitbucket's answer says it, and the comment is signed by an edit.
    fn post_comment(
        &self,
        number: u64,
        text: &str,
        mut fields: serde_json::Value,
        what: &str,
    ) -> anyhow::Result<String> {
        let signature = self.identity.signature();
        fields["content"] = json!({ "raw": body::to_bitbucket(text, signature.as_deref()) });
        let created = self.client.send_json(
            Method::POST,
            self.pr_url(number, "/comments")?,
            &fields,
            what,
        )?;
        let id = created["id"]
            .as_u64()
            .ok_or_else(|| anyhow::anyhow!("Bitbucket created {what} but gave no id for it"))?;
        if signature.is_none()
            && let Some(uuid) = created["user"]["uuid"].as_str()
        {
            self.identity.set(uuid);
            self.edit_comment(number, id, text, "signing deep-review's first comment")?;
        }
        Ok(id.to_string())
    }

    /// Replaces comment `id`'s text with `text`, signed.
    fn edit_comment(&self, number: u64, id: u64, text: &str, what: &str) -> anyhow::Result<()> {
        let raw = body::to_bitbucket(text, self.identity.signature().as_deref());
        self.client.send_json(
            Method::PUT,
            self.pr_url(number, &format!("/comments/{id}"))?,
            &json!({ "content": { "raw": raw } }),
            what,
        )?;
        Ok(())
    }

    /// The lines Bitbucket's own diff of pull request `number` shows: its diffstat's files and
    /// its diff's hunks.
    fn shown_lines(&self, number: u64) -> anyhow::Result<(HashSet<String>, diff::Shown)> {
        let (stat, _) = self.client.get_all::<ApiDiffstat>(
            self.pr_url(number, "/diffstat")?,
            &format!("the diffstat of pull request #{number}"),
            MAX_DIFFSTAT_PAGES,
        )?;
        let files = stat
            .into_iter()
            .filter_map(|s| s.new.map(|n| n.path))
            .collect();
        let text = self.client.get_text(
            self.pr_url(number, "/diff")?,
            &format!("the diff of pull request #{number}"),
        )?;
        Ok((files, diff::Shown::parse(&text)))
    }
}

/// A branch name safe to put in a refspec: no option, no `..`, plain characters.
fn plain_branch(branch: &str) -> bool {
    !branch.is_empty()
        && !branch.starts_with('-')
        && !branch.contains("..")
        && branch
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c))
}

/// A comment id as Bitbucket writes them (digits): checked before it goes into an address.
fn comment_id(id: &str) -> anyhow::Result<u64> {
    id.parse::<u64>()
        .ok()
        .filter(|_| !id.is_empty() && id.len() <= 20)
        .with_context(|| {
            format!(
                "`{}` is not a Bitbucket comment id",
                crate::text::printable_line(id)
            )
        })
}

impl Forge for Bitbucket {
    fn name(&self) -> &'static str {
        "Bitbucket"
    }

    fn kind(&self) -> RequestKind {
        RequestKind::PullRequest
    }

    fn repository(&self) -> &str {
        &self.full_name
    }

    /// Bitbucket keeps no ref for a pull request: its head is the source branch's.
    fn head_refspec(&self, number: u64) -> String {
        match self.lock_seen().get(&number) {
            Some(seen) if plain_branch(&seen.source_branch) => {
                format!("refs/heads/{}", seen.source_branch)
            }
            _ => format!("refs/pull-requests/{number}/from"),
        }
    }

    fn pull_request(&self, number: u64) -> anyhow::Result<PullRequest> {
        let pr: ApiPullRequest = self
            .client
            .get(self.pr_url(number, "")?, &format!("pull request #{number}"))?;
        let short = |e: &api::ApiEndpoint| {
            e.commit
                .as_ref()
                .map(|c| c.hash.clone())
                .unwrap_or_default()
        };
        let head_sha = self.full_hash(&short(&pr.source), "head", number)?;
        let base_sha = self.full_hash(&short(&pr.destination), "base", number)?;
        let (mut commits, _) = self.client.get_all::<ApiHash>(
            self.pr_url(number, "/commits")?,
            &format!("the commits of pull request #{number}"),
            MAX_COMMIT_PAGES,
        )?;
        // Bitbucket lists a pull request's commits newest first.
        commits.reverse();
        let branch = |e: &api::ApiEndpoint| {
            e.branch
                .as_ref()
                .map(|b| b.name.clone())
                .unwrap_or_default()
        };
        let head_ref = branch(&pr.source);
        self.lock_seen().insert(
            number,
            Seen {
                source_branch: head_ref.clone(),
            },
        );
        let location = &self.client.location;
        let url = pr
            .links
            .html
            .map(|h| h.href)
            .filter(|h| h.starts_with("https://"))
            .unwrap_or_else(|| {
                format!(
                    "https://{}/{}/pull-requests/{number}",
                    location::WEB_HOST,
                    location.full_name()
                )
            });
        Ok(PullRequest {
            number: pr.id,
            title: pr.title,
            body: pr.description,
            author: pr.author.and_then(|a| a.nickname),
            url,
            base_ref: branch(&pr.destination),
            base_sha,
            head_ref,
            head_sha,
            commits: commits.into_iter().map(|c| c.hash).collect(),
            open: pr.state.as_deref().is_none_or(|s| s == "OPEN"),
        })
    }

    fn discussion(&self, number: u64) -> anyhow::Result<Discussion> {
        let (comments, truncated) = self.all_comments(number)?;
        let viewer = self.viewer(&comments)?;
        Ok(Discussion {
            threads: api::threads(&comments, viewer.as_deref()),
            viewer,
            truncated,
        })
    }

    fn comments(&self, number: u64) -> anyhow::Result<Vec<Comment>> {
        let (comments, _) = self.all_comments(number)?;
        let viewer = self.viewer(&comments)?;
        Ok(api::conversation(&comments, viewer.as_deref()))
    }

    fn create_comment(&self, number: u64, body: &str) -> anyhow::Result<String> {
        self.post_comment(
            number,
            body,
            json!({}),
            &format!("a comment on pull request #{number}"),
        )
    }

    fn update_comment(&self, number: u64, id: &str, body: &str) -> anyhow::Result<()> {
        let id = comment_id(id)?;
        self.edit_comment(
            number,
            id,
            body,
            "an update of deep-review's summary comment",
        )
    }

    /// The comments on lines Bitbucket's own diff does not show (or in files it does not list).
    fn refused_comments(&self, number: u64, review: &ReviewDraft) -> anyhow::Result<ReviewPosted> {
        let (files, shown) = self.shown_lines(number)?;
        let refused: Vec<String> = review
            .comments
            .iter()
            .filter(|c| {
                let start = c.start_line.unwrap_or(c.line);
                !files.contains(&c.path) || !shown.contains(&c.path, start, c.line)
            })
            .map(|c| c.fingerprint.clone())
            .collect();
        let notes = (!refused.is_empty())
            .then(|| {
                format!(
                    "{} on lines Bitbucket's diff of pull request #{number} does not show: in the summary comment instead",
                    crate::text::plural(refused.len(), "inline comment", "inline comments")
                )
            })
            .into_iter()
            .collect();
        Ok(ReviewPosted { refused, notes })
    }

    /// One inline comment at a time (Bitbucket has no review to batch them), on the new side's
    /// last line of each; a 400 refuses that comment's place and moves it to the summary.
    fn create_review(&self, number: u64, review: &ReviewDraft) -> anyhow::Result<ReviewPosted> {
        let mut posted = ReviewPosted::default();
        for c in &review.comments {
            let inline = json!({ "inline": { "path": c.path, "to": c.line } });
            let what = format!("an inline comment on {}:{}", c.path, c.line);
            match self.post_comment(number, &c.body, inline, &what) {
                Ok(_) => {}
                Err(err) if refused_status(&err) == Some(StatusCode::BAD_REQUEST) => {
                    posted.refused.push(c.fingerprint.clone());
                }
                Err(err) => return Err(err),
            }
        }
        Ok(posted)
    }

    fn reply(&self, number: u64, thread: &Thread, body: &str) -> anyhow::Result<()> {
        let parent = comment_id(&thread.id)?;
        self.post_comment(
            number,
            body,
            json!({ "parent": { "id": parent } }),
            &format!("a reply to comment {parent} of pull request #{number}"),
        )?;
        Ok(())
    }

    fn resolve_thread(&self, number: u64, thread: &Thread) -> anyhow::Result<bool> {
        let id = comment_id(&thread.id)?;
        let result = self.client.send(
            Method::POST,
            self.pr_url(number, &format!("/comments/{id}/resolve"))?,
            None,
            &format!("resolving comment {id} of pull request #{number}"),
        );
        match result {
            Ok(_) => Ok(true),
            Err(err) if refused_status(&err) == Some(StatusCode::CONFLICT) => Ok(true),
            Err(err) if refused_status(&err) == Some(StatusCode::FORBIDDEN) => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// The Code Insights report on the reviewed commit. Bitbucket refusing it is told, not
    /// fatal: the comments are posted already.
    fn publish_insights(&self, _number: u64, report: &Report) -> anyhow::Result<Vec<String>> {
        let Some(head) = report
            .meta
            .head
            .as_deref()
            .filter(|h| matches!(h.len(), 40 | 64) && h.bytes().all(|b| b.is_ascii_hexdigit()))
        else {
            return Ok(vec![
                "no Code Insights report: the report does not name the full commit it reviewed"
                    .to_string(),
            ]);
        };
        match insights::publish(&self.client, head, report) {
            Ok(notes) => Ok(notes),
            Err(err) => Ok(vec![format!("Code Insights report not posted: {err:#}")]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_branches_go_into_a_refspec() {
        assert!(plain_branch("feature/login-2"));
        assert!(!plain_branch("--upload-pack=evil"));
        assert!(!plain_branch("a..b"));
        assert!(!plain_branch("a b"));
        assert!(comment_id("3000000001").is_ok());
        assert!(comment_id("../../user").is_err());
    }
}
