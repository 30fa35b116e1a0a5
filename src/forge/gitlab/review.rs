//! A merge request's inline comments, posted as GitLab prefers a review: draft notes, published
//! together so the author gets one notification; discussions one by one where the draft notes
//! API is not there (older instances) or not allowed.
//!
//! Every comment's position is built from GitLab's own diff of the version the report reviewed
//! ([`super::position`]); one whose lines that diff does not show, that GitLab refuses with
//! a 400 (a discussion), or that publishing a draft dropped (GitLab checks a draft's position
//! only then, and says nothing), comes back as refused and goes to the summary. Draft notes a
//! person has pending on the merge request with the same token are never published by
//! deep-review: then each of its own drafts is published alone instead of all at once.

use std::collections::HashSet;

use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::http::{ForgeApi as _, refused_position, refused_status};
use super::position::{DiffMap, DiffRefs, FileDiff};
use super::{ApiDiscussion, GitLab, MAX_DISCUSSION_PAGES};
use crate::forge::{InlineComment, ReviewDraft, ReviewPosted, markers};

/// Versions of a merge request's diff read at most (100 a page).
const MAX_VERSION_PAGES: usize = 5;
/// Draft notes read at most (100 a page).
const MAX_DRAFT_PAGES: usize = 5;

#[derive(Deserialize)]
struct ApiVersion {
    id: u64,
    head_commit_sha: String,
    base_commit_sha: String,
    start_commit_sha: String,
}

#[derive(Deserialize)]
struct ApiVersionDiffs {
    #[serde(default)]
    diffs: Vec<FileDiff>,
}

#[derive(Deserialize)]
struct ApiDraftNote {
    id: u64,
    #[serde(default)]
    note: String,
}

/// Posts `review`'s comments on merge request `number`.
pub fn create(gl: &GitLab, number: u64, review: &ReviewDraft) -> anyhow::Result<ReviewPosted> {
    let mut posted = ReviewPosted::default();
    let Some((refs, diffs)) = version_of(gl, number, &review.commit)? else {
        posted.notes.push(format!(
            "merge request !{number} has no version of its diff at {}: its findings are listed in the summary",
            short(&review.commit)
        ));
        posted.refused = review
            .comments
            .iter()
            .map(|c| c.fingerprint.clone())
            .collect();
        return Ok(posted);
    };
    let map = DiffMap::new(&diffs);
    let mut placed: Vec<(&InlineComment, Value)> = Vec::new();
    for c in &review.comments {
        match map.position(&refs, &c.path, c.start_line.unwrap_or(c.line), c.line) {
            Some(position) => placed.push((c, position)),
            None => posted.refused.push(c.fingerprint.clone()),
        }
    }
    if placed.is_empty() {
        return Ok(posted);
    }
    match drafts(gl, number)? {
        Some(pending) => post_drafts(gl, number, &placed, pending, &mut posted)?,
        None => post_discussions(gl, number, &placed, &mut posted)?,
    }
    Ok(posted)
}

/// The version of the merge request's diff whose head is `commit`: its commits and its files.
fn version_of(
    gl: &GitLab,
    number: u64,
    commit: &str,
) -> anyhow::Result<Option<(DiffRefs, Vec<FileDiff>)>> {
    let (versions, _) = gl.client.get_all::<ApiVersion>(
        gl.mr_url(number, "/versions")?,
        &format!("the diff versions of merge request !{number}"),
        MAX_VERSION_PAGES,
    )?;
    let Some(version) = versions.into_iter().find(|v| v.head_commit_sha == commit) else {
        return Ok(None);
    };
    let diffs: ApiVersionDiffs = gl.client.get(
        gl.mr_url(number, &format!("/versions/{}", version.id))?,
        &format!("the diff of merge request !{number} at {}", short(commit)),
    )?;
    Ok(Some((
        DiffRefs {
            base_sha: version.base_commit_sha,
            start_sha: version.start_commit_sha,
            head_sha: version.head_commit_sha,
        },
        diffs.diffs,
    )))
}

/// The token's draft notes on the merge request, once deep-review's own left over from a post
/// that stopped half-way are deleted (they are made again); `None` when the draft notes API is
/// not there. `Some(true)`: a person's own drafts are pending.
fn drafts(gl: &GitLab, number: u64) -> anyhow::Result<Option<bool>> {
    let listed = gl.client.get_all::<ApiDraftNote>(
        gl.mr_url(number, "/draft_notes")?,
        &format!("the draft notes of merge request !{number}"),
        MAX_DRAFT_PAGES,
    );
    let (notes, truncated) = match listed {
        Ok(listed) => listed,
        Err(err)
            if matches!(
                refused_status(&err),
                Some(StatusCode::NOT_FOUND | StatusCode::FORBIDDEN)
            ) =>
        {
            return Ok(None);
        }
        Err(err) => return Err(err),
    };
    let mut foreign = truncated;
    for note in notes {
        if markers::finding_of(&note.note).is_some() {
            gl.client.send(
                Method::DELETE,
                gl.mr_url(number, &format!("/draft_notes/{}", note.id))?,
                None,
                "deleting a draft note deep-review left unpublished",
            )?;
        } else {
            foreign = true;
        }
    }
    Ok(Some(foreign))
}

/// One draft note per comment, then all published at once (each alone when the token's user
/// has drafts of their own pending).
fn post_drafts(
    gl: &GitLab,
    number: u64,
    placed: &[(&InlineComment, Value)],
    foreign_pending: bool,
    posted: &mut ReviewPosted,
) -> anyhow::Result<()> {
    let mut created = Vec::new();
    let mut fingerprints = Vec::new();
    for (c, position) in placed {
        let result = gl.client.send_json(
            Method::POST,
            gl.mr_url(number, "/draft_notes")?,
            &json!({ "note": GitLab::safe(&c.body), "position": position }),
            &format!("an inline comment on {}:{}", c.path, c.line),
        );
        match result {
            Ok(draft) => {
                created.extend(draft["id"].as_u64());
                fingerprints.push(c.fingerprint.as_str());
            }
            Err(err) if refused_position(&err) => {
                posted.refused.push(c.fingerprint.clone());
            }
            Err(err) => return Err(err),
        }
    }
    if created.is_empty() {
        return Ok(());
    }
    publish_drafts(gl, number, created, foreign_pending, posted)?;
    let on_the_merge_request = published(gl, number)?;
    posted.refused.extend(
        fingerprints
            .into_iter()
            .filter(|fp| !on_the_merge_request.contains(*fp))
            .map(str::to_string),
    );
    Ok(())
}

/// Publishes the drafts `created`: all at once, or each alone when the token's user has drafts
/// of their own pending (which a bulk publish would publish too).
fn publish_drafts(
    gl: &GitLab,
    number: u64,
    created: Vec<u64>,
    foreign_pending: bool,
    posted: &mut ReviewPosted,
) -> anyhow::Result<()> {
    if foreign_pending {
        posted.notes.push(
            "the token's user has draft notes of their own on this merge request: deep-review published only its own"
                .to_string(),
        );
        for id in created {
            gl.client.send(
                Method::PUT,
                gl.mr_url(number, &format!("/draft_notes/{id}/publish"))?,
                None,
                "publishing a draft note",
            )?;
        }
    } else {
        gl.client.send(
            Method::POST,
            gl.mr_url(number, "/draft_notes/bulk_publish")?,
            None,
            "publishing the inline comments",
        )?;
    }
    Ok(())
}

/// The fingerprints of deep-review's inline comments the merge request has, read back after
/// publishing. GitLab checks a draft note's position only when it publishes it, and then drops
/// a draft it refuses without a word (its `DraftNotes::PublishService` deletes every draft
/// whether its note was saved or not): what is not here goes to the summary. Only the token's
/// own notes count: someone else's note that copies deep-review's marker must not pass for a
/// finding's comment and keep the finding out of the summary.
fn published(gl: &GitLab, number: u64) -> anyhow::Result<HashSet<String>> {
    let me = gl.viewer()?;
    let ours = |note: &&super::ApiNote| match (&me, &note.author) {
        (Some(me), Some(author)) => author.username.eq_ignore_ascii_case(me),
        (None, _) => true,
        (Some(_), None) => false,
    };
    let (discussions, _) = gl.client.get_all::<ApiDiscussion>(
        gl.mr_url(number, "/discussions")?,
        &format!("the discussions of merge request !{number}"),
        MAX_DISCUSSION_PAGES,
    )?;
    Ok(discussions
        .iter()
        .filter_map(|d| d.notes.iter().find(|n| !n.system))
        .filter(|n| n.position.is_some())
        .filter(ours)
        .filter_map(|n| markers::finding_of(&n.body).map(str::to_string))
        .collect())
}

/// One discussion per comment.
fn post_discussions(
    gl: &GitLab,
    number: u64,
    placed: &[(&InlineComment, Value)],
    posted: &mut ReviewPosted,
) -> anyhow::Result<()> {
    for (c, position) in placed {
        let result = gl.client.send_json(
            Method::POST,
            gl.mr_url(number, "/discussions")?,
            &json!({ "body": GitLab::safe(&c.body), "position": position }),
            &format!("an inline comment on {}:{}", c.path, c.line),
        );
        match result {
            Ok(_) => {}
            Err(err) if refused_position(&err) => {
                posted.refused.push(c.fingerprint.clone());
            }
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}
