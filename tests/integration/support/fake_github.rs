//! A fake GitHub API on 127.0.0.1, REST and GraphQL, for the forge tests, that holds deep-review
//! to GitHub's own descriptions of its APIs.
//!
//! Every REST request is matched to its operation in GitHub's OpenAPI description and checked
//! there ([`super::github_rest`]); every GraphQL document is validated against GitHub's schema,
//! with GitHub's pagination and node limits, and run over the fake's data by apollo-compiler's
//! executor ([`super::github_graphql`]). What GitHub refuses gets GitHub's answer; what GitHub
//! accepts but its description marks deprecated, or not enabled for GitHub Apps (the token here
//! is an App installation token, `ghs_...`, as `GITHUB_TOKEN` is in Actions), is a conformance
//! violation: the fake records it, and dropping a fake that recorded one fails the test (a test
//! that sends wrong requests on purpose takes them with [`FakeGitHub::take_violations`]).
//!
//! Its ids are past 2^32 (GitHub's comment ids are past 2^31 today), so a 32-bit `databaseId`
//! fails as on GitHub: a field error and `null`. Its diff is git's, from its own repository
//! ([`FakeGitHub::set_git_dir`]): the files list has the patches and a review comment on a line
//! outside one hunk of them is a 422 that refuses the whole review, as on GitHub. Beyond that it
//! behaves as GitHub does where deep-review depends on it: lists are paginated with `Link`
//! headers, a comment may only be edited by its author, a bot's login is `name[bot]` in REST and
//! `viewer` but `name` as a GraphQL comment author, and it can be told to answer rate limits
//! (429 or a secondary rate limit's 403, with or without `retry-after`) and server errors.
//! Every request is recorded.
//!
//! Like the fake model server, it runs on its own thread with its own runtime; dropping it
//! stops it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use apollo_compiler::resolvers::{FieldError, ObjectValue, ResolveInfo, ResolvedValue};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use super::fake_github_diff::{DiffFile, pull_diff};
use super::github_graphql::{Data, GraphqlSpec, MAX_PAGE, Object, from_json};
use super::github_rest::RestSpec;
use super::http_server::Server;

/// The REST login the fake's token acts as (a GitHub App, as `GITHUB_TOKEN` in Actions is).
pub const BOT: &str = "deep-review-ci[bot]";
/// A GitHub App installation token, in GitHub's format.
pub const APP_TOKEN: &str = "ghs_16C7e42F292c6912E7710c838347Ae178B4a";
/// The first id the fake gives: past 2^32, as GitHub's comment ids are past 2^31.
pub const FIRST_ID: u64 = 4_300_000_000;

/// GitHub's two descriptions, loaded once per test process.
pub struct Descriptions {
    pub rest: RestSpec,
    pub graphql: GraphqlSpec,
}

/// Where `scripts/install-github-descriptions.sh` puts the packages by default.
fn descriptions_dir() -> PathBuf {
    match std::env::var_os("DEEP_REVIEW_GITHUB_DESCRIPTIONS") {
        Some(dir) => PathBuf::from(dir),
        None => dirs::home_dir()
            .unwrap_or_default()
            .join(".cache/deep-review/github-descriptions/node_modules"),
    }
}

/// GitHub's descriptions. A test that starts the fake is `#[ignore = "needs GitHub's API
/// descriptions ..."]`: asked to run without them, it fails with what to install.
pub fn descriptions() -> &'static Descriptions {
    static LOADED: OnceLock<Result<Descriptions, String>> = OnceLock::new();
    let loaded = LOADED.get_or_init(|| {
        let dir = descriptions_dir();
        Ok(Descriptions {
            rest: RestSpec::load(&dir.join("@octokit/openapi/generated/api.github.com.json"))?,
            graphql: GraphqlSpec::load(&dir.join("@octokit/graphql-schema/schema.graphql"))?,
        })
    });
    match loaded {
        Ok(d) => d,
        Err(e) => panic!(
            "GitHub's API descriptions are missing ({e}): install them with \
             scripts/install-github-descriptions.sh (npm @octokit/openapi, @octokit/graphql-schema) \
             or point DEEP_REVIEW_GITHUB_DESCRIPTIONS at its node_modules"
        ),
    }
}

/// One request as the fake saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Path and query, as sent.
    pub path: String,
    pub body: String,
    pub status: u16,
    /// The REST operation it matched (`pulls/create-review`), or `graphql`.
    pub operation: String,
    /// What the fake answered.
    pub answer: String,
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

/// A failure to answer instead of the real thing.
#[derive(Debug, Clone)]
struct Failure {
    suffix: String,
    status: u16,
    retry_after: Option<String>,
    kind: FailureKind,
    left: usize,
}

/// Which of GitHub's refusals a [`Failure`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FailureKind {
    /// The primary rate limit: `x-ratelimit-remaining: 0` and the reset time, no `retry-after`.
    Primary,
    /// A secondary rate limit: its message, `retry-after` when given.
    Secondary,
    /// The GraphQL API's primary limit: 200, `errors[].type` `RATE_LIMITED`, the limit headers.
    GraphqlRateLimited,
    /// A server error.
    Server,
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
    failures: Vec<Failure>,
    /// GitHub's side of git: the diff of a pull request comes from here.
    git_dir: Option<PathBuf>,
    /// Files whose diff GitHub does not render (too large): no patch, no comment.
    unrendered: Vec<String>,
    /// Whether the token may resolve threads.
    may_resolve: bool,
    /// The token may only read (a fork's pull request in Actions, `pull-requests: read`).
    read_only: bool,
    /// Every review with inline comments is refused (422), whatever its lines: GitHub's diff
    /// and its files list disagree, as they may for reasons deep-review cannot see.
    refuse_inline: bool,
    log: Vec<Recorded>,
    violations: Vec<String>,
}

/// The running fake. Dropping it stops it, and fails the test if it recorded a violation.
pub struct FakeGitHub {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    /// Stops the server when the fake is dropped.
    _server: Server,
}

impl FakeGitHub {
    /// A fake of repository `owner/name` that accepts [`APP_TOKEN`].
    pub fn start(owner: &str, name: &str) -> FakeGitHub {
        descriptions();
        let state = Arc::new(Mutex::new(State {
            owner: owner.into(),
            name: name.into(),
            token: APP_TOKEN.into(),
            next_id: FIRST_ID,
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

    /// The REST base, as GitHub.com's (`https://api.github.com`): operations at its root.
    pub fn api_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn graphql_url(&self) -> String {
        format!("http://{}/graphql", self.addr)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    pub fn add_pull(&self, pull: Pull) {
        self.lock().pulls.insert(pull.number, pull);
    }

    /// GitHub's side of git: the repository pull requests' diffs are made from.
    pub fn set_git_dir(&self, dir: &std::path::Path) {
        self.lock().git_dir = Some(dir.to_path_buf());
    }

    /// GitHub does not render the diff of `path` (too large): no patch, no inline comment.
    pub fn unrendered(&self, path: &str) {
        self.lock().unrendered.push(path.into());
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
        st.threads.push(FakeThread {
            id: format!("PRRT_kwDOFake{id}"),
            pr,
            path: path.into(),
            line,
            start_line: None,
            resolved,
            outdated: false,
            comments: vec![FakeComment {
                id,
                author: author.into(),
                body: body.into(),
            }],
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

    /// The next `times` requests whose path (without the query) ends with `suffix` meet the
    /// primary rate limit as GitHub answers it: 403, `x-ratelimit-remaining: 0` and
    /// `x-ratelimit-reset` a second ahead, no `retry-after`.
    pub fn fail_primary(&self, suffix: &str, times: usize) {
        self.fail(suffix, 403, None, FailureKind::Primary, times);
    }

    /// The next `times` GraphQL requests meet the GraphQL API's primary limit: GitHub answers
    /// 200 with an error of type `RATE_LIMITED` and the limit headers.
    pub fn fail_graphql_rate_limited(&self, times: usize) {
        self.fail(
            "/graphql",
            200,
            None,
            FailureKind::GraphqlRateLimited,
            times,
        );
    }

    /// The next `times` requests whose path ends with `suffix` get GitHub's secondary rate
    /// limit: `status` (403 or 429), its message, and `retry-after` when given.
    pub fn fail_secondary(
        &self,
        suffix: &str,
        status: u16,
        retry_after: Option<&str>,
        times: usize,
    ) {
        self.fail(suffix, status, retry_after, FailureKind::Secondary, times);
    }

    /// The next `times` requests whose path ends with `suffix` get `status` (a 5xx).
    pub fn fail_with(&self, suffix: &str, status: u16, times: usize) {
        self.fail(suffix, status, None, FailureKind::Server, times);
    }

    fn fail(
        &self,
        suffix: &str,
        status: u16,
        retry_after: Option<&str>,
        kind: FailureKind,
        left: usize,
    ) {
        self.lock().failures.push(Failure {
            suffix: suffix.into(),
            status,
            retry_after: retry_after.map(str::to_string),
            kind,
            left,
        });
    }

    /// The token may only read: every write answers 403 "Resource not accessible by
    /// integration", as GitHub answers an App token without the permission.
    pub fn set_read_only(&self) {
        self.lock().read_only = true;
    }

    /// Refuses every review that has inline comments with GitHub's 422.
    pub fn refuse_inline_comments(&self) {
        self.lock().refuse_inline = true;
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

    /// The conformance violations recorded so far, taken: a test that sends wrong requests on
    /// purpose checks them here, and the fake's drop does not fail for them.
    pub fn take_violations(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().violations)
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
            .map(|r| {
                format!(
                    "{} {} ({}) -> {} {}",
                    r.method, r.path, r.operation, r.status, r.answer
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        let violations = std::mem::take(&mut self.lock().violations);
        if !violations.is_empty() && !std::thread::panicking() {
            panic!(
                "the fake GitHub saw requests that GitHub's descriptions refuse or warn against:\n- {}",
                violations.join("\n- ")
            );
        }
    }
}

impl State {
    fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn diff(&self, pull: &Pull, head: &str) -> Vec<DiffFile> {
        match &self.git_dir {
            Some(dir) => pull_diff(dir, &pull.base_sha, head, &self.unrendered),
            None => Vec::new(),
        }
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

type Reply = Response<Full<Bytes>>;

async fn handle(
    state: Arc<Mutex<State>>,
    addr: SocketAddr,
    req: Request<Incoming>,
) -> Result<Reply, Infallible> {
    let method = req.method().clone();
    let path = req
        .uri()
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_default();
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    let auth = header("authorization");
    let agent = header("user-agent");
    let version = header("x-github-api-version");
    let body = match req.into_body().collect().await {
        Ok(c) => String::from_utf8_lossy(&c.to_bytes()).into_owned(),
        Err(_) => String::new(),
    };
    let mut st = lock(&state);
    let mut operation = String::new();
    let response = answer(
        &mut st,
        addr,
        &method,
        &path,
        &auth,
        &agent,
        &version,
        &body,
        &mut operation,
    );
    let (response, answer_text) = response;
    st.log.push(Recorded {
        method: method.to_string(),
        path,
        body,
        status: response.status().as_u16(),
        operation,
        answer: answer_text.chars().take(600).collect(),
    });
    Ok(response)
}

fn respond(status: u16, body: &Value) -> (Reply, String) {
    let text = body.to_string();
    (
        Response::builder()
            .status(StatusCode::from_u16(status).expect("a status"))
            .header("content-type", "application/json; charset=utf-8")
            .body(Full::new(Bytes::from(text.clone())))
            .expect("a response"),
        text,
    )
}

fn message(status: u16, text: &str) -> (Reply, String) {
    respond(
        status,
        &json!({ "message": text, "documentation_url": "https://docs.github.com/rest", "status": status.to_string() }),
    )
}

/// The request names a repository other than the fake's.
fn another_repository(st: &State, p: &HashMap<String, String>) -> bool {
    p.get("owner")
        .is_some_and(|o| !o.eq_ignore_ascii_case(&st.owner))
        || p.get("repo")
            .is_some_and(|r| !r.eq_ignore_ascii_case(&st.name))
}

/// The `page` a list request asks for (1 when none).
fn page_of(query: &[(String, String)]) -> usize {
    query
        .iter()
        .find(|(k, _)| k == "page")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(1)
}

/// What GitHub refuses before it looks at the operation: no User-Agent, an API version it does
/// not have, a token that is not the fake's.
fn refused_request(st: &State, agent: &str, version: &str, auth: &str) -> Option<(Reply, String)> {
    if agent.is_empty() {
        // GitHub refuses requests without a User-Agent.
        return Some(message(
            403,
            "Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). Check https://developer.github.com for other possible causes.",
        ));
    }
    if !version.is_empty() && version != "2022-11-28" && version != "2026-03-10" {
        return Some(message(
            400,
            &format!("API version '{version}' is not supported."),
        ));
    }
    if auth != format!("Bearer {}", st.token) && auth != format!("token {}", st.token) {
        return Some(message(401, "Bad credentials"));
    }
    None
}

/// The pull request's conversation comments: listed, made (within GitHub's length), edited
/// (by their author only). `ids` is the issue's number and the comment's id.
fn comment_operation(
    st: &mut State,
    operation: &str,
    (issue, comment): (u64, u64),
    body: &Value,
    page: usize,
    base_url: &str,
) -> (Reply, String) {
    match operation {
        "issues/list-comments" => {
            let n = issue;
            let items: Vec<Value> = st
                .comments
                .get(&n)
                .cloned()
                .unwrap_or_default()
                .iter()
                .map(|c| comment_json(st, n, c))
                .collect();
            paged(st, &items, page, base_url)
        }
        "issues/create-comment" => {
            let n = issue;
            if !st.pulls.contains_key(&n) {
                return message(404, "Not Found");
            }
            if let Some(refused) = body_too_long(body) {
                return refused;
            }
            let id = st.next_id();
            let comment = FakeComment {
                id,
                author: BOT.into(),
                body: body["body"].as_str().unwrap_or("").into(),
            };
            st.comments.entry(n).or_default().push(comment.clone());
            respond(201, &comment_json(st, n, &comment))
        }
        "issues/update-comment" => {
            if let Some(refused) = body_too_long(body) {
                return refused;
            }
            let id = comment;
            let text = body["body"].as_str().unwrap_or("").to_string();
            let found = st
                .comments
                .iter_mut()
                .find_map(|(n, list)| list.iter_mut().find(|c| c.id == id).map(|c| (*n, c)));
            match found {
                Some((_, c)) if c.author != BOT => {
                    message(403, "Resource not accessible by integration")
                }
                Some((n, c)) => {
                    c.body = text;
                    let c = c.clone();
                    respond(200, &comment_json(st, n, &c))
                }
                None => message(404, "Not Found"),
            }
        }
        _ => message(404, "Not Found"),
    }
}

#[allow(clippy::too_many_arguments)]
fn answer(
    st: &mut State,
    addr: SocketAddr,
    method: &Method,
    path_and_query: &str,
    auth: &str,
    agent: &str,
    version: &str,
    body: &str,
    operation: &mut String,
) -> (Reply, String) {
    let bare_path = path_and_query.split('?').next().unwrap_or("");
    if let Some(failure) = st
        .failures
        .iter_mut()
        .find(|f| f.left > 0 && bare_path.ends_with(f.suffix.as_str()))
    {
        failure.left -= 1;
        return failed(failure);
    }
    if let Some(refused) = refused_request(st, agent, version, auth) {
        return refused;
    }
    if bare_path == "/graphql" && *method == Method::POST {
        *operation = "graphql".into();
        return graphql(st, body);
    }
    let app = st.token.starts_with("ghs_");
    let spec = &descriptions().rest;
    let matched = match spec.check(method.as_str(), path_and_query, body, app) {
        Ok(m) => m,
        Err(refusal) => {
            st.violations.push(refusal.violation);
            return respond(refusal.status, &refusal.body);
        }
    };
    *operation = matched.operation.id.clone();
    st.violations.extend(matched.violations.iter().cloned());
    if st.read_only && *method != Method::GET {
        return message(403, "Resource not accessible by integration");
    }
    let p = &matched.path_params;
    if another_repository(st, p) {
        return message(404, "Not Found");
    }
    let number = |key: &str| p.get(key).and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
    let page = page_of(&matched.query);
    let base_url = format!("http://{addr}{bare_path}");
    let body = &matched.body;
    match matched.operation.id.as_str() {
        "pulls/get" => match st.pulls.get(&number("pull_number")) {
            Some(pull) => respond(200, &pull_json(st, addr, pull)),
            None => message(404, "Not Found"),
        },
        "pulls/list-commits" => match st.pulls.get(&number("pull_number")) {
            Some(pull) => {
                let items: Vec<Value> = pull.commits.iter().map(|sha| commit_json(sha)).collect();
                paged(st, &items, page, &base_url)
            }
            None => message(404, "Not Found"),
        },
        "pulls/list-files" => match st.pulls.get(&number("pull_number")).cloned() {
            Some(pull) => {
                let repo_url = format!("https://github.com/{}/{}", st.owner, st.name);
                let items: Vec<Value> = st
                    .diff(&pull, &pull.head_sha)
                    .iter()
                    .map(|f| f.json(&repo_url, &pull.head_sha))
                    .collect();
                paged(st, &items, page, &base_url)
            }
            None => message(404, "Not Found"),
        },
        "issues/list-comments" | "issues/create-comment" | "issues/update-comment" => {
            let op = matched.operation.id.as_str();
            comment_operation(
                st,
                op,
                (number("issue_number"), number("comment_id")),
                body,
                page,
                &base_url,
            )
        }
        "pulls/create-review" => create_review(st, number("pull_number"), body),
        "pulls/create-review-comment" => create_review_comment(st, number("pull_number"), body),
        "pulls/create-reply-for-review-comment" => {
            reply_to(st, number("pull_number"), number("comment_id"), body)
        }
        other => {
            st.violations.push(format!(
                "{other}: the fake GitHub does not serve this operation"
            ));
            message(404, "Not Found")
        }
    }
}

/// The failure's answer, in GitHub's words and headers.
fn failed(f: &Failure) -> (Reply, String) {
    let text = match f.kind {
        FailureKind::Secondary => {
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0000:1111:2222:3333:4444."
        }
        FailureKind::Primary | FailureKind::GraphqlRateLimited => {
            "API rate limit exceeded for installation ID 4242."
        }
        FailureKind::Server => "Server Error",
    };
    let body = match f.kind {
        FailureKind::GraphqlRateLimited => {
            json!({ "data": null, "errors": [{ "type": "RATE_LIMITED", "message": text }] })
        }
        _ => {
            json!({ "message": text, "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api", "status": f.status.to_string() })
        }
    };
    let mut builder = Response::builder()
        .status(StatusCode::from_u16(f.status).expect("a status"))
        .header("content-type", "application/json; charset=utf-8");
    if let Some(after) = &f.retry_after {
        builder = builder.header("retry-after", after.as_str());
    }
    if matches!(
        f.kind,
        FailureKind::Primary | FailureKind::GraphqlRateLimited
    ) {
        let reset = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_secs()
            + 1;
        builder = builder
            .header("x-ratelimit-remaining", "0")
            .header("x-ratelimit-limit", "5000")
            .header("x-ratelimit-used", "5000")
            .header("x-ratelimit-reset", reset.to_string())
            .header(
                "x-ratelimit-resource",
                if f.kind == FailureKind::Primary {
                    "core"
                } else {
                    "graphql"
                },
            );
    }
    (
        builder
            .body(Full::new(Bytes::from(body.to_string())))
            .expect("a response"),
        body.to_string(),
    )
}

fn pull_json(st: &State, addr: SocketAddr, p: &Pull) -> Value {
    json!({
        "id": FIRST_ID - 1,
        "node_id": format!("PR_kwDOFake{}", p.number),
        "number": p.number,
        "state": "open",
        "title": p.title,
        "body": p.body,
        "user": { "login": p.author, "id": 583231, "type": "User" },
        "html_url": format!("https://github.com/{}/{}/pull/{}", st.owner, st.name, p.number),
        "base": { "ref": p.base_ref, "sha": p.base_sha, "label": format!("{}:{}", st.owner, p.base_ref),
                  "repo": { "full_name": format!("{}/{}", st.owner, st.name),
                            "clone_url": format!("http://{addr}/{}/{}.git", st.owner, st.name) } },
        "head": { "ref": p.head_ref, "sha": p.head_sha, "label": format!("{}:{}", st.owner, p.head_ref) },
    })
}

fn commit_json(sha: &str) -> Value {
    json!({ "sha": sha, "node_id": format!("C_{sha}"), "commit": { "message": "" } })
}

fn comment_json(st: &State, pr: u64, c: &FakeComment) -> Value {
    json!({
        "id": c.id,
        "node_id": format!("IC_kwDOFake{}", c.id),
        "user": { "login": c.author, "type": if c.author.ends_with("[bot]") { "Bot" } else { "User" } },
        "body": c.body,
        "html_url": format!("https://github.com/{}/{}/pull/{pr}#issuecomment-{}", st.owner, st.name, c.id),
    })
}

fn review_comment_json(st: &State, pr: u64, t: &FakeThread, c: &FakeComment) -> Value {
    json!({
        "id": c.id,
        "node_id": format!("PRRC_kwDOFake{}", c.id),
        "pull_request_review_id": FIRST_ID - 2,
        "path": t.path,
        "line": t.line,
        "side": "RIGHT",
        "user": { "login": c.author },
        "body": c.body,
        "html_url": format!("https://github.com/{}/{}/pull/{pr}#discussion_r{}", st.owner, st.name, c.id),
    })
}

/// One page of `items` with GitHub's `Link` header.
fn paged(st: &State, items: &[Value], page: usize, base_url: &str) -> (Reply, String) {
    let size = st.page_size;
    let start = (page.max(1) - 1) * size;
    let slice: Vec<Value> = items.iter().skip(start).take(size).cloned().collect();
    let mut builder = Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json; charset=utf-8");
    if start + size < items.len() {
        builder = builder.header(
            "link",
            format!(
                "<{base_url}?per_page=100&page={}>; rel=\"next\", <{base_url}?per_page=100&page=1>; rel=\"first\"",
                page + 1
            ),
        );
    }
    let text = Value::Array(slice).to_string();
    (
        builder
            .body(Full::new(Bytes::from(text.clone())))
            .expect("a response"),
        text,
    )
}

/// The most characters GitHub takes in a comment's body.
pub const MAX_BODY_CHARS: usize = 65_536;

/// GitHub's 422 for a comment body over [`MAX_BODY_CHARS`] characters. GitHub's REST docs
/// give the body no length, but the service validates it and answers this exact 422, as the
/// clients that met it quote it (telia-oss/github-pr-resource#259, docker/scout-action#66,
/// jmikedupont2/ai-ticket#51: `{"resource": "IssueComment", "code": "unprocessable", "field":
/// "data", "message": "Body is too long (maximum is 65536 characters)"}`).
fn body_too_long(body: &Value) -> Option<(Reply, String)> {
    let chars = body["body"].as_str()?.chars().count();
    (chars > MAX_BODY_CHARS).then(|| {
        respond(
            422,
            &json!({ "message": "Validation Failed",
                     "errors": [{ "resource": "IssueComment", "code": "unprocessable", "field": "data",
                                  "message": "Body is too long (maximum is 65536 characters)" }],
                     "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
                     "status": "422" }),
        )
    })
}

/// GitHub's 422 for an inline comment on a line it does not show.
fn unresolvable_line() -> (Reply, String) {
    respond(
        422,
        &json!({ "message": "Unprocessable Entity",
                 "errors": ["Line could not be resolved"],
                 "documentation_url": "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request",
                 "status": "422" }),
    )
}

/// Whether a comment at `path` lines `start..=line` (new side) lies in one hunk of the pull
/// request's diff at `commit`.
fn on_diff(st: &State, pull: &Pull, commit: &str, c: &Value) -> bool {
    let path = c["path"].as_str().unwrap_or("");
    let line = c["line"].as_u64().unwrap_or(0) as u32;
    let start = c["start_line"].as_u64().map(|s| s as u32).unwrap_or(line);
    let right = c["side"].as_str().unwrap_or("RIGHT") == "RIGHT"
        && c["start_side"].as_str().unwrap_or("RIGHT") == "RIGHT";
    right
        && start <= line
        && st
            .diff(pull, commit)
            .iter()
            .any(|f| f.path == path && f.takes_comment(start, line))
}

fn create_review(st: &mut State, n: u64, review: &Value) -> (Reply, String) {
    let Some(pull) = st.pulls.get(&n).cloned() else {
        return message(404, "Not Found");
    };
    let event = review["event"].as_str().unwrap_or("");
    if event.is_empty() {
        st.violations.push(
            "pulls/create-review without `event`: the review stays PENDING, seen by no one".into(),
        );
    }
    if (event == "COMMENT" || event == "REQUEST_CHANGES")
        && review["body"].as_str().is_none_or(str::is_empty)
    {
        return respond(
            422,
            &json!({ "message": "Unprocessable Entity", "errors": ["Body needed for comment event"], "status": "422" }),
        );
    }
    let commit = review["commit_id"]
        .as_str()
        .unwrap_or(&pull.head_sha)
        .to_string();
    if commit != pull.head_sha && !pull.commits.contains(&commit) {
        return respond(
            422,
            &json!({ "message": "Unprocessable Entity", "errors": ["commit_sha is not part of the pull request"], "status": "422" }),
        );
    }
    let comments = review["comments"].as_array().cloned().unwrap_or_default();
    // GitHub checks every comment's lines first: one bad line refuses the whole review.
    if (st.refuse_inline && !comments.is_empty())
        || comments.iter().any(|c| !on_diff(st, &pull, &commit, c))
    {
        return unresolvable_line();
    }
    st.reviews.push(review.clone());
    for c in comments {
        let id = st.next_id();
        st.threads.push(FakeThread {
            id: format!("PRRT_kwDOFake{id}"),
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
    respond(
        200,
        &json!({ "id": id, "node_id": format!("PRR_kwDOFake{id}"), "state": if event.is_empty() { "PENDING" } else { "COMMENTED" },
                 "body": review["body"], "commit_id": commit, "user": { "login": BOT } }),
    )
}

/// `POST /pulls/{n}/comments`: a reply (`in_reply_to`) or a new single-comment thread.
fn create_review_comment(st: &mut State, n: u64, body: &Value) -> (Reply, String) {
    let Some(pull) = st.pulls.get(&n).cloned() else {
        return message(404, "Not Found");
    };
    if let Some(to) = body["in_reply_to"].as_u64() {
        return reply_to(st, n, to, body);
    }
    let commit = body["commit_id"].as_str().unwrap_or("").to_string();
    if !on_diff(st, &pull, &commit, body) {
        return unresolvable_line();
    }
    let id = st.next_id();
    let thread = FakeThread {
        id: format!("PRRT_kwDOFake{id}"),
        pr: n,
        path: body["path"].as_str().unwrap_or("").into(),
        line: body["line"].as_u64().unwrap_or(0) as u32,
        start_line: body["start_line"].as_u64().map(|s| s as u32),
        resolved: false,
        outdated: false,
        comments: vec![FakeComment {
            id,
            author: BOT.into(),
            body: body["body"].as_str().unwrap_or("").into(),
        }],
    };
    let json = review_comment_json(st, n, &thread, &thread.comments[0]);
    st.threads.push(thread);
    respond(201, &json)
}

fn reply_to(st: &mut State, n: u64, to: u64, body: &Value) -> (Reply, String) {
    let new_id = st.next_id();
    let text = body["body"].as_str().unwrap_or("").to_string();
    let Some(index) = st
        .threads
        .iter()
        .position(|t| t.pr == n && t.comments.iter().any(|c| c.id == to))
    else {
        return message(404, "Not Found");
    };
    let comment = FakeComment {
        id: new_id,
        author: BOT.into(),
        body: text,
    };
    st.threads[index].comments.push(comment.clone());
    let json = review_comment_json(st, n, &st.threads[index], &comment);
    respond(201, &json)
}

/// GraphQL login of a REST login: a bot loses its `[bot]`.
fn graphql_login(login: &str) -> &str {
    login.strip_suffix("[bot]").unwrap_or(login)
}

fn comment_object(st: &State, c: &FakeComment) -> Object {
    let author = if c.author.ends_with("[bot]") {
        "Bot"
    } else {
        "User"
    };
    Object::new("PullRequestReviewComment")
        .with("id", json!(format!("PRRC_kwDOFake{}", c.id)))
        .with("databaseId", json!(c.id))
        .with("fullDatabaseId", json!(c.id.to_string()))
        .with_data(
            "author",
            Data::Object(Object::new(author).with("login", json!(graphql_login(&c.author)))),
        )
        .with("body", json!(c.body))
        .with(
            "url",
            json!(format!(
                "https://github.com/{}/{}/pull/1#discussion_r{}",
                st.owner, st.name, c.id
            )),
        )
}

fn thread_object(st: &State, t: &FakeThread) -> Object {
    Object::new("PullRequestReviewThread")
        .with("id", json!(t.id))
        .with("isResolved", json!(t.resolved))
        .with("isOutdated", json!(t.outdated))
        .with("path", json!(t.path))
        .with(
            "line",
            if t.outdated {
                Value::Null
            } else {
                json!(t.line)
            },
        )
        .with("originalLine", json!(t.line))
        .with("startLine", json!(t.start_line))
        .with("originalStartLine", json!(t.start_line))
        .with("diffSide", json!("RIGHT"))
        .with_data(
            "comments",
            Data::Connection(
                t.comments.iter().map(|c| comment_object(st, c)).collect(),
                MAX_PAGE as usize,
            ),
        )
}

/// The `Query` root over the fake's state.
fn query_root(st: &State) -> Object {
    let pulls: Vec<(Value, Data)> = st
        .pulls
        .values()
        .map(|p| {
            let threads: Vec<Object> = st
                .threads
                .iter()
                .filter(|t| t.pr == p.number)
                .map(|t| thread_object(st, t))
                .collect();
            (
                json!({ "number": p.number }),
                Data::Object(
                    Object::new("PullRequest")
                        .with("id", json!(format!("PR_kwDOFake{}", p.number)))
                        .with("number", json!(p.number))
                        .with("title", json!(p.title))
                        .with("headRefOid", json!(p.head_sha))
                        .with_data("reviewThreads", Data::Connection(threads, st.page_size)),
                ),
            )
        })
        .collect();
    let repository = Object::new("Repository")
        .with("nameWithOwner", json!(format!("{}/{}", st.owner, st.name)))
        .with_data(
            "pullRequest",
            Data::ByArguments(
                pulls,
                "NOT_FOUND: Could not resolve to a PullRequest with the number of that value."
                    .into(),
            ),
        );
    Object::new("Query")
        .with_data(
            "viewer",
            Data::Object(Object::new("User").with("login", json!(BOT))),
        )
        .with_data(
            "repository",
            Data::ByArguments(
                vec![(
                    json!({ "owner": st.owner, "name": st.name }),
                    Data::Object(repository),
                )],
                format!(
                    "NOT_FOUND: Could not resolve to a Repository with the name '{}/{}'.",
                    st.owner, st.name
                ),
            ),
        )
}

/// The `Mutation` root: the mutations deep-review uses, on the fake's state.
struct MutationRoot<'s> {
    state: RefCell<&'s mut State>,
}

impl ObjectValue for MutationRoot<'_> {
    fn type_name(&self) -> &str {
        "Mutation"
    }

    fn resolve_field<'a>(
        &'a self,
        info: &'a ResolveInfo<'a>,
    ) -> Result<ResolvedValue<'a>, FieldError> {
        let input = info
            .arguments()
            .get("input")
            .map(from_json)
            .unwrap_or(Value::Null);
        let mut st = self.state.borrow_mut();
        if st.read_only {
            return Err(FieldError {
                message: "FORBIDDEN: Resource not accessible by integration".into(),
            });
        }
        let payload = match info.field_name() {
            "resolveReviewThread" | "unresolveReviewThread" => {
                if !st.may_resolve {
                    return Err(FieldError {
                        message: "FORBIDDEN: Resource not accessible by integration".into(),
                    });
                }
                let id = input["threadId"].as_str().unwrap_or("");
                let resolve = info.field_name() == "resolveReviewThread";
                let Some(t) = st.threads.iter_mut().find(|t| t.id == id) else {
                    return Err(not_a_node(id));
                };
                t.resolved = resolve;
                let t = t.clone();
                Object::new("ResolveReviewThreadPayload")
                    .with_data("thread", Data::Object(thread_object(&st, &t)))
            }
            "addPullRequestReviewThreadReply" => {
                let id = input["pullRequestReviewThreadId"].as_str().unwrap_or("");
                let body = input["body"].as_str().unwrap_or("").to_string();
                let new_id = st.next_id();
                let Some(t) = st.threads.iter_mut().find(|t| t.id == id) else {
                    return Err(not_a_node(id));
                };
                let comment = FakeComment {
                    id: new_id,
                    author: BOT.into(),
                    body,
                };
                t.comments.push(comment.clone());
                Object::new("AddPullRequestReviewThreadReplyPayload")
                    .with_data("comment", Data::Object(comment_object(&st, &comment)))
            }
            other => {
                let message = format!("the fake GitHub does not serve mutation `{other}`");
                st.violations.push(message.clone());
                return Err(FieldError { message });
            }
        };
        Ok(ResolvedValue::Object(Box::new(payload)))
    }
}

fn not_a_node(id: &str) -> FieldError {
    FieldError {
        message: format!("NOT_FOUND: Could not resolve to a node with the global id of '{id}'"),
    }
}

fn graphql(st: &mut State, body: &str) -> (Reply, String) {
    let request: Value = match serde_json::from_str(body) {
        Ok(v) => v,
        Err(_) => return message(400, "Problems parsing JSON"),
    };
    let query = request["query"].as_str().unwrap_or("");
    let spec = &descriptions().graphql;
    let checked = match spec.check(query, &request["variables"]) {
        Ok(c) => c,
        Err(refused) => {
            st.violations.push(refused.violation);
            return respond(200, &json!({ "errors": refused.errors }));
        }
    };
    st.violations.extend(checked.violations.iter().cloned());
    let answer = if checked.kind == "mutation" {
        let root = MutationRoot {
            state: RefCell::new(st),
        };
        spec.execute(&checked, &root)
    } else {
        spec.execute(&checked, &query_root(st))
    };
    respond(200, &answer)
}
