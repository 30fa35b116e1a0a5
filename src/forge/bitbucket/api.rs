//! Bitbucket API 2.0's objects as deep-review reads them (the fields it uses, each optional
//! where Bitbucket may leave it out), and review threads made of its comments.
//!
//! Bitbucket has no thread object: a pull request's comments come as one list, a reply naming
//! its `parent`. An inline comment with no parent opens a thread (what people resolve); its
//! replies, at any depth, belong to it. A comment with no parent and no `inline` is a
//! conversation comment, where the summary goes.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use super::body::from_bitbucket;
use crate::forge::{Comment, Thread};

/// Newest comments kept per thread, to find deep-review's own replies.
const RECENT_COMMENTS: usize = 20;
/// Parent links followed at most to find a reply's thread (a cycle cannot loop).
const MAX_DEPTH: usize = 64;

#[derive(Deserialize, Clone, Default)]
pub struct ApiAccount {
    #[serde(default)]
    pub uuid: Option<String>,
    #[serde(default)]
    pub nickname: Option<String>,
    #[serde(default)]
    pub display_name: Option<String>,
}

#[derive(Deserialize, Default)]
pub struct ApiHash {
    #[serde(default)]
    pub hash: String,
}

#[derive(Deserialize, Default)]
pub struct ApiBranch {
    #[serde(default)]
    pub name: String,
}

#[derive(Deserialize, Default)]
pub struct ApiEndpoint {
    #[serde(default)]
    pub branch: Option<ApiBranch>,
    #[serde(default)]
    pub commit: Option<ApiHash>,
}

#[derive(Deserialize, Default)]
pub struct ApiHref {
    #[serde(default)]
    pub href: String,
}

#[derive(Deserialize, Default)]
pub struct ApiLinks {
    #[serde(default)]
    pub html: Option<ApiHref>,
}

#[derive(Deserialize)]
pub struct ApiPullRequest {
    pub id: u64,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub author: Option<ApiAccount>,
    #[serde(default)]
    pub state: Option<String>,
    #[serde(default)]
    pub source: ApiEndpoint,
    #[serde(default)]
    pub destination: ApiEndpoint,
    #[serde(default)]
    pub links: ApiLinks,
}

#[derive(Deserialize, Default)]
pub struct ApiContent {
    #[serde(default)]
    pub raw: String,
}

#[derive(Deserialize)]
pub struct ApiInline {
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub from: Option<u32>,
    #[serde(default)]
    pub to: Option<u32>,
    #[serde(default)]
    pub outdated: bool,
}

#[derive(Deserialize)]
pub struct ApiParent {
    pub id: u64,
}

#[derive(Deserialize)]
pub struct ApiComment {
    pub id: u64,
    #[serde(default)]
    pub content: ApiContent,
    #[serde(default)]
    pub user: Option<ApiAccount>,
    #[serde(default)]
    pub inline: Option<ApiInline>,
    #[serde(default)]
    pub parent: Option<ApiParent>,
    #[serde(default)]
    pub deleted: bool,
    #[serde(default)]
    pub resolution: Option<Value>,
    #[serde(default)]
    pub links: ApiLinks,
}

/// A diffstat entry: the file on the new side, when there is one.
#[derive(Deserialize)]
pub struct ApiDiffstat {
    #[serde(default)]
    pub new: Option<ApiPath>,
}

#[derive(Deserialize)]
pub struct ApiPath {
    #[serde(default)]
    pub path: String,
}

/// How a comment's author is named: the token's own user by its uuid (what is compared to
/// tell deep-review's comments), anyone else by nickname.
pub fn author_of(user: Option<&ApiAccount>, viewer: Option<&str>) -> Option<String> {
    let user = user?;
    match (&user.uuid, viewer) {
        (Some(uuid), Some(me)) if uuid.eq_ignore_ascii_case(me) => Some(uuid.clone()),
        _ => user.nickname.clone().or_else(|| user.display_name.clone()),
    }
}

pub fn comment_of(c: &ApiComment, viewer: Option<&str>) -> Comment {
    Comment {
        id: c.id.to_string(),
        author: author_of(c.user.as_ref(), viewer),
        body: from_bitbucket(&c.content.raw),
        url: c
            .links
            .html
            .as_ref()
            .map(|h| h.href.clone())
            .filter(|h| !h.is_empty()),
    }
}

/// The conversation comments: no parent, not on a line, not deleted.
pub fn conversation(comments: &[ApiComment], viewer: Option<&str>) -> Vec<Comment> {
    comments
        .iter()
        .filter(|c| c.parent.is_none() && c.inline.is_none() && !c.deleted)
        .map(|c| comment_of(c, viewer))
        .collect()
}

/// The review threads: each inline comment with no parent, with its replies (oldest first).
pub fn threads(comments: &[ApiComment], viewer: Option<&str>) -> Vec<Thread> {
    let parent: HashMap<u64, u64> = comments
        .iter()
        .filter_map(|c| c.parent.as_ref().map(|p| (c.id, p.id)))
        .collect();
    let root_of = |mut id: u64| {
        for _ in 0..MAX_DEPTH {
            match parent.get(&id) {
                Some(p) => id = *p,
                None => return Some(id),
            }
        }
        None
    };
    let mut members: HashMap<u64, Vec<&ApiComment>> = HashMap::new();
    for c in comments.iter().filter(|c| !c.deleted) {
        if let Some(root) = root_of(c.id) {
            members.entry(root).or_default().push(c);
        }
    }
    let mut roots: Vec<&ApiComment> = comments
        .iter()
        .filter(|c| c.parent.is_none() && c.inline.is_some() && !c.deleted)
        .collect();
    roots.sort_by_key(|c| c.id);
    roots
        .into_iter()
        .map(|root| {
            let mut all = members.remove(&root.id).unwrap_or_default();
            all.sort_by_key(|c| c.id);
            thread_of(root, &all, viewer)
        })
        .collect()
}

fn thread_of(root: &ApiComment, all: &[&ApiComment], viewer: Option<&str>) -> Thread {
    let inline = root.inline.as_ref();
    let skip = all.len().saturating_sub(RECENT_COMMENTS);
    Thread {
        id: root.id.to_string(),
        path: inline.map(|i| i.path.clone()).filter(|p| !p.is_empty()),
        line: inline.and_then(|i| i.to.or(i.from)),
        resolved: root.resolution.as_ref().is_some_and(|r| !r.is_null()),
        outdated: inline.is_some_and(|i| i.outdated),
        first: Some(comment_of(root, viewer)),
        recent: all
            .iter()
            .skip(skip)
            .map(|c| comment_of(c, viewer))
            .collect(),
        comment_count: all.len().max(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn comment(id: u64, parent: Option<u64>, inline: bool, uuid: &str) -> ApiComment {
        serde_json::from_value(json!({
            "id": id,
            "content": { "raw": format!("comment {id}") },
            "user": { "uuid": uuid, "nickname": format!("nick-{id}") },
            "inline": if inline { json!({ "path": "src/a.rs", "to": 7 }) } else { Value::Null },
            "parent": parent.map(|p| json!({ "id": p })),
        }))
        .unwrap()
    }

    #[test]
    fn replies_at_any_depth_join_their_inline_thread() {
        let me = "{0f1e2d3c-0000-4000-8000-000000000001}";
        let comments = vec![
            comment(3_000_000_001, None, true, "{other}"),
            comment(3_000_000_002, None, false, me),
            comment(3_000_000_003, Some(3_000_000_001), false, me),
            comment(3_000_000_004, Some(3_000_000_003), false, "{other}"),
        ];
        let threads = threads(&comments, Some(me));
        assert_eq!(threads.len(), 1);
        let t = &threads[0];
        assert_eq!((t.path.as_deref(), t.line), (Some("src/a.rs"), Some(7)));
        assert_eq!(t.comment_count, 3);
        assert_eq!(t.recent[1].author.as_deref(), Some(me));
        assert_eq!(
            t.first.as_ref().unwrap().author.as_deref(),
            Some("nick-3000000001")
        );
        let talk = conversation(&comments, Some(me));
        assert_eq!(talk.len(), 1);
        assert_eq!(talk[0].id, "3000000002");
    }

    #[test]
    fn a_parent_cycle_ends() {
        let comments = vec![
            comment(1, Some(2), false, "{a}"),
            comment(2, Some(1), false, "{a}"),
        ];
        assert!(threads(&comments, None).is_empty());
    }
}
