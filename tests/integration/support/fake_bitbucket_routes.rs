//! The fake Bitbucket's answers, route by route (see `support::fake_bitbucket`).

use std::collections::HashMap;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Response, StatusCode};
use serde_json::{Value, json};

use super::bitbucket_description::Description;
use super::fake_bitbucket::{
    BOT, Call, FakeComment, PullRequest, View, error, render, respond, uuid_of,
};

pub type Answer = Response<Full<Bytes>>;

use super::fake_bitbucket_insights::{annotate, delete_report, put_report};

pub fn answer(v: &mut View<'_>, d: &Description, call: &Call) -> Answer {
    if let Some(status) = v.failure(call) {
        return failure(status);
    }
    let (path, query) = call.path.split_once('?').unwrap_or((&call.path, ""));
    let Some(path) = path.strip_prefix("/2.0") else {
        return error(StatusCode::NOT_FOUND, "Resource not found");
    };
    if !v.authenticate(call.authorization.as_deref()) {
        return error(
            StatusCode::UNAUTHORIZED,
            "Token is invalid, expired, or not supported for this endpoint.",
        );
    }
    let (route, params) = match d.route(&call.method, path) {
        Ok(found) => found,
        Err(405) => return error(StatusCode::METHOD_NOT_ALLOWED, "Method not allowed"),
        Err(_) => return error(StatusCode::NOT_FOUND, "Resource not found"),
    };
    if route.name != "user.get" {
        let same = params.get("workspace").map(String::as_str) == Some(v.workspace)
            && params.get("repo_slug").map(String::as_str) == Some(v.repo_slug);
        if !same {
            return error(StatusCode::NOT_FOUND, "Repository not found");
        }
    }
    let body: Value = if call.body.is_empty() {
        Value::Null
    } else if !call.content_type.starts_with("application/json") {
        return error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Unsupported Media Type");
    } else {
        match serde_json::from_str(&call.body) {
            Ok(b) => b,
            Err(e) => return error(StatusCode::BAD_REQUEST, &format!("Invalid JSON: {e}")),
        }
    };
    let req = Req {
        params,
        query,
        body,
        call,
    };
    match route.name.as_str() {
        "user.get" => authed_user(v),
        "repositories.getPullRequest" => {
            with_pr(v, &req, |v, pr, _| respond(StatusCode::OK, &pr_json(v, pr)))
        }
        "repositories.listPullRequestCommits" => with_pr(v, &req, commits),
        "repositories.getPullRequestDiff" => with_pr(v, &req, |_, pr, r| redirect(r, pr, "diff")),
        "repositories.getPullRequestDiffStat" => {
            with_pr(v, &req, |_, pr, r| redirect(r, pr, "diffstat"))
        }
        "repositories.getDiff" => with_pr(v, &req, |_, pr, _| diff_text(pr)),
        "repositories.listDiffStats" => with_pr(v, &req, diffstat),
        "repositories.listPullRequestComments" => with_pr(v, &req, list_comments),
        "repositories.createPullRequestComment" => {
            with_pr(v, &req, |v, pr, r| create_comment(v, d, pr, r))
        }
        "repositories.updatePullRequestComment" => {
            with_pr(v, &req, |v, _, r| update_comment(v, d, r))
        }
        "repositories.resolvePullRequestComment" => with_pr(v, &req, |v, _, r| resolve(v, r)),
        "repositories.getCommit" => with_pr(v, &req, |_, pr, r| commit(pr, r)),
        "repositories.createOrUpdateReport" => put_report(v, d, &req),
        "repositories.deleteReport" => delete_report(v, &req),
        "repositories.bulkCreateOrUpdateAnnotations" => annotate(v, d, &req),
        other => error(
            StatusCode::NOT_IMPLEMENTED,
            &format!("the fake does not serve {other}"),
        ),
    }
}

pub struct Req<'a> {
    params: HashMap<String, String>,
    query: &'a str,
    pub body: Value,
    call: &'a Call,
}

impl Req<'_> {
    pub fn param(&self, name: &str) -> &str {
        self.params.get(name).map(String::as_str).unwrap_or("")
    }

    fn query(&self, name: &str) -> Option<&str> {
        self.query
            .split('&')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
    }
}

fn failure(status: u16) -> Answer {
    let status = StatusCode::from_u16(status).expect("a status");
    if status == StatusCode::TOO_MANY_REQUESTS {
        return Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .header("retry-after", "1")
            .body(Full::new(Bytes::from(
                json!({"type": "error", "error": {"message": "Rate limit for this resource has been exceeded"}}).to_string(),
            )))
            .expect("a response");
    }
    error(status, "Something went wrong")
}

/// A 403 naming the scope Bitbucket required, as it answers a token without it.
pub fn lacks(v: &View<'_>, scope: &str) -> Answer {
    respond(
        StatusCode::FORBIDDEN,
        &json!({"type": "error", "error": {
            "message": "Your credentials lack one or more required privilege scopes.",
            "detail": { "granted": v.scopes.clone().unwrap_or_default(), "required": [scope] }
        }}),
    )
}

fn account(name: &str) -> Value {
    json!({ "type": "user", "uuid": uuid_of(name), "nickname": name, "display_name": name,
            "account_id": format!("557058:{}", &uuid_of(name)[1..37]) })
}

fn authed_user(v: &View<'_>) -> Answer {
    if !v.may("account") {
        return lacks(v, "account");
    }
    respond(StatusCode::OK, &account(v.user.as_deref().unwrap_or(BOT)))
}

fn with_pr(
    v: &mut View<'_>,
    r: &Req<'_>,
    f: impl FnOnce(&mut View<'_>, &PullRequest, &Req<'_>) -> Answer,
) -> Answer {
    if !v.may("pullrequest") {
        return lacks(v, "pullrequest");
    }
    let Some(pr) = v.pr.clone() else {
        return error(StatusCode::NOT_FOUND, "No pull requests");
    };
    if let Some(id) = r.params.get("pull_request_id")
        && id.parse::<u64>().ok() != Some(pr.id)
    {
        return error(
            StatusCode::NOT_FOUND,
            &format!("No pull request with id {id}"),
        );
    }
    f(v, &pr, r)
}

fn web(v: &View<'_>) -> String {
    format!("https://bitbucket.org/{}/{}", v.workspace, v.repo_slug)
}

fn pr_json(v: &View<'_>, pr: &PullRequest) -> Value {
    let end = |branch: &str, sha: &str| {
        json!({ "branch": { "name": branch }, "commit": { "type": "commit", "hash": &sha[..12] },
                "repository": { "type": "repository", "full_name": format!("{}/{}", v.workspace, v.repo_slug) } })
    };
    json!({
        "type": "pullrequest", "id": pr.id, "title": pr.title, "description": pr.description,
        "state": "OPEN", "author": account(&pr.author),
        "source": end(&pr.source_branch, &pr.head), "destination": end(&pr.destination_branch, &pr.base),
        "comment_count": v.comments.len(),
        "links": { "html": { "href": format!("{}/pull-requests/{}", web(v), pr.id) } },
    })
}

/// One page of `items`, `next` pointing at the following one.
fn page(v: &View<'_>, r: &Req<'_>, items: &[Value]) -> Answer {
    let asked = r
        .query("pagelen")
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(10);
    if asked > 100 {
        return error(StatusCode::BAD_REQUEST, "Invalid pagelen");
    }
    let size = asked.min(v.page_size).max(1);
    let number = r
        .query("page")
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    let values: Vec<Value> = items
        .iter()
        .skip((number - 1) * size)
        .take(size)
        .cloned()
        .collect();
    let mut out = json!({ "pagelen": size, "size": items.len(), "page": number, "values": values });
    if number * size < items.len() {
        let path = r.call.path.split('?').next().unwrap_or("");
        let others: Vec<&str> = r
            .query
            .split('&')
            .filter(|kv| !kv.is_empty() && !kv.starts_with("page="))
            .collect();
        let mut q = others.join("&");
        if !q.is_empty() {
            q.push('&');
        }
        out["next"] = json!(format!("{}{path}?{q}page={}", r.call.origin, number + 1));
    }
    respond(StatusCode::OK, &out)
}

fn commits(v: &mut View<'_>, pr: &PullRequest, r: &Req<'_>) -> Answer {
    let items: Vec<Value> = pr
        .commits
        .iter()
        .rev()
        .map(|c| json!({ "type": "commit", "hash": c, "message": "", "parents": [] }))
        .collect();
    page(v, r, &items)
}

/// Bitbucket answers a pull request's diff and diffstat with a redirect to the repository's.
fn redirect(r: &Req<'_>, pr: &PullRequest, what: &str) -> Answer {
    let ws = r.param("workspace");
    let slug = r.param("repo_slug");
    let to = format!(
        "{}/2.0/repositories/{ws}/{slug}/{what}/{ws}/{slug}:{}%0D{}?from_pullrequest_id={}&topic=true",
        r.call.origin,
        &pr.head[..12],
        &pr.base[..12],
        pr.id
    );
    Response::builder()
        .status(StatusCode::FOUND)
        .header("location", to)
        .body(Full::new(Bytes::new()))
        .expect("a response")
}

fn diff_text(pr: &PullRequest) -> Answer {
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/plain")
        .body(Full::new(Bytes::from(pr.diff.clone())))
        .expect("a response")
}

fn diffstat(v: &mut View<'_>, pr: &PullRequest, r: &Req<'_>) -> Answer {
    let items: Vec<Value> = diff_files(&pr.diff)
        .into_iter()
        .map(|(old, new)| {
            let side = |p: &Option<String>| {
                p.as_ref()
                    .map(|p| json!({ "type": "commit_file", "path": p }))
            };
            let status = match (&old, &new) {
                (None, _) => "added",
                (_, None) => "removed",
                _ => "modified",
            };
            json!({ "type": "diffstat", "status": status, "old": side(&old), "new": side(&new),
                    "lines_added": 1, "lines_removed": 0 })
        })
        .collect();
    page(v, r, &items)
}

/// The (old, new) paths of each file of a git diff.
fn diff_files(diff: &str) -> Vec<(Option<String>, Option<String>)> {
    let mut files = Vec::new();
    let mut old = None;
    for line in diff.lines() {
        if let Some(p) = line.strip_prefix("--- ") {
            old = p.strip_prefix("a/").map(str::to_string);
        } else if let Some(p) = line.strip_prefix("+++ ") {
            files.push((old.take(), p.strip_prefix("b/").map(str::to_string)));
        }
    }
    files
}

/// Whether line `to` of `path` is on the new side of one of the diff's hunks.
fn on_diff(diff: &str, path: &str, to: u64) -> bool {
    let mut current = false;
    for line in diff.lines() {
        if let Some(p) = line.strip_prefix("+++ ") {
            current = p.strip_prefix("b/") == Some(path);
        } else if let Some(h) = line.strip_prefix("@@ -").filter(|_| current) {
            let new = h
                .split(' ')
                .nth(1)
                .and_then(|n| n.strip_prefix('+'))
                .unwrap_or("0");
            let (start, count) = new.split_once(',').unwrap_or((new, "1"));
            let (start, count): (u64, u64) =
                (start.parse().unwrap_or(0), count.parse().unwrap_or(0));
            if count > 0 && start <= to && to < start + count {
                return true;
            }
        }
    }
    false
}

fn comment_json(v: &View<'_>, c: &FakeComment, pr: &PullRequest) -> Value {
    let mut out = json!({
        "type": "pullrequest_comment", "id": c.id, "deleted": false, "pending": false,
        "content": { "type": "rendered", "raw": c.raw, "markup": "markdown", "html": c.html },
        "user": { "type": "user", "uuid": c.author_uuid, "nickname": c.author, "display_name": c.author },
        "created_on": "2026-12-06T10:00:00.000000+00:00",
        "links": { "html": { "href": format!("{}/pull-requests/{}#comment-{}", web(v), pr.id, c.id) } },
    });
    if let Some(inline) = &c.inline {
        out["inline"] = inline.clone();
    }
    if let Some(parent) = c.parent {
        out["parent"] = json!({ "id": parent });
    }
    if c.resolved {
        out["resolution"] = json!({ "type": "comment_resolution", "user": account(BOT), "created_on": "2026-12-06T11:00:00+00:00" });
    }
    out
}

fn list_comments(v: &mut View<'_>, pr: &PullRequest, r: &Req<'_>) -> Answer {
    let mut sorted = v.comments.clone();
    sorted.sort_by_key(|c| c.id);
    let items: Vec<Value> = sorted.iter().map(|c| comment_json(v, c, pr)).collect();
    page(v, r, &items)
}

fn create_comment(v: &mut View<'_>, d: &Description, pr: &PullRequest, r: &Req<'_>) -> Answer {
    if !v.may("pullrequest:write") {
        return lacks(v, "pullrequest:write");
    }
    if let Some(problem) = d.check("PullrequestComment", &r.body) {
        return error(StatusCode::BAD_REQUEST, &problem);
    }
    let Some(raw) = r.body["content"]["raw"]
        .as_str()
        .filter(|s| !s.trim().is_empty())
    else {
        return error(
            StatusCode::BAD_REQUEST,
            "content.raw: This field is required.",
        );
    };
    let parent = r.body["parent"]["id"].as_u64();
    if let Some(p) = parent
        && !v.comments.iter().any(|c| c.id == p)
    {
        return error(StatusCode::BAD_REQUEST, "parent: No comment with this id");
    }
    let inline = r.body.get("inline").filter(|i| !i.is_null()).cloned();
    if let Some(i) = &inline {
        let path = i["path"].as_str().unwrap_or("");
        let to = i["to"].as_u64();
        let placed = match to {
            Some(to) => on_diff(&pr.diff, path, to),
            None => {
                i["from"].as_u64().is_some()
                    && diff_files(&pr.diff)
                        .iter()
                        .any(|(o, _)| o.as_deref() == Some(path))
            }
        };
        if !placed || v.refuse_inline_on.iter().any(|p| p == path) {
            return error(
                StatusCode::BAD_REQUEST,
                "inline: The line is not part of the diff",
            );
        }
    }
    let id = v.next_comment_id();
    let comment = FakeComment {
        id,
        author: BOT.into(),
        author_uuid: uuid_of(BOT),
        raw: raw.into(),
        html: render(raw),
        inline,
        parent,
        resolved: false,
    };
    let out = comment_json(v, &comment, pr);
    v.comments.push(comment);
    respond(StatusCode::CREATED, &out)
}

fn update_comment(v: &mut View<'_>, d: &Description, r: &Req<'_>) -> Answer {
    if !v.may("pullrequest:write") {
        return lacks(v, "pullrequest:write");
    }
    if let Some(problem) = d.check("PullrequestComment", &r.body) {
        return error(StatusCode::BAD_REQUEST, &problem);
    }
    let id: u64 = r.param("comment_id").parse().unwrap_or(0);
    let Some(c) = v.comments.iter_mut().find(|c| c.id == id) else {
        return error(StatusCode::NOT_FOUND, "No comment with this id");
    };
    if c.author != BOT {
        return error(StatusCode::FORBIDDEN, "You can only edit your own comments");
    }
    let Some(raw) = r.body["content"]["raw"].as_str() else {
        return error(
            StatusCode::BAD_REQUEST,
            "content.raw: This field is required.",
        );
    };
    c.raw = raw.into();
    c.html = render(raw);
    respond(
        StatusCode::OK,
        &json!({ "type": "pullrequest_comment", "id": id }),
    )
}

fn resolve(v: &mut View<'_>, r: &Req<'_>) -> Answer {
    if !v.may("pullrequest:write") {
        return lacks(v, "pullrequest:write");
    }
    let id: u64 = r.param("comment_id").parse().unwrap_or(0);
    let Some(c) = v.comments.iter_mut().find(|c| c.id == id) else {
        return error(StatusCode::NOT_FOUND, "No comment with this id");
    };
    if c.parent.is_some() {
        return error(
            StatusCode::BAD_REQUEST,
            "Only top-level comments can be resolved",
        );
    }
    if c.resolved {
        return error(StatusCode::CONFLICT, "Comment is already resolved");
    }
    c.resolved = true;
    respond(
        StatusCode::OK,
        &json!({ "type": "comment_resolution", "user": account(BOT) }),
    )
}

/// A commit named by a prefix of its hash (Bitbucket takes short hashes here).
fn commit(pr: &PullRequest, r: &Req<'_>) -> Answer {
    let asked = r.param("commit");
    let known = pr.commits.iter().chain([&pr.head, &pr.base]);
    match known
        .into_iter()
        .find(|c| asked.len() >= 7 && c.starts_with(asked))
    {
        Some(full) => respond(StatusCode::OK, &json!({ "type": "commit", "hash": full })),
        None => error(StatusCode::NOT_FOUND, &format!("Commit not found: {asked}")),
    }
}
