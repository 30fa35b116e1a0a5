//! GitLab as a [`Forge`]: a merge request, its commits, its discussions and notes over the REST
//! API v4, as GitLab documents them. GitLab.com by default; a self-managed instance through
//! `CI_API_V4_URL` (what GitLab CI sets in every job) or the host of the `origin` remote.
//!
//! How GitLab's words map onto the forge's: a merge request (`!42`) is the pull request; its
//! `diff_refs` give the base (the merge-base) and head commits; a resolvable discussion that is
//! not a lone comment is a review thread; a plain note is a conversation comment (the summary);
//! the inline comments are draft notes published at once ([`review`]), or discussions where
//! draft notes are not available.

pub mod http;
pub mod location;
pub mod position;
pub mod quick_actions;
mod review;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use anyhow::Context;
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::json;

use super::{Comment, Discussion, Forge, PrRef, PullRequest, ReviewDraft, ReviewPosted, Thread};
use crate::types::RequestKind;
use http::{Client, ForgeApi as _, refused_status};
pub use location::MissingToken;

/// Pages of discussions read at most (100 a page).
const MAX_DISCUSSION_PAGES: usize = 20;
/// Pages of notes read to find the summary (100 a page).
const MAX_NOTE_PAGES: usize = 30;
/// Pages of commits read at most.
const MAX_COMMIT_PAGES: usize = 3;
/// Newest notes kept per discussion, to find deep-review's own replies.
const RECENT_NOTES: usize = 20;

/// The error was "no token": `post --dry-run` carries on offline.
pub fn is_missing_token(err: &anyhow::Error) -> bool {
    err.downcast_ref::<MissingToken>().is_some()
}

/// A project on GitLab, with a token.
pub struct GitLab {
    client: Client,
    /// What `pull_request` read, by number: the head that decides whether a discussion is on
    /// an earlier version, and the page its notes link to.
    seen: Mutex<HashMap<u64, (String, String)>>,
}

#[derive(Deserialize)]
struct ApiUser {
    username: String,
}

#[derive(Deserialize, Clone)]
struct ApiDiffRefs {
    #[serde(default)]
    base_sha: Option<String>,
    #[serde(default)]
    head_sha: Option<String>,
}

#[derive(Deserialize)]
struct ApiMergeRequest {
    iid: u64,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    author: Option<ApiUser>,
    #[serde(default)]
    web_url: Option<String>,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    source_branch: String,
    #[serde(default)]
    target_branch: String,
    #[serde(default)]
    diff_refs: Option<ApiDiffRefs>,
}

#[derive(Deserialize)]
struct ApiCommit {
    id: String,
}

#[derive(Deserialize)]
struct ApiPosition {
    #[serde(default)]
    new_path: Option<String>,
    #[serde(default)]
    old_path: Option<String>,
    #[serde(default)]
    new_line: Option<u32>,
    #[serde(default)]
    old_line: Option<u32>,
    #[serde(default)]
    head_sha: Option<String>,
}

#[derive(Deserialize)]
struct ApiNote {
    id: u64,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    body: String,
    #[serde(default)]
    author: Option<ApiUser>,
    #[serde(default)]
    system: bool,
    #[serde(default)]
    resolvable: bool,
    #[serde(default)]
    resolved: bool,
    #[serde(default)]
    position: Option<ApiPosition>,
}

#[derive(Deserialize)]
struct ApiDiscussion {
    id: String,
    #[serde(default)]
    individual_note: bool,
    #[serde(default)]
    notes: Vec<ApiNote>,
}

impl GitLab {
    /// The project of `mr` (see [`location::locate`]) and a token for it.
    pub fn connect(repo: &Path, mr: &PrRef) -> anyhow::Result<GitLab> {
        let location = location::locate(repo, mr)?;
        let token = location::token(&location)?;
        Ok(GitLab {
            client: Client::new(location, token)?,
            seen: Mutex::new(HashMap::new()),
        })
    }

    fn mr_url(&self, number: u64, rest: &str) -> anyhow::Result<reqwest::Url> {
        self.client
            .project_url(&format!("merge_requests/{number}{rest}"))
    }

    fn merge_request(&self, number: u64) -> anyhow::Result<ApiMergeRequest> {
        self.client.get(
            self.mr_url(number, "")?,
            &format!("merge request !{number}"),
        )
    }

    /// The head and web page of merge request `number`, read once.
    fn head_and_page(&self, number: u64) -> anyhow::Result<(String, String)> {
        if let Some(seen) = self.lock_seen().get(&number) {
            return Ok(seen.clone());
        }
        let mr = self.merge_request(number)?;
        let seen = (
            mr.diff_refs.and_then(|r| r.head_sha).unwrap_or_default(),
            mr.web_url.unwrap_or_default(),
        );
        self.lock_seen().insert(number, seen.clone());
        Ok(seen)
    }

    fn lock_seen(&self) -> std::sync::MutexGuard<'_, HashMap<u64, (String, String)>> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The token's own user: deep-review's notes are the ones it wrote. A CI job's token has
    /// no user to ask about.
    fn viewer(&self) -> anyhow::Result<Option<String>> {
        if self.client.token().is_job_token() {
            return Ok(None);
        }
        let user: ApiUser = self
            .client
            .get(self.client.api_url("user")?, "the token's user")?;
        Ok(Some(user.username))
    }

    /// The body as it may go to GitLab: no line can run a quick action.
    fn safe(body: &str) -> String {
        quick_actions::inert(body)
    }

    /// Posting needs an access token: a CI job's token reads only.
    fn require_write(&self, what: &str) -> anyhow::Result<()> {
        if self.client.token().is_job_token() {
            anyhow::bail!(
                "CI_JOB_TOKEN cannot post {what}: set GITLAB_TOKEN to a project access token with the api scope and the Developer role"
            );
        }
        Ok(())
    }
}

fn comment_of(note: &ApiNote, page: &str) -> Comment {
    Comment {
        id: note.id.to_string(),
        author: note.author.as_ref().map(|a| a.username.clone()),
        body: note.body.clone(),
        url: (!page.is_empty()).then(|| format!("{page}#note_{}", note.id)),
    }
}

/// A review thread of a discussion: one that people can resolve (not a lone comment, not a
/// system note), with its place on the diff.
fn thread_of(d: ApiDiscussion, head: &str, page: &str) -> Option<Thread> {
    if d.individual_note {
        return None;
    }
    let notes: Vec<&ApiNote> = d.notes.iter().filter(|n| !n.system).collect();
    let first = *notes.first()?;
    if !first.resolvable {
        return None;
    }
    let position = first.position.as_ref();
    let path = position.and_then(|p| p.new_path.clone().or_else(|| p.old_path.clone()));
    let line = position.and_then(|p| p.new_line.or(p.old_line));
    let outdated = position
        .and_then(|p| p.head_sha.as_deref())
        .is_some_and(|sha| !head.is_empty() && sha != head);
    let resolved = notes.iter().filter(|n| n.resolvable).all(|n| n.resolved);
    let recent: Vec<Comment> = notes
        .iter()
        .rev()
        .take(RECENT_NOTES)
        .rev()
        .map(|n| comment_of(n, page))
        .collect();
    Some(Thread {
        id: d.id,
        path: path.filter(|_| first.kind.as_deref() == Some("DiffNote")),
        line,
        resolved,
        outdated,
        first: Some(comment_of(first, page)),
        recent,
        comment_count: notes.len(),
    })
}

impl Forge for GitLab {
    fn name(&self) -> &'static str {
        "GitLab"
    }

    fn kind(&self) -> RequestKind {
        RequestKind::MergeRequest
    }

    fn repository(&self) -> &str {
        &self.client.location.project
    }

    fn head_refspec(&self, number: u64) -> String {
        format!("refs/merge-requests/{number}/head")
    }

    fn pull_request(&self, number: u64) -> anyhow::Result<PullRequest> {
        let mr = self.merge_request(number)?;
        let refs = mr.diff_refs.clone().unwrap_or(ApiDiffRefs {
            base_sha: None,
            head_sha: None,
        });
        let (Some(base_sha), Some(head_sha)) = (refs.base_sha, refs.head_sha) else {
            anyhow::bail!(
                "GitLab has not worked out the diff of merge request !{number} yet (its diff_refs are empty): try again in a minute"
            );
        };
        let (mut commits, _) = self.client.get_all::<ApiCommit>(
            self.mr_url(number, "/commits")?,
            &format!("the commits of merge request !{number}"),
            MAX_COMMIT_PAGES,
        )?;
        // GitLab lists a merge request's commits newest first.
        commits.reverse();
        let url = mr.web_url.clone().unwrap_or_default();
        self.lock_seen()
            .insert(number, (head_sha.clone(), url.clone()));
        Ok(PullRequest {
            number: mr.iid,
            title: mr.title.unwrap_or_default(),
            body: mr.description.unwrap_or_default(),
            author: mr.author.map(|u| u.username),
            url,
            base_ref: mr.target_branch,
            base_sha,
            head_ref: mr.source_branch,
            head_sha,
            commits: commits.into_iter().map(|c| c.id).collect(),
            open: !matches!(mr.state.as_deref(), Some("closed" | "merged")),
        })
    }

    fn discussion(&self, number: u64) -> anyhow::Result<Discussion> {
        let viewer = self.viewer()?;
        let (head, page) = self.head_and_page(number)?;
        let (discussions, truncated) = self.client.get_all::<ApiDiscussion>(
            self.mr_url(number, "/discussions")?,
            &format!("the discussions of merge request !{number}"),
            MAX_DISCUSSION_PAGES,
        )?;
        Ok(Discussion {
            viewer,
            threads: discussions
                .into_iter()
                .filter_map(|d| thread_of(d, &head, &page))
                .collect(),
            truncated,
        })
    }

    fn comments(&self, number: u64) -> anyhow::Result<Vec<Comment>> {
        let (_, page) = self.head_and_page(number)?;
        let mut url = self.mr_url(number, "/notes")?;
        url.query_pairs_mut()
            .append_pair("sort", "asc")
            .append_pair("order_by", "created_at");
        let (notes, _) = self.client.get_all::<ApiNote>(
            url,
            &format!("the notes of merge request !{number}"),
            MAX_NOTE_PAGES,
        )?;
        Ok(notes
            .iter()
            .filter(|n| !n.system && n.kind.is_none())
            .map(|n| comment_of(n, &page))
            .collect())
    }

    fn create_comment(&self, number: u64, body: &str) -> anyhow::Result<String> {
        self.require_write("a note")?;
        let created = self.client.send_json(
            Method::POST,
            self.mr_url(number, "/notes")?,
            &json!({ "body": Self::safe(body) }),
            &format!("a note on merge request !{number}"),
        )?;
        created["id"]
            .as_u64()
            .map(|id| id.to_string())
            .ok_or_else(|| anyhow::anyhow!("GitLab created the note but gave no id for it"))
    }

    fn update_comment(&self, number: u64, id: &str, body: &str) -> anyhow::Result<()> {
        self.require_write("a note")?;
        let id: u64 = id
            .parse()
            .with_context(|| format!("`{id}` is not a GitLab note id"))?;
        self.client.send_json(
            Method::PUT,
            self.mr_url(number, &format!("/notes/{id}"))?,
            &json!({ "body": Self::safe(body) }),
            "an update of deep-review's summary note",
        )?;
        Ok(())
    }

    fn create_review(&self, number: u64, review: &ReviewDraft) -> anyhow::Result<ReviewPosted> {
        self.require_write("inline comments")?;
        review::create(self, number, review)
    }

    fn reply(&self, number: u64, thread: &Thread, body: &str) -> anyhow::Result<()> {
        self.require_write("a reply")?;
        self.client.send_json(
            Method::POST,
            self.mr_url(
                number,
                &format!("/discussions/{}/notes", discussion_id(thread)?),
            )?,
            &json!({ "body": Self::safe(body) }),
            &format!("a reply in a discussion of merge request !{number}"),
        )?;
        Ok(())
    }

    fn resolve_thread(&self, number: u64, thread: &Thread) -> anyhow::Result<bool> {
        self.require_write("a resolution")?;
        let result = self.client.send_json(
            Method::PUT,
            self.mr_url(number, &format!("/discussions/{}", discussion_id(thread)?))?,
            &json!({ "resolved": true }),
            &format!("resolving a discussion of merge request !{number}"),
        );
        match result {
            Ok(_) => Ok(true),
            Err(err) if refused_status(&err) == Some(StatusCode::FORBIDDEN) => Ok(false),
            Err(err) => Err(err),
        }
    }
}

/// A discussion id as GitLab writes them (hex): checked before it goes into an address.
fn discussion_id(thread: &Thread) -> anyhow::Result<&str> {
    let id = thread.id.as_str();
    (!id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_hexdigit()))
        .then_some(id)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "`{}` is not a GitLab discussion id",
                crate::text::printable_line(id)
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(id: u64, kind: Option<&str>, system: bool, resolved: bool) -> ApiNote {
        ApiNote {
            id,
            kind: kind.map(str::to_string),
            body: format!("note {id}"),
            author: Some(ApiUser {
                username: "jane.doe".into(),
            }),
            system,
            resolvable: !system,
            resolved,
            position: kind.filter(|k| *k == "DiffNote").map(|_| ApiPosition {
                new_path: Some("src/a.rs".into()),
                old_path: Some("src/a.rs".into()),
                new_line: Some(7),
                old_line: None,
                head_sha: Some("old".into()),
            }),
        }
    }

    #[test]
    fn only_resolvable_threads_are_threads() {
        let diff = ApiDiscussion {
            id: "ab".into(),
            individual_note: false,
            notes: vec![
                note(1, Some("DiffNote"), false, true),
                note(2, Some("DiscussionNote"), false, false),
            ],
        };
        let t = thread_of(diff, "new", "https://gl/p/-/merge_requests/1").unwrap();
        assert_eq!((t.path.as_deref(), t.line), (Some("src/a.rs"), Some(7)));
        assert!(!t.resolved, "one note is still unresolved");
        assert!(t.outdated, "written on an earlier version");
        assert_eq!(t.comment_count, 2);
        assert_eq!(
            t.first.unwrap().url.as_deref(),
            Some("https://gl/p/-/merge_requests/1#note_1")
        );
        let lone = ApiDiscussion {
            id: "cd".into(),
            individual_note: true,
            notes: vec![note(3, None, false, false)],
        };
        assert!(thread_of(lone, "new", "").is_none(), "a lone comment");
        let system = ApiDiscussion {
            id: "ef".into(),
            individual_note: false,
            notes: vec![note(4, None, true, false)],
        };
        assert!(thread_of(system, "new", "").is_none(), "a system note");
    }

    #[test]
    fn discussion_ids_are_checked_before_they_go_into_an_address() {
        let thread = |id: &str| Thread {
            id: id.into(),
            path: None,
            line: None,
            resolved: false,
            outdated: false,
            first: None,
            recent: vec![],
            comment_count: 0,
        };
        assert!(discussion_id(&thread("6a9c1750b37d513a43987b574953fceb50b03ce7")).is_ok());
        assert!(discussion_id(&thread("../../user")).is_err());
        assert!(discussion_id(&thread("")).is_err());
    }
}
