//! Posting a review with inline comments as GitHub takes it: GitHub refuses the whole review
//! (422 "Line could not be resolved") when one comment sits on a line its own diff does not
//! show, and does not say which. So the comments are checked first against GitHub's diff of the
//! pull request (the patches of `GET /pulls/{n}/files`, three lines of context as GitHub shows
//! them): a comment outside one hunk of its file's patch, on a file whose diff GitHub does not
//! render (no patch: too large, binary), or on a file GitHub does not list is left out and
//! reported ([`refused`]), and the review is posted with the rest ([`post`]). A 422 that still
//! comes is not retried: the review is not posted and every comment is reported, so a second
//! attempt cannot post a second review and the findings stay in the summary.

use std::collections::HashMap;

use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use super::http::{Client, ForgeApi as _};
use crate::forge::{InlineComment, ReviewDraft, ReviewPosted};

/// The most files GitHub lists for a pull request.
const MAX_LISTED_FILES: usize = 3000;

/// A file of the pull request's diff as GitHub lists it.
#[derive(Deserialize)]
struct ApiFile {
    filename: String,
    #[serde(default)]
    patch: Option<String>,
}

/// GitHub's diff of a pull request: for each file, the new-side lines of each hunk; `None`
/// for a file listed without a patch.
pub struct GitHubDiff {
    files: HashMap<String, Option<Vec<(u32, u32)>>>,
    /// GitHub listed more files than were read: an unlisted file may still be in the diff.
    truncated: bool,
}

impl GitHubDiff {
    pub fn read(client: &Client, number: u64) -> anyhow::Result<GitHubDiff> {
        let (files, more) = client.get_all::<ApiFile>(
            client.repo_url(&format!("pulls/{number}/files"))?,
            &format!("the files of pull request #{number}"),
        )?;
        // GitHub lists at most 3,000 files, with no next page after them.
        let truncated = more || files.len() >= MAX_LISTED_FILES;
        Ok(GitHubDiff {
            files: files
                .into_iter()
                .map(|f| (f.filename, f.patch.as_deref().map(hunk_spans)))
                .collect(),
            truncated,
        })
    }

    /// Why GitHub would refuse `comment`, or `None` when its lines are in one hunk.
    pub fn refusal(&self, comment: &InlineComment) -> Option<String> {
        let start = comment.start_line.unwrap_or(comment.line);
        match self.files.get(&comment.path) {
            None if self.truncated => None,
            None => Some("GitHub's diff of the pull request does not have this file".into()),
            Some(None) => Some("GitHub shows no diff of this file (too large or binary)".into()),
            Some(Some(spans)) => (!spans
                .iter()
                .any(|(first, last)| *first <= start && comment.line <= *last))
            .then(|| "these lines are not in one hunk of GitHub's diff".into()),
        }
    }
}

/// The new-side line span of each hunk of a patch (`@@ -a,b +c,d @@` headers: `c..c+d-1`).
fn hunk_spans(patch: &str) -> Vec<(u32, u32)> {
    patch
        .lines()
        .filter(|line| line.starts_with("@@ "))
        .filter_map(crate::target::diff::parse_hunk_header)
        .filter(|h| h.new_lines > 0)
        .map(|h| (h.new_start, h.new_start.saturating_add(h.new_lines - 1)))
        .collect()
}

/// The comments of `review` GitHub's diff of pull request `number` would not take, each with a
/// sentence saying where and why.
pub fn refused(client: &Client, number: u64, review: &ReviewDraft) -> anyhow::Result<ReviewPosted> {
    let mut out = ReviewPosted::default();
    if review.comments.is_empty() {
        return Ok(out);
    }
    let diff = GitHubDiff::read(client, number)?;
    for c in &review.comments {
        if let Some(reason) = diff.refusal(c) {
            out.refused.push(c.fingerprint.clone());
            out.notes.push(not_posted(c, &reason));
        }
    }
    Ok(out)
}

/// Posts `review` on pull request `number`. A 422 (GitHub would not place a comment) posts
/// nothing and returns every comment, so that a second attempt cannot make a second review.
pub fn post(client: &Client, number: u64, review: &ReviewDraft) -> anyhow::Result<ReviewPosted> {
    let what = format!("a review of pull request #{number}");
    let comments: Vec<Value> = review.comments.iter().map(comment_json).collect();
    let body = json!({
        "commit_id": review.commit,
        "event": "COMMENT",
        "body": review.body,
        "comments": comments,
    });
    match client.send_json(
        Method::POST,
        client.repo_url(&format!("pulls/{number}/reviews"))?,
        &body,
        &what,
    ) {
        Ok(_) => Ok(ReviewPosted::default()),
        Err(err) if super::http::is_unprocessable(&err) && !review.comments.is_empty() => {
            let reason = format!("GitHub refused the review's inline comments ({err:#})");
            Ok(ReviewPosted {
                refused: review
                    .comments
                    .iter()
                    .map(|c| c.fingerprint.clone())
                    .collect(),
                notes: review
                    .comments
                    .iter()
                    .map(|c| not_posted(c, &reason))
                    .collect(),
            })
        }
        Err(err) => Err(err),
    }
}

/// "inline comment at src/a.rs:3-4 not posted (why): its finding is listed in the summary".
fn not_posted(c: &InlineComment, reason: &str) -> String {
    let lines = match c.start_line {
        Some(s) if s != c.line => format!("{s}-{}", c.line),
        _ => c.line.to_string(),
    };
    format!(
        "inline comment at {}:{lines} not posted ({reason}): its finding is listed in the summary",
        c.path
    )
}

fn comment_json(c: &InlineComment) -> Value {
    let mut comment = json!({
        "path": c.path,
        "line": c.line,
        "side": "RIGHT",
        "body": c.body,
    });
    if let Some(start) = c.start_line {
        comment["start_line"] = json!(start);
        comment["start_side"] = json!("RIGHT");
    }
    comment
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comment(path: &str, start: Option<u32>, line: u32) -> InlineComment {
        InlineComment {
            path: path.into(),
            start_line: start,
            line,
            body: "b".into(),
            fingerprint: "ab".into(),
        }
    }

    #[test]
    fn comments_must_sit_in_one_hunk_of_githubs_patch() {
        assert_eq!(
            hunk_spans(
                "@@ -1,3 +1,4 @@ fn a()\n a\n+b\n c\n d\n@@ -40 +41,0 @@\n-x\n@@ -50,2 +50,3 @@\n"
            ),
            vec![(1, 4), (50, 52)]
        );
        let diff = GitHubDiff {
            files: [
                ("a.rs".to_string(), Some(vec![(1, 4), (50, 52)])),
                ("big.json".to_string(), None),
            ]
            .into(),
            truncated: false,
        };
        assert_eq!(diff.refusal(&comment("a.rs", Some(2), 4)), None);
        assert!(
            diff.refusal(&comment("a.rs", Some(4), 50)).is_some(),
            "two hunks"
        );
        assert!(diff.refusal(&comment("a.rs", None, 5)).is_some());
        assert!(
            diff.refusal(&comment("big.json", None, 1))
                .unwrap()
                .contains("no diff of this file")
        );
        assert!(diff.refusal(&comment("other.rs", None, 1)).is_some());
    }
}
