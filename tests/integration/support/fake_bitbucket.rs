//! A fake Bitbucket Cloud API 2.0 on 127.0.0.1, for the Bitbucket pull request tests.
//!
//! It serves what deep-review uses, in the shapes Bitbucket documents: a pull request (its
//! commits named by 12 characters, as Bitbucket's pull request objects do), its commits (newest
//! first), its diff and diffstat (each a redirect to the repository's diff of the two commits,
//! as Bitbucket answers), its comments (one list, replies naming their parent, inline comments
//! with `inline: {path, to|from}`), comment resolution, a commit looked up by a short hash, the
//! token's user, and Code Insights reports and annotations. It refuses what Bitbucket refuses,
//! where deep-review depends on it:
//!
//! - only the routes npm's `bitbucket` package lists, with their methods
//!   (`support::bitbucket_description`); every body checked against bitbucket.d.ts's types
//!   (an enum value it does not list, a field of the wrong type, a missing `inline.path`);
//! - credentials: `Authorization: Bearer <access token>` or `Basic` with the user's API token;
//!   anything else is a 401; a token's scopes decide what it may do, and a missing scope is
//!   Bitbucket's 403 naming the scope required;
//! - an inline comment on a file or line Bitbucket's diff does not show is a 400; a comment is
//!   edited only by its author;
//! - Code Insights: reports only on a full commit hash, at most 100 annotations a request and
//!   1000 a report, a summary of at most 450 characters and details of at most 2000 (the
//!   report service's own 400s);
//! - lists are pages of the fake's size with a `next` address; it can be told to answer 429
//!   (with `Retry-After`) or a server error a number of times.
//!
//! It renders what is posted as Bitbucket does (Markdown with raw HTML escaped, into
//! `content.html`), so tests can see what a reader sees. Comment ids are past 2^31, users have
//! UUIDs in braces; every request is recorded.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use serde_json::{Value, json};

use super::bitbucket_description::Description;
use super::http_server::Server;

/// The token's user (a repository access token's bot) and its uuid.
pub const BOT: &str = "deep-review-bot";
pub const BOT_UUID: &str = "{6f1c2a3b-4d5e-4f60-8a71-92b3c4d5e6f7}";
/// Comment ids past 2^31.
const FIRST_COMMENT_ID: u64 = 3_000_000_001;
/// What a full-scope token may do.
pub const WRITE_SCOPES: &[&str] = &[
    "account",
    "pullrequest",
    "pullrequest:write",
    "repository",
    "repository:write",
];
pub const READ_SCOPES: &[&str] = &["account", "pullrequest", "repository"];

/// One request as the fake saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Path and query, as sent.
    pub path: String,
    pub body: String,
    pub status: u16,
    /// `Bearer`, `Basic` or none.
    pub auth: Option<String>,
}

/// The pull request the fake serves.
#[derive(Debug, Clone)]
pub struct PullRequest {
    pub id: u64,
    pub title: String,
    pub description: String,
    pub author: String,
    pub source_branch: String,
    pub destination_branch: String,
    /// Full hashes; the fake names them by 12 characters in the pull request.
    pub head: String,
    pub base: String,
    /// Oldest first (Bitbucket lists them newest first).
    pub commits: Vec<String>,
    /// The diff of base...head, as git writes it.
    pub diff: String,
}

/// A comment as the fake keeps it.
#[derive(Debug, Clone)]
pub struct FakeComment {
    pub id: u64,
    pub author: String,
    pub author_uuid: String,
    pub raw: String,
    /// `content.html`, as Bitbucket renders the raw text.
    pub html: String,
    pub inline: Option<Value>,
    pub parent: Option<u64>,
    pub resolved: bool,
}

/// What a request is refused with, the next `times` times.
#[derive(Debug, Clone)]
struct Failure {
    method: Option<String>,
    suffix: String,
    status: u16,
    times: usize,
}

struct Token {
    scopes: Vec<String>,
}

#[derive(Default)]
struct State {
    workspace: String,
    repo_slug: String,
    tokens: HashMap<String, Token>,
    pr: Option<PullRequest>,
    comments: Vec<FakeComment>,
    next_id: u64,
    page_size: usize,
    failures: Vec<Failure>,
    refuse_inline_on: Vec<String>,
    /// Where `next` and redirects point: the fake itself unless told otherwise.
    elsewhere: Option<String>,
    reports: HashMap<(String, String), Value>,
    annotations: HashMap<(String, String), Vec<Value>>,
    log: Vec<Recorded>,
}

/// The running fake. Dropping it stops it.
pub struct FakeBitbucket {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    _server: Server,
}

impl FakeBitbucket {
    /// A fake of repository `workspace/repo_slug` that takes `token` with every scope.
    pub fn start(workspace: &str, repo_slug: &str, token: &str) -> FakeBitbucket {
        let description = Arc::new(Description::load());
        let state = Arc::new(Mutex::new(State {
            workspace: workspace.into(),
            repo_slug: repo_slug.into(),
            next_id: FIRST_COMMENT_ID,
            page_size: 50,
            ..State::default()
        }));
        let thread_state = state.clone();
        let server = Server::start("fake Bitbucket", move |req, addr| {
            handle(thread_state.clone(), description.clone(), addr, req)
        });
        let fake = FakeBitbucket {
            addr: server.addr,
            state,
            _server: server,
        };
        fake.add_token(token, WRITE_SCOPES);
        fake
    }

    /// `BITBUCKET_API_URL`.
    pub fn api_url(&self) -> String {
        format!("http://{}/2.0", self.addr)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// A token (or `user:secret` for Basic) with `scopes`.
    pub fn add_token(&self, token: &str, scopes: &[&str]) {
        let scopes = scopes.iter().map(|s| s.to_string()).collect();
        self.lock().tokens.insert(token.into(), Token { scopes });
    }

    pub fn set_pull_request(&self, pr: PullRequest) {
        self.lock().pr = Some(pr);
    }

    pub fn update_pull_request(&self, update: impl FnOnce(&mut PullRequest)) {
        if let Some(pr) = self.lock().pr.as_mut() {
            update(pr);
        }
    }

    /// A comment someone left: inline (`Some((path, line))`) or on the conversation.
    pub fn add_comment(
        &self,
        author: &str,
        raw: &str,
        at: Option<(&str, u32)>,
        resolved: bool,
    ) -> u64 {
        let mut st = self.lock();
        let id = st.next_comment_id();
        st.comments.push(FakeComment {
            id,
            author: author.into(),
            author_uuid: uuid_of(author),
            raw: raw.into(),
            html: render(raw),
            inline: at.map(|(path, to)| json!({ "path": path, "to": to, "from": null })),
            parent: None,
            resolved,
        });
        id
    }

    pub fn set_page_size(&self, size: usize) {
        self.lock().page_size = size.max(1);
    }

    pub fn fail_with(&self, method: Option<&str>, suffix: &str, status: u16, times: usize) {
        self.lock().failures.push(Failure {
            method: method.map(str::to_string),
            suffix: suffix.into(),
            status,
            times,
        });
    }

    /// Inline comments on `path` are refused though the diff shows it.
    pub fn refuse_inline_on(&self, path: &str) {
        self.lock().refuse_inline_on.push(path.into());
    }

    /// `next` pages and redirects point at `origin` (another server) instead of the fake.
    pub fn point_elsewhere(&self, origin: &str) {
        self.lock().elsewhere = Some(origin.into());
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.lock().log.clone()
    }

    pub fn writes(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.method != "GET" && r.status < 300)
            .collect()
    }

    pub fn comments(&self) -> Vec<FakeComment> {
        self.lock().comments.clone()
    }

    /// The Code Insights report `id` on `commit`, and its annotations.
    pub fn report(&self, commit: &str, id: &str) -> Option<(Value, Vec<Value>)> {
        let st = self.lock();
        let key = (commit.to_string(), id.to_string());
        let report = st.reports.get(&key)?.clone();
        Some((
            report,
            st.annotations.get(&key).cloned().unwrap_or_default(),
        ))
    }

    pub fn summary(&self) -> String {
        self.requests()
            .iter()
            .map(|r| {
                format!(
                    "{} {} -> {} {}",
                    r.method,
                    r.path,
                    r.status,
                    r.body.chars().take(300).collect::<String>()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl State {
    fn next_comment_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// A user's uuid, the same for the same name.
pub fn uuid_of(name: &str) -> String {
    if name == BOT {
        return BOT_UUID.to_string();
    }
    let h: u64 = name.bytes().fold(0xcbf29ce484222325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    });
    format!(
        "{{{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}}}",
        h >> 32,
        (h >> 16) & 0xffff,
        h & 0xfff,
        (h >> 20) & 0xfff,
        h & 0xffff_ffff_ffff
    )
}

/// Markdown as Bitbucket shows it: raw HTML escaped, everything else rendered.
pub fn render(raw: &str) -> String {
    use pulldown_cmark::{Event, Parser, html};
    let events = Parser::new(raw).map(|e| match e {
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        other => other,
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

async fn handle(
    state: Arc<Mutex<State>>,
    description: Arc<Description>,
    addr: SocketAddr,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = req.method().to_string();
    let path = req
        .uri()
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_default();
    let authorization = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let content_type = req
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = match req.into_body().collect().await {
        Ok(c) => String::from_utf8_lossy(&c.to_bytes()).into_owned(),
        Err(_) => String::new(),
    };
    let mut st = lock(&state);
    let call = Call {
        method: method.clone(),
        path: path.clone(),
        authorization: authorization.clone(),
        content_type,
        body: body.clone(),
        origin: st
            .elsewhere
            .clone()
            .unwrap_or_else(|| format!("http://{addr}")),
    };
    let response = super::fake_bitbucket_routes::answer(&mut st_view(&mut st), &description, &call);
    st.log.push(Recorded {
        method,
        path,
        body,
        status: response.status().as_u16(),
        auth: authorization.map(|a| a.split(' ').next().unwrap_or("").to_string()),
    });
    Ok(response)
}

/// A request as the routes read it.
pub struct Call {
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
    pub content_type: String,
    pub body: String,
    /// `http://host:port` that `next` and redirects point at.
    pub origin: String,
}

/// The state as the routes change it.
pub struct View<'a> {
    pub workspace: &'a str,
    pub repo_slug: &'a str,
    pub pr: &'a Option<PullRequest>,
    pub comments: &'a mut Vec<FakeComment>,
    pub next_id: &'a mut u64,
    pub page_size: usize,
    pub refuse_inline_on: &'a [String],
    pub reports: &'a mut HashMap<(String, String), Value>,
    pub annotations: &'a mut HashMap<(String, String), Vec<Value>>,
    pub scopes: Option<Vec<String>>,
    pub user: Option<String>,
    failures: &'a mut Vec<Failure>,
    tokens: &'a HashMap<String, Token>,
}

fn st_view(st: &mut State) -> View<'_> {
    View {
        workspace: &st.workspace,
        repo_slug: &st.repo_slug,
        pr: &st.pr,
        comments: &mut st.comments,
        next_id: &mut st.next_id,
        page_size: st.page_size,
        refuse_inline_on: &st.refuse_inline_on,
        reports: &mut st.reports,
        annotations: &mut st.annotations,
        scopes: None,
        user: None,
        failures: &mut st.failures,
        tokens: &st.tokens,
    }
}

impl View<'_> {
    /// The failure to answer `call` with, counted down.
    pub fn failure(&mut self, call: &Call) -> Option<u16> {
        let path = call.path.split('?').next().unwrap_or("");
        let f = self.failures.iter_mut().find(|f| {
            f.times > 0
                && path.ends_with(f.suffix.as_str())
                && f.method.as_deref().is_none_or(|m| m == call.method)
        })?;
        f.times -= 1;
        Some(f.status)
    }

    /// Who `authorization` is and what it may do; `false` when Bitbucket would not know it.
    pub fn authenticate(&mut self, authorization: Option<&str>) -> bool {
        let key = match authorization.and_then(|a| a.split_once(' ')) {
            Some(("Bearer", token)) => token.to_string(),
            Some(("Basic", encoded)) => base64::engine::general_purpose::STANDARD
                .decode(encoded.trim())
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .unwrap_or_default(),
            _ => return false,
        };
        match self.tokens.get(&key) {
            Some(token) => {
                self.scopes = Some(token.scopes.clone());
                self.user = Some(BOT.to_string());
                true
            }
            None => false,
        }
    }

    pub fn may(&self, scope: &str) -> bool {
        self.scopes
            .as_ref()
            .is_some_and(|s| s.iter().any(|g| g == scope))
    }

    pub fn next_comment_id(&mut self) -> u64 {
        let id = *self.next_id;
        *self.next_id += 1;
        id
    }
}

/// A JSON answer.
pub fn respond(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a response")
}

/// Bitbucket's error object.
pub fn error(status: StatusCode, message: &str) -> Response<Full<Bytes>> {
    respond(
        status,
        &json!({ "type": "error", "error": { "message": message } }),
    )
}
