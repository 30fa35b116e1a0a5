//! A fake GitHub API on 127.0.0.1, REST and GraphQL, for the forge tests.
//!
//! It serves what deep-review uses, as GitHub documents it: a pull request and its commits,
//! the conversation comments (list, create, edit), reviews with inline comments (which become
//! review threads, as on GitHub), replies in a thread, and over GraphQL the review threads (with
//! `viewer`) and `resolveReviewThread`. It behaves as GitHub does where deep-review depends on
//! it: the token must match (401 otherwise), lists are paginated with `Link` headers (the page
//! size is the fake's, not the client's), an inline comment on a line outside the diff is a 422
//! that rejects the whole review, a comment may only be edited by its author, a bot's login is
//! `name[bot]` in REST and `viewer` but `name` as a GraphQL comment author. It can be told to
//! answer 429 with `retry-after` a number of times. Every request is recorded.
//!
//! Like the fake model server, it runs on its own thread with its own runtime; dropping it
//! stops it.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use super::http_server::Server;

/// The login the fake's token acts as (a GitHub App, as `GITHUB_TOKEN` in Actions is).
pub const BOT: &str = "deep-review-ci[bot]";

/// One request as the fake saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Path and query, as sent.
    pub path: String,
    pub body: String,
    pub status: u16,
}

impl Recorded {
    /// The GraphQL query or mutation text, for a GraphQL request.
    pub fn graphql(&self) -> Option<String> {
        let v: Value = serde_json::from_str(&self.body).ok()?;
        v["query"].as_str().map(str::to_string)
    }
}

/// A pull request the fake serves.
#[derive(Debug, Clone)]
pub struct Pull {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub author: String,
    pub base_ref: String,
    pub base_sha: String,
    pub head_ref: String,
    pub head_sha: String,
    pub commits: Vec<String>,
}

/// A comment as the fake keeps it.
#[derive(Debug, Clone)]
pub struct FakeComment {
    pub id: u64,
    /// The REST login (`name[bot]` for an app).
    pub author: String,
    pub body: String,
}

/// A review thread as the fake keeps it.
#[derive(Debug, Clone)]
pub struct FakeThread {
    pub id: String,
    pub pr: u64,
    pub path: String,
    pub line: u32,
    pub start_line: Option<u32>,
    pub resolved: bool,
    pub outdated: bool,
    pub comments: Vec<FakeComment>,
}

#[derive(Default)]
struct State {
    owner: String,
    name: String,
    token: String,
    pulls: HashMap<u64, Pull>,
    /// Conversation comments by pull request.
    comments: HashMap<u64, Vec<FakeComment>>,
    threads: Vec<FakeThread>,
    /// Each review created: its JSON body as sent.
    reviews: Vec<Value>,
    next_id: u64,
    page_size: usize,
    /// Path suffix, status, how many more requests to answer with it (429 with `retry-after:
    /// 1`, or a server error).
    failures: Vec<(String, u16, usize)>,
    /// The lines of the diff (path → inclusive ranges): inline comments elsewhere are a 422.
    diff_lines: HashMap<String, Vec<(u32, u32)>>,
    /// Whether the token may resolve threads.
    may_resolve: bool,
    log: Vec<Recorded>,
}

/// The running fake. Dropping it stops it.
pub struct FakeGitHub {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    /// Stops the server when the fake is dropped.
    _server: Server,
}

impl FakeGitHub {
    /// A fake of repository `owner/name` that accepts `token`.
    pub fn start(owner: &str, name: &str, token: &str) -> FakeGitHub {
        let state = Arc::new(Mutex::new(State {
            owner: owner.into(),
            name: name.into(),
            token: token.into(),
            next_id: 1000,
            page_size: 100,
            may_resolve: true,
            ..State::default()
        }));
        let thread_state = state.clone();
        let server = Server::start("fake GitHub", move |req, addr| {
            handle(thread_state.clone(), addr, req)
        });
        FakeGitHub {
            addr: server.addr,
            state,
            _server: server,
        }
    }

    /// The REST base, with a path as GitHub Enterprise has (`/api/v3`).
    pub fn api_url(&self) -> String {
        format!("http://{}/api/v3", self.addr)
    }

    pub fn graphql_url(&self) -> String {
        format!("http://{}/api/graphql", self.addr)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    pub fn add_pull(&self, pull: Pull) {
        self.lock().pulls.insert(pull.number, pull);
    }

    /// Moves the pull request's head (a push to its branch).
    pub fn set_head(&self, number: u64, head_sha: &str, commits: Vec<String>) {
        let mut st = self.lock();
        let pull = st.pulls.get_mut(&number).expect("the pull request exists");
        pull.head_sha = head_sha.into();
        pull.commits = commits;
    }

    /// A review thread someone opened.
    pub fn add_thread(
        &self,
        pr: u64,
        path: &str,
        line: u32,
        author: &str,
        body: &str,
        resolved: bool,
    ) {
        let mut st = self.lock();
        let id = st.next_id();
        let comment = FakeComment {
            id,
            author: author.into(),
            body: body.into(),
        };
        st.threads.push(FakeThread {
            id: format!("PRRT_{id}"),
            pr,
            path: path.into(),
            line,
            start_line: None,
            resolved,
            outdated: false,
            comments: vec![comment],
        });
    }

    /// A conversation comment someone wrote.
    pub fn add_comment(&self, pr: u64, author: &str, body: &str) {
        let mut st = self.lock();
        let id = st.next_id();
        st.comments.entry(pr).or_default().push(FakeComment {
            id,
            author: author.into(),
            body: body.into(),
        });
    }

    pub fn set_page_size(&self, size: usize) {
        self.lock().page_size = size.max(1);
    }

    /// The next `times` requests whose path (without the query) ends with `suffix` get 429
    /// with `retry-after: 1`.
    pub fn fail_429(&self, suffix: &str, times: usize) {
        self.lock().failures.push((suffix.into(), 429, times));
    }

    /// The next `times` requests whose path ends with `suffix` get `status` (a 5xx).
    pub fn fail_with(&self, suffix: &str, status: u16, times: usize) {
        self.lock().failures.push((suffix.into(), status, times));
    }

    pub fn set_diff_lines(&self, path: &str, ranges: &[(u32, u32)]) {
        self.lock().diff_lines.insert(path.into(), ranges.to_vec());
    }

    pub fn set_may_resolve(&self, may: bool) {
        self.lock().may_resolve = may;
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.lock().log.clone()
    }

    /// Requests that change something (not GET, not a GraphQL query).
    pub fn writes(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| {
                r.method != "GET"
                    && !r
                        .graphql()
                        .is_some_and(|q| q.trim_start().starts_with("query"))
            })
            .collect()
    }

    pub fn comments(&self, pr: u64) -> Vec<FakeComment> {
        self.lock().comments.get(&pr).cloned().unwrap_or_default()
    }

    pub fn threads(&self, pr: u64) -> Vec<FakeThread> {
        self.lock()
            .threads
            .iter()
            .filter(|t| t.pr == pr)
            .cloned()
            .collect()
    }

    pub fn reviews(&self) -> Vec<Value> {
        self.lock().reviews.clone()
    }

    /// Every request, one line each, for assertion messages.
    pub fn summary(&self) -> String {
        self.requests()
            .iter()
            .map(|r| format!("{} {} -> {}", r.method, r.path, r.status))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl State {
    fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

async fn handle(
    state: Arc<Mutex<State>>,
    addr: SocketAddr,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = req.method().clone();
    let path = req
        .uri()
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_default();
    let auth = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let agent = req
        .headers()
        .get("user-agent")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = match req.into_body().collect().await {
        Ok(c) => String::from_utf8_lossy(&c.to_bytes()).into_owned(),
        Err(_) => String::new(),
    };
    let mut st = lock(&state);
    let response = answer(&mut st, addr, &method, &path, &auth, &agent, &body);
    st.log.push(Recorded {
        method: method.to_string(),
        path,
        body,
        status: response.status().as_u16(),
    });
    Ok(response)
}

fn respond(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a response")
}

fn message(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    respond(
        status,
        &json!({ "message": text, "documentation_url": "https://docs.github.com/rest" }),
    )
}

fn answer(
    st: &mut State,
    addr: SocketAddr,
    method: &Method,
    path_and_query: &str,
    auth: &str,
    agent: &str,
    body: &str,
) -> Response<Full<Bytes>> {
    let bare_path = path_and_query.split('?').next().unwrap_or("");
    if let Some(entry) = st
        .failures
        .iter_mut()
        .find(|(suffix, _, left)| *left > 0 && bare_path.ends_with(suffix.as_str()))
    {
        entry.2 -= 1;
        let status = StatusCode::from_u16(entry.1).expect("a status");
        let mut builder = Response::builder()
            .status(status)
            .header("content-type", "application/json");
        if status == StatusCode::TOO_MANY_REQUESTS {
            builder = builder.header("retry-after", "1");
        }
        return builder
            .body(Full::new(Bytes::from(
                json!({ "message": if status == StatusCode::TOO_MANY_REQUESTS {
                    "You have exceeded a secondary rate limit."
                } else {
                    "Server Error"
                } })
                .to_string(),
            )))
            .expect("a response");
    }
    if agent.is_empty() {
        // GitHub refuses requests without a User-Agent.
        return message(
            StatusCode::FORBIDDEN,
            "Request forbidden by administrative rules.",
        );
    }
    if auth != format!("Bearer {}", st.token) {
        return message(StatusCode::UNAUTHORIZED, "Bad credentials");
    }
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    let page: usize = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("page="))
        .and_then(|p| p.parse().ok())
        .unwrap_or(1);
    if path == "/api/graphql" && method == Method::POST {
        return graphql(st, body);
    }
    let prefix = format!("/api/v3/repos/{}/{}/", st.owner, st.name);
    let Some(rest) = path.strip_prefix(&prefix) else {
        return message(StatusCode::NOT_FOUND, "Not Found");
    };
    let parts: Vec<&str> = rest.split('/').collect();
    let json_body: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let base_url = format!("http://{addr}{path}");
    match (method.clone(), parts.as_slice()) {
        (Method::GET, ["pulls", n]) => match pull(st, n) {
            Some(p) => respond(StatusCode::OK, &pull_json(st, addr, &p)),
            None => message(StatusCode::NOT_FOUND, "Not Found"),
        },
        (Method::GET, ["pulls", n, "commits"]) => match pull(st, n) {
            Some(p) => {
                let items: Vec<Value> = p.commits.iter().map(|sha| json!({ "sha": sha })).collect();
                paged(st, &items, page, &base_url)
            }
            None => message(StatusCode::NOT_FOUND, "Not Found"),
        },
        (Method::GET, ["issues", n, "comments"]) => {
            let n: u64 = n.parse().unwrap_or(0);
            let items: Vec<Value> = st
                .comments
                .get(&n)
                .cloned()
                .unwrap_or_default()
                .iter()
                .map(|c| comment_json(st, n, c))
                .collect();
            paged(st, &items, page, &base_url)
        }
        (Method::POST, ["issues", n, "comments"]) => {
            let n: u64 = n.parse().unwrap_or(0);
            let Some(text) = json_body["body"].as_str() else {
                return message(StatusCode::UNPROCESSABLE_ENTITY, "body is missing");
            };
            let id = st.next_id();
            let comment = FakeComment {
                id,
                author: BOT.into(),
                body: text.into(),
            };
            st.comments.entry(n).or_default().push(comment.clone());
            respond(StatusCode::CREATED, &comment_json(st, n, &comment))
        }
        (Method::PATCH, ["issues", "comments", id]) => {
            let id: u64 = id.parse().unwrap_or(0);
            let Some(text) = json_body["body"].as_str().map(str::to_string) else {
                return message(StatusCode::UNPROCESSABLE_ENTITY, "body is missing");
            };
            let found = st
                .comments
                .iter_mut()
                .find_map(|(n, list)| list.iter_mut().find(|c| c.id == id).map(|c| (*n, c)));
            match found {
                Some((_, c)) if c.author != BOT => message(
                    StatusCode::FORBIDDEN,
                    "Must have admin rights to Repository.",
                ),
                Some((n, c)) => {
                    c.body = text;
                    let c = c.clone();
                    respond(StatusCode::OK, &comment_json(st, n, &c))
                }
                None => message(StatusCode::NOT_FOUND, "Not Found"),
            }
        }
        (Method::POST, ["pulls", n, "reviews"]) => create_review(st, n, &json_body),
        (Method::POST, ["pulls", n, "comments", id, "replies"]) => {
            let n: u64 = n.parse().unwrap_or(0);
            let id: u64 = id.parse().unwrap_or(0);
            let Some(text) = json_body["body"].as_str().map(str::to_string) else {
                return message(StatusCode::UNPROCESSABLE_ENTITY, "body is missing");
            };
            let new_id = st.next_id();
            match st
                .threads
                .iter_mut()
                .find(|t| t.pr == n && t.comments.first().is_some_and(|c| c.id == id))
            {
                Some(thread) => {
                    thread.comments.push(FakeComment {
                        id: new_id,
                        author: BOT.into(),
                        body: text.clone(),
                    });
                    respond(StatusCode::CREATED, &json!({ "id": new_id, "body": text }))
                }
                None => message(StatusCode::NOT_FOUND, "Not Found"),
            }
        }
        _ => message(StatusCode::NOT_FOUND, "Not Found"),
    }
}

fn pull(st: &State, n: &str) -> Option<Pull> {
    st.pulls.get(&n.parse().ok()?).cloned()
}

fn pull_json(st: &State, addr: SocketAddr, p: &Pull) -> Value {
    json!({
        "number": p.number,
        "state": "open",
        "title": p.title,
        "body": p.body,
        "user": { "login": p.author },
        "html_url": format!("https://github.com/{}/{}/pull/{}", st.owner, st.name, p.number),
        "base": { "ref": p.base_ref, "sha": p.base_sha,
                  "repo": { "full_name": format!("{}/{}", st.owner, st.name),
                            "clone_url": format!("http://{addr}/{}/{}.git", st.owner, st.name) } },
        "head": { "ref": p.head_ref, "sha": p.head_sha },
    })
}

fn comment_json(st: &State, pr: u64, c: &FakeComment) -> Value {
    json!({
        "id": c.id,
        "user": { "login": c.author },
        "body": c.body,
        "html_url": format!("https://github.com/{}/{}/pull/{pr}#issuecomment-{}", st.owner, st.name, c.id),
    })
}

/// One page of `items` with GitHub's `Link` header.
fn paged(st: &State, items: &[Value], page: usize, base_url: &str) -> Response<Full<Bytes>> {
    let size = st.page_size;
    let start = (page.max(1) - 1) * size;
    let slice: Vec<Value> = items.iter().skip(start).take(size).cloned().collect();
    let mut builder = Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json");
    if start + size < items.len() {
        builder = builder.header(
            "link",
            format!(
                "<{base_url}?per_page=100&page={}>; rel=\"next\", <{base_url}?per_page=100&page=1>; rel=\"first\"",
                page + 1
            ),
        );
    }
    builder
        .body(Full::new(Bytes::from(Value::Array(slice).to_string())))
        .expect("a response")
}

fn create_review(st: &mut State, n: &str, review: &Value) -> Response<Full<Bytes>> {
    let n: u64 = n.parse().unwrap_or(0);
    if !st.pulls.contains_key(&n) {
        return message(StatusCode::NOT_FOUND, "Not Found");
    }
    let event = review["event"].as_str().unwrap_or("");
    if event != "COMMENT" && event != "APPROVE" && event != "REQUEST_CHANGES" {
        return message(StatusCode::UNPROCESSABLE_ENTITY, "event is invalid");
    }
    if review["body"].as_str().is_none_or(str::is_empty) {
        return message(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Body is required for a COMMENT review",
        );
    }
    let comments = review["comments"].as_array().cloned().unwrap_or_default();
    // GitHub checks every comment's lines first: one bad line rejects the whole review.
    for c in &comments {
        let path = c["path"].as_str().unwrap_or("");
        let line = c["line"].as_u64().unwrap_or(0) as u32;
        let start = c["start_line"].as_u64().map(|s| s as u32).unwrap_or(line);
        let on_diff = st
            .diff_lines
            .get(path)
            .is_some_and(|ranges| ranges.iter().any(|(a, b)| *a <= start && line <= *b));
        if c["side"].as_str() != Some("RIGHT") || start > line || !on_diff {
            return respond(
                StatusCode::UNPROCESSABLE_ENTITY,
                &json!({ "message": "Unprocessable Entity",
                         "errors": ["Line could not be resolved"] }),
            );
        }
    }
    st.reviews.push(review.clone());
    for c in comments {
        let id = st.next_id();
        st.threads.push(FakeThread {
            id: format!("PRRT_{id}"),
            pr: n,
            path: c["path"].as_str().unwrap_or("").into(),
            line: c["line"].as_u64().unwrap_or(0) as u32,
            start_line: c["start_line"].as_u64().map(|s| s as u32),
            resolved: false,
            outdated: false,
            comments: vec![FakeComment {
                id,
                author: BOT.into(),
                body: c["body"].as_str().unwrap_or("").into(),
            }],
        });
    }
    let id = st.next_id();
    respond(StatusCode::OK, &json!({ "id": id, "state": "COMMENTED" }))
}

/// GraphQL login of a REST login: a bot loses its `[bot]`.
fn graphql_login(login: &str) -> &str {
    login.strip_suffix("[bot]").unwrap_or(login)
}

fn gql_comment(c: &FakeComment) -> Value {
    json!({
        "databaseId": c.id,
        "author": { "login": graphql_login(&c.author) },
        "body": c.body,
        "url": format!("https://github.com/o/r/pull/1#discussion_r{}", c.id),
    })
}

fn graphql(st: &mut State, body: &str) -> Response<Full<Bytes>> {
    let request: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let query = request["query"].as_str().unwrap_or("");
    let vars = &request["variables"];
    if query.contains("resolveReviewThread") {
        let id = vars["thread"].as_str().unwrap_or("");
        if !st.may_resolve {
            return respond(
                StatusCode::OK,
                &json!({ "data": { "resolveReviewThread": null },
                         "errors": [{ "type": "FORBIDDEN",
                                      "message": "Resource not accessible by integration" }] }),
            );
        }
        return match st.threads.iter_mut().find(|t| t.id == id) {
            Some(t) => {
                t.resolved = true;
                respond(
                    StatusCode::OK,
                    &json!({ "data": { "resolveReviewThread": { "thread": { "id": id, "isResolved": true } } } }),
                )
            }
            None => respond(
                StatusCode::OK,
                &json!({ "data": null, "errors": [{ "type": "NOT_FOUND", "message": "Could not resolve to a node" }] }),
            ),
        };
    }
    if query.contains("reviewThreads") {
        let owner_ok = vars["owner"].as_str() == Some(st.owner.as_str())
            && vars["name"].as_str() == Some(st.name.as_str());
        let n = vars["number"].as_u64().unwrap_or(0);
        if !owner_ok || !st.pulls.contains_key(&n) {
            return respond(
                StatusCode::OK,
                &json!({ "data": { "viewer": { "login": BOT }, "repository": null },
                         "errors": [{ "type": "NOT_FOUND", "message": "Could not resolve to a Repository" }] }),
            );
        }
        let start: usize = vars["after"]
            .as_str()
            .and_then(|c| c.strip_prefix("cursor-"))
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let all: Vec<&FakeThread> = st.threads.iter().filter(|t| t.pr == n).collect();
        let size = st.page_size;
        let nodes: Vec<Value> = all
            .iter()
            .skip(start)
            .take(size)
            .map(|t| {
                let recent: Vec<Value> = t
                    .comments
                    .iter()
                    .rev()
                    .take(20)
                    .rev()
                    .map(gql_comment)
                    .collect();
                json!({
                    "id": t.id,
                    "isResolved": t.resolved,
                    "isOutdated": t.outdated,
                    "path": t.path,
                    "line": if t.outdated { Value::Null } else { json!(t.line) },
                    "originalLine": t.line,
                    "first": { "totalCount": t.comments.len(),
                               "nodes": t.comments.first().map(gql_comment).into_iter().collect::<Vec<_>>() },
                    "recent": { "nodes": recent },
                })
            })
            .collect();
        let end = start + nodes.len();
        return respond(
            StatusCode::OK,
            &json!({ "data": {
                "viewer": { "login": BOT },
                "repository": { "pullRequest": { "reviewThreads": {
                    "pageInfo": { "hasNextPage": end < all.len(), "endCursor": format!("cursor-{end}") },
                    "nodes": nodes,
                } } },
            } }),
        );
    }
    respond(
        StatusCode::OK,
        &json!({ "data": null, "errors": [{ "message": "unknown query" }] }),
    )
}
