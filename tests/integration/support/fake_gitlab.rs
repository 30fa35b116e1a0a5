//! A fake GitLab REST API v4 on 127.0.0.1, for the merge request tests.
//!
//! It serves what deep-review uses, in the shapes GitLab documents (docs/api/merge_requests.md,
//! discussions.md, notes.md, draft_notes.md): a merge request with its `diff_refs`, its commits
//! (newest first), its diff versions with their diffs, its discussions and notes, draft notes
//! and their publishing, replies in a discussion and resolving one, and the token's user. It
//! refuses what GitLab refuses, where deep-review depends on it:
//!
//! - the token: `PRIVATE-TOKEN` must match (`401 Unauthorized` otherwise); a CI job token
//!   (`JOB-TOKEN`) reads a merge request and its notes only, as GitLab lists its reach
//!   (<https://docs.gitlab.com/ci/jobs/ci_job_token/#job-token-access>): elsewhere it is no
//!   one, which a private project answers with 404;
//! - the project is named by its id or its URL-encoded path (`group%2Fsub%2Fproj`): a path
//!   with plain slashes routes nowhere, as on GitLab;
//! - every POST and PUT body is checked against python-gitlab's description of the endpoint
//!   (its managers' required and optional attributes, installed by
//!   scripts/install-gitlab-descriptions.sh): a missing attribute is GitLab's
//!   `400 {"error": "note is missing"}`; one the endpoint does not take is refused too (GitLab
//!   would drop it silently, which hides a client's mistake);
//! - a position must name a version of the diff by its three commits and a line of that
//!   version's diff: an added line by `new_line` alone, an unchanged one by both lines, line
//!   codes as GitLab computes them; anything else is GitLab's
//!   `400 Note {:line_code=>["can't be blank", "must be a valid line code"]}` on a discussion,
//!   and on a draft note nothing at first: GitLab takes the draft as it is, and publishing
//!   drops it silently (see `publish`);
//! - a note is edited only by its author (403), a discussion resolved only with the right
//!   (403 when told to refuse);
//! - lists are paginated with `x-next-page`, `x-total` and `Link` headers, at the fake's page
//!   size whatever the client asks; it can be told to answer 429 (with `Retry-After` and
//!   `RateLimit-*`) or a server error a number of times.
//!
//! It also does what GitLab does with what is posted, so tests can see it: quick actions at the
//! start of a line outside a ```` ``` ```` block run (and are recorded; `/approve` approves),
//! and `@name` outside code mentions someone (recorded). Ids are past 2^31, as on GitLab.com;
//! every request is recorded.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use sha1::{Digest, Sha1};

use super::http_server::Server;

/// The username the fake's token acts as (a project access token's bot user).
pub const BOT: &str = "project_2147483700_bot_5a1e";
/// Ids past 2^31, as GitLab.com's are.
const PROJECT_ID: u64 = 2_147_483_700;
const FIRST_ID: u64 = 3_000_000_000;

/// The quick actions GitLab runs from a note (enough of them to tell).
const QUICK_ACTIONS: &[&str] = &[
    "approve",
    "unapprove",
    "merge",
    "close",
    "reopen",
    "assign",
    "assign_reviewer",
    "request_review",
    "unassign",
    "unassign_reviewer",
    "label",
    "unlabel",
    "title",
    "draft",
    "ready",
    "rebase",
    "lock",
    "unlock",
    "submit_review",
    "spend",
    "estimate",
    "due",
    "milestone",
    "target_branch",
    "award",
    "react",
    "todo",
    "done",
    "subscribe",
    "unsubscribe",
    "copy_metadata",
    "relate",
    "duplicate",
];

/// One request as the fake saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Path and query, as sent.
    pub path: String,
    pub body: String,
    pub status: u16,
    /// The token header the request carried (`PRIVATE-TOKEN`, `JOB-TOKEN` or none).
    pub token_header: Option<String>,
}

/// A merge request the fake serves.
#[derive(Debug, Clone)]
pub struct MergeRequest {
    pub iid: u64,
    pub title: String,
    pub description: String,
    pub author: String,
    pub source_branch: String,
    pub target_branch: String,
    /// Commits oldest first (GitLab lists them newest first).
    pub commits: Vec<String>,
}

/// One file of a version's diff.
#[derive(Debug, Clone)]
pub struct FileDiff {
    pub old_path: String,
    pub new_path: String,
    pub diff: String,
    pub new_file: bool,
}

/// A version of the merge request's diff.
#[derive(Debug, Clone)]
pub struct Version {
    pub id: u64,
    pub base: String,
    pub start: String,
    pub head: String,
    pub diffs: Vec<FileDiff>,
}

/// A note as the fake keeps it.
#[derive(Debug, Clone)]
pub struct FakeNote {
    pub id: u64,
    pub author: String,
    pub body: String,
    pub system: bool,
    /// `None` (a plain note), `DiscussionNote` or `DiffNote`.
    pub kind: Option<&'static str>,
    pub position: Option<Value>,
    pub resolved: bool,
}

/// A discussion: a thread of notes, or one plain note (`individual_note`).
#[derive(Debug, Clone)]
pub struct FakeDiscussion {
    pub id: String,
    pub individual: bool,
    pub notes: Vec<FakeNote>,
}

impl FakeDiscussion {
    pub fn resolved(&self) -> bool {
        self.notes.iter().filter(|n| !n.system).all(|n| n.resolved)
    }
}

/// A draft note, unpublished.
#[derive(Debug, Clone)]
pub struct FakeDraft {
    pub id: u64,
    pub author: String,
    pub note: String,
    pub position: Option<Value>,
}

/// What a request is refused with, the next `times` times.
#[derive(Debug, Clone)]
struct Failure {
    method: Option<String>,
    suffix: String,
    status: u16,
    times: usize,
}

/// python-gitlab's description of an endpoint: its path template and attributes.
#[derive(Debug, Clone)]
struct Endpoint {
    segments: Vec<String>,
    create: Option<Attrs>,
    update: Option<Attrs>,
}

#[derive(Debug, Clone, Default)]
struct Attrs {
    required: Vec<String>,
    optional: Vec<String>,
    exclusive: Vec<String>,
}

#[derive(Default)]
struct State {
    project_path: String,
    token: String,
    job_token: Option<String>,
    mr: Option<MergeRequest>,
    versions: Vec<Version>,
    discussions: Vec<FakeDiscussion>,
    drafts: Vec<FakeDraft>,
    next_id: u64,
    page_size: usize,
    failures: Vec<Failure>,
    may_resolve: bool,
    draft_notes_api: bool,
    /// A public project: anyone reads it, without a token.
    public: bool,
    /// The relative URL root the instance is served under (`/gitlab`), or empty.
    relative_root: String,
    /// Keyset pagination: only a `Link` header says where the next page is.
    keyset: bool,
    /// Paths whose positions GitLab refuses though they are on the diff (a file GitLab
    /// could not diff, say): a 400 as for any bad position.
    refuse_positions_on: Vec<String>,
    endpoints: Vec<Endpoint>,
    quick_actions_run: Vec<String>,
    mentions: Vec<String>,
    approvals: Vec<String>,
    log: Vec<Recorded>,
}

/// The running fake. Dropping it stops it.
pub struct FakeGitLab {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    _server: Server,
}

/// Where scripts/install-gitlab-descriptions.sh put python-gitlab's endpoint attributes.
pub fn descriptions_file() -> std::path::PathBuf {
    if let Some(file) = std::env::var_os("DEEP_REVIEW_GITLAB_DESCRIPTIONS") {
        return file.into();
    }
    let home = std::env::var_os("HOME").unwrap_or_default();
    std::path::Path::new(&home)
        .join(".cache/deep-review/gitlab-descriptions/python-gitlab-8.6.0-endpoints.json")
}

fn load_endpoints() -> Vec<Endpoint> {
    let path = descriptions_file();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "the fake GitLab validates requests against python-gitlab's description, {} ({e}): run scripts/install-gitlab-descriptions.sh",
            path.display()
        )
    });
    let doc: Value = serde_json::from_str(&text).expect("the description is JSON");
    let attrs = |v: &Value| -> Option<Attrs> {
        if v.is_null() {
            return None;
        }
        let list = |k: &str| -> Vec<String> {
            v[k].as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        Some(Attrs {
            required: list("required"),
            optional: list("optional"),
            exclusive: list("exclusive"),
        })
    };
    let endpoints: Vec<Endpoint> = doc["endpoints"]
        .as_array()
        .expect("endpoints")
        .iter()
        .map(|e| Endpoint {
            segments: e["path"]
                .as_str()
                .unwrap_or("")
                .trim_start_matches('/')
                .split('/')
                .map(str::to_string)
                .collect(),
            create: attrs(&e["create"]),
            update: attrs(&e["update"]),
        })
        .collect();
    assert!(
        endpoints
            .iter()
            .any(|e| e.segments.last().map(String::as_str) == Some("draft_notes")),
        "{} does not describe the draft notes endpoint",
        path.display()
    );
    endpoints
}

impl FakeGitLab {
    /// A fake of project `project_path` (`group/sub/proj`) that accepts `token`.
    pub fn start(project_path: &str, token: &str) -> FakeGitLab {
        let state = Arc::new(Mutex::new(State {
            project_path: project_path.into(),
            token: token.into(),
            next_id: FIRST_ID,
            page_size: 100,
            may_resolve: true,
            draft_notes_api: true,
            endpoints: load_endpoints(),
            ..State::default()
        }));
        let thread_state = state.clone();
        let server = Server::start("fake GitLab", move |req, addr| {
            handle(thread_state.clone(), addr, req)
        });
        FakeGitLab {
            addr: server.addr,
            state,
            _server: server,
        }
    }

    /// `CI_API_V4_URL`.
    pub fn api_url(&self) -> String {
        format!("{}/api/v4", self.web_url())
    }

    /// The instance's web address: `http://127.0.0.1:PORT`, and its relative URL root if it
    /// has one.
    pub fn web_url(&self) -> String {
        format!("http://{}{}", self.addr, self.lock().relative_root)
    }

    /// Serves the instance under a relative URL root (`/gitlab`), as a self-managed GitLab
    /// configured with one is (<https://docs.gitlab.com/install/relative_url/>): its API is at
    /// `/gitlab/api/v4`, and nothing answers at `/api/v4`.
    pub fn under_relative_root(&self, root: &str) {
        self.lock().relative_root = root.trim_end_matches('/').to_string();
    }

    pub fn project_id(&self) -> u64 {
        PROJECT_ID
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    pub fn set_merge_request(&self, mr: MergeRequest) {
        self.lock().mr = Some(mr);
    }

    /// A new version of the diff (a push): the merge request's head is its head.
    pub fn add_version(&self, base: &str, start: &str, head: &str, diffs: Vec<FileDiff>) {
        let mut st = self.lock();
        let id = st.next_id();
        st.versions.insert(
            0,
            Version {
                id,
                base: base.into(),
                start: start.into(),
                head: head.into(),
                diffs,
            },
        );
    }

    pub fn set_commits(&self, commits: Vec<String>) {
        if let Some(mr) = self.lock().mr.as_mut() {
            mr.commits = commits;
        }
    }

    /// A diff discussion someone started on `path:line` (new side).
    pub fn add_diff_discussion(
        &self,
        path: &str,
        line: u32,
        author: &str,
        body: &str,
        resolved: bool,
    ) {
        let mut st = self.lock();
        let version = st.versions.first().cloned().expect("a version");
        let id = st.next_id();
        let position = json!({
            "base_sha": version.base, "start_sha": version.start, "head_sha": version.head,
            "old_path": path, "new_path": path, "position_type": "text",
            "old_line": null, "new_line": line, "line_range": null,
        });
        let discussion_id = st.discussion_id();
        st.discussions.push(FakeDiscussion {
            id: discussion_id,
            individual: false,
            notes: vec![FakeNote {
                id,
                author: author.into(),
                body: body.into(),
                system: false,
                kind: Some("DiffNote"),
                position: Some(position),
                resolved,
            }],
        });
    }

    /// A plain comment someone left (an individual note), or a system note.
    pub fn add_note(&self, author: &str, body: &str, system: bool) {
        let mut st = self.lock();
        let id = st.next_id();
        let discussion_id = st.discussion_id();
        st.discussions.push(FakeDiscussion {
            id: discussion_id,
            individual: true,
            notes: vec![FakeNote {
                id,
                author: author.into(),
                body: body.into(),
                system,
                kind: None,
                position: None,
                resolved: false,
            }],
        });
    }

    /// A draft note the token's own user has pending.
    pub fn add_own_draft(&self, note: &str) {
        let mut st = self.lock();
        let id = st.next_id();
        st.drafts.push(FakeDraft {
            id,
            author: BOT.into(),
            note: note.into(),
            position: None,
        });
    }

    pub fn set_page_size(&self, size: usize) {
        self.lock().page_size = size.max(1);
    }

    /// The next `times` requests whose path (without the query) ends with `suffix` get 429
    /// with `Retry-After: 1` and GitLab's `RateLimit-*` headers.
    pub fn fail_429(&self, suffix: &str, times: usize) {
        self.fail_with(None, suffix, 429, times);
    }

    /// The next `times` requests (of `method`, when given) whose path ends with `suffix` get
    /// `status`.
    pub fn fail_with(&self, method: Option<&str>, suffix: &str, status: u16, times: usize) {
        self.lock().failures.push(Failure {
            method: method.map(str::to_string),
            suffix: suffix.into(),
            status,
            times,
        });
    }

    /// Lists are paginated as GitLab's keyset pagination does it: no `x-next-page`, no
    /// `x-total`, only `Link: <...>; rel="next"`.
    pub fn use_keyset_pagination(&self) {
        self.lock().keyset = true;
    }

    pub fn set_may_resolve(&self, may: bool) {
        self.lock().may_resolve = may;
    }

    /// An instance without the draft notes API (GitLab before 13.x, or it is switched off).
    pub fn without_draft_notes(&self) {
        self.lock().draft_notes_api = false;
    }

    pub fn refuse_positions_on(&self, path: &str) {
        self.lock().refuse_positions_on.push(path.into());
    }

    /// A CI job token of a job of this project: it reads what GitLab lets a job token read
    /// (see [`authenticate`]).
    pub fn accept_job_token(&self, token: &str) {
        self.lock().job_token = Some(token.into());
    }

    /// The project is public: reads need no token.
    pub fn make_public(&self) {
        self.lock().public = true;
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.lock().log.clone()
    }

    /// Requests that change something (not GET), answered with success.
    pub fn writes(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.method != "GET" && r.status < 300)
            .collect()
    }

    pub fn discussions(&self) -> Vec<FakeDiscussion> {
        self.lock().discussions.clone()
    }

    pub fn drafts(&self) -> Vec<FakeDraft> {
        self.lock().drafts.clone()
    }

    /// Quick actions GitLab would have run from what was posted.
    pub fn quick_actions_run(&self) -> Vec<String> {
        self.lock().quick_actions_run.clone()
    }

    /// People GitLab would have notified.
    pub fn mentions(&self) -> Vec<String> {
        self.lock().mentions.clone()
    }

    pub fn approvals(&self) -> Vec<String> {
        self.lock().approvals.clone()
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

    /// A discussion id as GitLab writes them: 40 hex digits.
    fn discussion_id(&mut self) -> String {
        let n = self.next_id();
        let digest = Sha1::digest(format!("discussion-{n}").as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// GitLab runs what a new note says: quick actions and mentions.
    fn read_new_note(&mut self, body: &str) {
        let mut fence = false;
        for line in body.lines() {
            // GitLab's extractor skips ```-fenced blocks only (a line of exactly three
            // backticks closes one).
            if fence {
                if line == "```" {
                    fence = false;
                }
                continue;
            }
            if line.starts_with("```") {
                fence = true;
                continue;
            }
            if let Some(rest) = line.strip_prefix('/') {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if QUICK_ACTIONS.contains(&name.as_str()) {
                    self.quick_actions_run.push(line.to_string());
                    if name == "approve" {
                        self.approvals.push(BOT.to_string());
                    }
                }
            }
            let mut in_code = false;
            let bytes = line.as_bytes();
            for (i, &b) in bytes.iter().enumerate() {
                if b == b'`' {
                    in_code = !in_code;
                }
                let starts_name = bytes
                    .get(i + 1)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
                let after_word = i > 0 && bytes[i - 1].is_ascii_alphanumeric();
                if b == b'@' && !in_code && starts_name && !after_word {
                    let name: String = line[i + 1..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || "_.-/".contains(*c))
                        .collect();
                    self.mentions.push(name);
                }
            }
        }
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
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let private = header("private-token");
    let job = header("job-token");
    let content_type = header("content-type").unwrap_or_default();
    let body = match req.into_body().collect().await {
        Ok(c) => String::from_utf8_lossy(&c.to_bytes()).into_owned(),
        Err(_) => String::new(),
    };
    let mut st = lock(&state);
    let auth = match (&private, &job) {
        (Some(t), _) => Auth::Private(t.clone()),
        (None, Some(t)) => Auth::Job(t.clone()),
        _ => Auth::None,
    };
    let response = answer(&mut st, addr, &method, &path, &auth, &content_type, &body);
    st.log.push(Recorded {
        method: method.to_string(),
        path,
        body,
        status: response.status().as_u16(),
        token_header: match auth {
            Auth::Private(_) => Some("PRIVATE-TOKEN".into()),
            Auth::Job(_) => Some("JOB-TOKEN".into()),
            Auth::None => None,
        },
    });
    Ok(response)
}

enum Auth {
    Private(String),
    Job(String),
    None,
}

fn respond(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a response")
}

/// GitLab's error body: `{"message": "404 Not Found"}`.
fn message(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    respond(status, &json!({ "message": text }))
}

fn not_found(what: &str) -> Response<Full<Bytes>> {
    message(StatusCode::NOT_FOUND, &format!("404 {what} Not Found"))
}

/// The most characters GitLab takes in a note: `Gitlab::Database::MAX_TEXT_SIZE_LIMIT`
/// (1,000,000, lib/gitlab/database.rb: "the maximum number of characters for text fields"),
/// which `Note` validates its `note` against.
pub const MAX_NOTE_CHARS: usize = 1_000_000;

/// GitLab's 400 for a note over [`MAX_NOTE_CHARS`] characters.
fn note_too_long(text: &str) -> Option<Response<Full<Bytes>>> {
    (text.chars().count() > MAX_NOTE_CHARS).then(|| {
        respond(
            StatusCode::BAD_REQUEST,
            &json!({ "message": { "note": ["is too long (maximum is 1000000 characters)"] } }),
        )
    })
}

fn bad_position() -> Response<Full<Bytes>> {
    message(
        StatusCode::BAD_REQUEST,
        "400 Bad request - Note {:line_code=>[\"can't be blank\", \"must be a valid line code\"]}",
    )
}

/// The failure the test asked for on this request, if any (see [`FakeGitLab::fail_with`]).
fn injected_failure(st: &mut State, method: &Method, path: &str) -> Option<Response<Full<Bytes>>> {
    let f = st.failures.iter_mut().find(|f| {
        f.times > 0
            && path.ends_with(f.suffix.as_str())
            && f.method.as_deref().is_none_or(|m| m == method.as_str())
    })?;
    f.times -= 1;
    let status = StatusCode::from_u16(f.status).expect("a status");
    if status == StatusCode::TOO_MANY_REQUESTS {
        let reset = chrono::Utc::now().timestamp() + 1;
        return Some(
            Response::builder()
                .status(status)
                .header("content-type", "text/plain")
                .header("retry-after", "1")
                .header("ratelimit-limit", "2000")
                .header("ratelimit-observed", "2001")
                .header("ratelimit-remaining", "0")
                .header("ratelimit-reset", reset.to_string())
                .body(Full::new(Bytes::from("Retry later\n")))
                .expect("a response"),
        );
    }
    Some(message(status, "500 Internal Server Error"))
}

fn answer(
    st: &mut State,
    addr: SocketAddr,
    method: &Method,
    path_and_query: &str,
    auth: &Auth,
    content_type: &str,
    body: &str,
) -> Response<Full<Bytes>> {
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    let Some(path) = path.strip_prefix(st.relative_root.as_str()) else {
        return not_found("");
    };
    if let Some(failed) = injected_failure(st, method, path) {
        return failed;
    }
    let writes = *method != Method::GET;
    if let Some(refused) = authenticate(st, method, path, auth) {
        return refused;
    }
    let params: Value = if writes && !body.is_empty() {
        if !content_type.starts_with("application/json") {
            return respond(
                StatusCode::BAD_REQUEST,
                &json!({ "error": "the fake reads JSON bodies only" }),
            );
        }
        match serde_json::from_str(body) {
            Ok(v) => v,
            Err(_) => return message(StatusCode::BAD_REQUEST, "400 Bad request - invalid JSON"),
        }
    } else {
        json!({})
    };
    if path == "/api/v4/user" && *method == Method::GET {
        return respond(
            StatusCode::OK,
            &json!({ "id": FIRST_ID - 7, "username": BOT, "name": "deep-review", "state": "active",
                     "bot": true, "web_url": format!("https://gitlab.example.com/{BOT}") }),
        );
    }
    let Some(rest) = path.strip_prefix("/api/v4/projects/") else {
        return not_found("");
    };
    let (project, rest) = rest.split_once('/').unwrap_or((rest, ""));
    let encoded_path = st.project_path.replace('/', "%2F");
    if project != PROJECT_ID.to_string() && !project.eq_ignore_ascii_case(&encoded_path) {
        return not_found("Project");
    }
    let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    if let Some(refused) = check_against_description(st, method, &segments, &params) {
        return refused;
    }
    let Some(mr) = st.mr.clone() else {
        return not_found("Merge Request");
    };
    let page: usize = query_param(query, "page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(1);
    let per_page: usize = query_param(query, "per_page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(20)
        .clamp(1, 100)
        .min(st.page_size);
    let list_url = format!("http://{addr}{}{path}", st.relative_root);
    let routed = Routed {
        method: method.clone(),
        segments: segments.iter().map(|s| s.to_string()).collect(),
        params,
        page,
        per_page,
        list_url,
        query: query.to_string(),
        mr,
    };
    route(st, &routed)
}

/// A request past the token, the project and the description's checks: what the routes read.
struct Routed {
    method: Method,
    segments: Vec<String>,
    params: Value,
    page: usize,
    per_page: usize,
    list_url: String,
    query: String,
    mr: MergeRequest,
}

/// The merge request's endpoints, by kind: reads, notes and discussions, draft notes.
fn route(st: &mut State, r: &Routed) -> Response<Full<Bytes>> {
    let iid = r.mr.iid.to_string();
    match r
        .segments
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["merge_requests", n, ..] if *n != iid => not_found("Merge Request"),
        ["merge_requests", _, "draft_notes", ..] => draft_route(st, r),
        _ if r.method == Method::GET => read_route(st, r),
        ["merge_requests", _, "discussions", ..] => discussion_route(st, r),
        _ => note_route(st, r),
    }
}

/// The merge request, its commits, versions, discussions and notes.
fn read_route(st: &mut State, r: &Routed) -> Response<Full<Bytes>> {
    let method = r.method.clone();
    let page = r.page;
    let per_page = r.per_page;
    let list_url = &r.list_url;
    let query = r.query.as_str();
    let mr = &r.mr;
    let segments: Vec<&str> = r.segments.iter().map(String::as_str).collect();
    match (method, segments.as_slice()) {
        (Method::GET, ["merge_requests", _]) => respond(StatusCode::OK, &mr_json(st, mr)),
        (Method::GET, ["merge_requests", _, "commits"]) => {
            let items: Vec<Value> = mr.commits.iter().rev().map(|c| commit_json(c)).collect();
            paged(&items, page, per_page, list_url, query, st.keyset)
        }
        (Method::GET, ["merge_requests", _, "versions"]) => {
            let items: Vec<Value> = st
                .versions
                .iter()
                .map(|v| version_json(v, mr, false))
                .collect();
            paged(&items, page, per_page, list_url, query, st.keyset)
        }
        (Method::GET, ["merge_requests", _, "versions", id]) => {
            match st.versions.iter().find(|v| v.id.to_string() == *id) {
                Some(v) => respond(StatusCode::OK, &version_json(v, mr, true)),
                None => not_found(""),
            }
        }
        (Method::GET, ["merge_requests", _, "discussions"]) => {
            let items: Vec<Value> = st
                .discussions
                .iter()
                .map(|d| discussion_json(d, mr))
                .collect();
            paged(&items, page, per_page, list_url, query, st.keyset)
        }
        (Method::GET, ["merge_requests", _, "notes"]) => {
            if query_param(query, "sort").is_some_and(|s| s != "asc" && s != "desc") {
                return respond(
                    StatusCode::BAD_REQUEST,
                    &json!({ "error": "sort does not have a valid value" }),
                );
            }
            let items: Vec<Value> = st
                .discussions
                .iter()
                .flat_map(|d| d.notes.iter())
                .map(|n| note_json(n, mr))
                .collect();
            paged(&items, page, per_page, list_url, query, st.keyset)
        }
        _ => not_found(""),
    }
}

/// Plain notes: made and edited.
fn note_route(st: &mut State, r: &Routed) -> Response<Full<Bytes>> {
    let method = r.method.clone();
    let params = &r.params;
    let mr = &r.mr;
    let segments: Vec<&str> = r.segments.iter().map(String::as_str).collect();
    match (method, segments.as_slice()) {
        (Method::POST, ["merge_requests", _, "notes"]) => {
            let text = params["body"].as_str().unwrap_or("").to_string();
            if let Some(refused) = note_too_long(&text) {
                return refused;
            }
            let id = st.next_id();
            let discussion_id = st.discussion_id();
            let note = FakeNote {
                id,
                author: BOT.into(),
                body: text.clone(),
                system: false,
                kind: None,
                position: None,
                resolved: false,
            };
            st.read_new_note(&text);
            st.discussions.push(FakeDiscussion {
                id: discussion_id,
                individual: true,
                notes: vec![note.clone()],
            });
            respond(StatusCode::CREATED, &note_json(&note, mr))
        }
        (Method::PUT, ["merge_requests", _, "notes", id]) => {
            let text = params["body"].as_str().unwrap_or("").to_string();
            if let Some(refused) = note_too_long(&text) {
                return refused;
            }
            let found = st
                .discussions
                .iter_mut()
                .flat_map(|d| d.notes.iter_mut())
                .find(|n| n.id.to_string() == *id);
            match found {
                Some(n) if n.author != BOT => message(StatusCode::FORBIDDEN, "403 Forbidden"),
                Some(n) => {
                    n.body = text;
                    let n = n.clone();
                    respond(StatusCode::OK, &note_json(&n, mr))
                }
                None => not_found("Note"),
            }
        }
        _ => not_found(""),
    }
}

/// Discussions: started on a line, replied to, resolved.
fn discussion_route(st: &mut State, r: &Routed) -> Response<Full<Bytes>> {
    let method = r.method.clone();
    let params = &r.params;
    let mr = &r.mr;
    let segments: Vec<&str> = r.segments.iter().map(String::as_str).collect();
    match (method, segments.as_slice()) {
        (Method::POST, ["merge_requests", _, "discussions"]) => {
            let text = params["body"].as_str().unwrap_or("").to_string();
            let position = params.get("position").cloned();
            if let Some(p) = &position
                && !valid_position(st, p)
            {
                return bad_position();
            }
            let id = st.next_id();
            let discussion_id = st.discussion_id();
            let note = FakeNote {
                id,
                author: BOT.into(),
                body: text.clone(),
                system: false,
                kind: Some(if position.is_some() {
                    "DiffNote"
                } else {
                    "DiscussionNote"
                }),
                position,
                resolved: false,
            };
            st.read_new_note(&text);
            let d = FakeDiscussion {
                id: discussion_id,
                individual: false,
                notes: vec![note],
            };
            let out = discussion_json(&d, mr);
            st.discussions.push(d);
            respond(StatusCode::CREATED, &out)
        }
        (Method::POST, ["merge_requests", _, "discussions", id, "notes"]) => {
            let text = params["body"].as_str().unwrap_or("").to_string();
            let note_id = st.next_id();
            st.read_new_note(&text);
            match st.discussions.iter_mut().find(|d| d.id == *id) {
                Some(d) => {
                    let note = FakeNote {
                        id: note_id,
                        author: BOT.into(),
                        body: text,
                        system: false,
                        kind: Some("DiscussionNote"),
                        position: None,
                        resolved: false,
                    };
                    d.notes.push(note.clone());
                    d.individual = false;
                    respond(StatusCode::CREATED, &note_json(&note, mr))
                }
                None => not_found("Discussion"),
            }
        }
        (Method::PUT, ["merge_requests", _, "discussions", id]) => {
            if !st.may_resolve {
                return message(StatusCode::FORBIDDEN, "403 Forbidden");
            }
            let resolved = params["resolved"].as_bool().unwrap_or(false);
            match st.discussions.iter_mut().find(|d| d.id == *id) {
                Some(d) => {
                    for n in d.notes.iter_mut() {
                        n.resolved = resolved;
                    }
                    let d = d.clone();
                    respond(StatusCode::OK, &discussion_json(&d, mr))
                }
                None => not_found("Discussion"),
            }
        }
        _ => not_found(""),
    }
}

/// Draft notes: listed, made, deleted, published.
fn draft_route(st: &mut State, r: &Routed) -> Response<Full<Bytes>> {
    let method = r.method.clone();
    let page = r.page;
    let per_page = r.per_page;
    let params = &r.params;
    let list_url = &r.list_url;
    let query = r.query.as_str();
    let mr = &r.mr;
    let segments: Vec<&str> = r.segments.iter().map(String::as_str).collect();
    match (method, segments.as_slice()) {
        (_, ["merge_requests", _, "draft_notes", ..]) if !st.draft_notes_api => not_found(""),
        (Method::GET, ["merge_requests", _, "draft_notes"]) => {
            let items: Vec<Value> = st.drafts.iter().map(|d| draft_json(d, mr)).collect();
            paged(&items, page, per_page, list_url, query, st.keyset)
        }
        (Method::POST, ["merge_requests", _, "draft_notes"]) => {
            // GitLab keeps a draft's position as given: it is checked only when the draft is
            // published (see `publish`).
            let position = params.get("position").cloned();
            let id = st.next_id();
            let draft = FakeDraft {
                id,
                author: BOT.into(),
                note: params["note"].as_str().unwrap_or("").into(),
                position,
            };
            st.drafts.push(draft.clone());
            respond(StatusCode::CREATED, &draft_json(&draft, mr))
        }
        (Method::DELETE, ["merge_requests", _, "draft_notes", id]) => {
            let before = st.drafts.len();
            st.drafts.retain(|d| d.id.to_string() != *id);
            if st.drafts.len() == before {
                return not_found("Draft Note");
            }
            Response::builder()
                .status(StatusCode::NO_CONTENT)
                .body(Full::new(Bytes::new()))
                .expect("a response")
        }
        (Method::PUT, ["merge_requests", _, "draft_notes", id, "publish"]) => {
            let Some(pos) = st.drafts.iter().position(|d| d.id.to_string() == *id) else {
                return not_found("Draft Note");
            };
            let draft = st.drafts.remove(pos);
            publish(st, draft);
            Response::builder()
                .status(StatusCode::NO_CONTENT)
                .body(Full::new(Bytes::new()))
                .expect("a response")
        }
        (Method::POST, ["merge_requests", _, "draft_notes", "bulk_publish"]) => {
            let drafts = std::mem::take(&mut st.drafts);
            for d in drafts {
                publish(st, d);
            }
            Response::builder()
                .status(StatusCode::NO_CONTENT)
                .body(Full::new(Bytes::new()))
                .expect("a response")
        }
        _ => not_found(""),
    }
}

/// Who the request is, as GitLab decides it; `Some` when it is refused.
///
/// A CI job token is accepted only on the endpoints GitLab lists for it
/// (<https://docs.gitlab.com/ci/jobs/ci_job_token/#job-token-access>): of a merge request's,
/// reading it and its notes. On any other endpoint GitLab does not take the job token as
/// anyone's, so the request is anonymous: it reads a public project, and a private project
/// answers `404 Project Not Found` (GitLab never says a private project exists), a write
/// `401 Unauthorized`.
fn authenticate(
    st: &State,
    method: &Method,
    path: &str,
    auth: &Auth,
) -> Option<Response<Full<Bytes>>> {
    let anonymous = |st: &State| {
        if *method != Method::GET || path == "/api/v4/user" {
            Some(message(StatusCode::UNAUTHORIZED, "401 Unauthorized"))
        } else if st.public {
            None
        } else {
            Some(not_found("Project"))
        }
    };
    match auth {
        Auth::Private(t) if *t == st.token => None,
        Auth::Job(t) if st.job_token.as_deref() == Some(t.as_str()) => {
            if *method == Method::GET && job_token_endpoint(path) {
                None
            } else {
                anonymous(st)
            }
        }
        _ => Some(message(StatusCode::UNAUTHORIZED, "401 Unauthorized")),
    }
}

/// `/api/v4/projects/:id/merge_requests/:iid` and its `/notes`: what a job token may read.
fn job_token_endpoint(path: &str) -> bool {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    matches!(
        segments.as_slice(),
        ["api", "v4", "projects", _, "merge_requests", _]
            | ["api", "v4", "projects", _, "merge_requests", _, "notes"]
    )
}

/// A published draft note becomes a discussion, as GitLab makes it; one whose position GitLab
/// would refuse is dropped without a word. GitLab's `DraftNotes::PublishService`
/// (app/services/draft_notes/publish_service.rb) makes each note with `Notes::CreateService`,
/// which returns an unsaved note with errors rather than raising, then deletes the draft (one
/// publish) or all of them (`bulk_publish`) and answers 204 all the same.
fn publish(st: &mut State, draft: FakeDraft) {
    if let Some(p) = &draft.position
        && !valid_position(st, p)
    {
        return;
    }
    let id = st.next_id();
    let discussion_id = st.discussion_id();
    st.read_new_note(&draft.note);
    st.discussions.push(FakeDiscussion {
        id: discussion_id,
        individual: false,
        notes: vec![FakeNote {
            id,
            author: draft.author,
            body: draft.note,
            system: false,
            kind: Some(if draft.position.is_some() {
                "DiffNote"
            } else {
                "DiscussionNote"
            }),
            position: draft.position,
            resolved: false,
        }],
    });
}

fn query_param<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
}

/// A POST (create) or PUT (update) body checked against the endpoint's attributes in
/// python-gitlab's description. `None` when it passes or the endpoint is not described (an
/// action such as `bulk_publish`, which takes no attributes).
fn check_against_description(
    st: &State,
    method: &Method,
    segments: &[&str],
    params: &Value,
) -> Option<Response<Full<Bytes>>> {
    let full: Vec<&str> = ["projects", "{project_id}"]
        .into_iter()
        .chain(segments.iter().copied())
        .collect();
    let matches = |template: &[String], path: &[&str]| {
        template.len() == path.len()
            && template
                .iter()
                .zip(path)
                .all(|(t, p)| (t.starts_with('{') && t.ends_with('}')) || t == p)
    };
    let attrs = st.endpoints.iter().find_map(|e| match *method {
        Method::POST if matches(&e.segments, &full) => e.create.clone(),
        Method::PUT if full.len() > 1 && matches(&e.segments, &full[..full.len() - 1]) => {
            e.update.clone()
        }
        _ => None,
    });
    let attrs = attrs?;
    let given: Vec<&str> = params
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    for required in &attrs.required {
        if !given.contains(&required.as_str()) {
            return Some(respond(
                StatusCode::BAD_REQUEST,
                &json!({ "error": format!("{required} is missing") }),
            ));
        }
    }
    if !attrs.exclusive.is_empty()
        && attrs
            .exclusive
            .iter()
            .filter(|x| given.contains(&x.as_str()))
            .count()
            != 1
    {
        return Some(respond(
            StatusCode::BAD_REQUEST,
            &json!({ "error": format!("{} are mutually exclusive, exactly one must be given", attrs.exclusive.join(", ")) }),
        ));
    }
    let known = |k: &str| {
        attrs
            .required
            .iter()
            .chain(&attrs.optional)
            .chain(&attrs.exclusive)
            .any(|a| a == k)
    };
    if let Some(unknown) = given.iter().find(|k| !known(k)) {
        return Some(respond(
            StatusCode::BAD_REQUEST,
            &json!({ "error": format!("{unknown} is not an attribute of this endpoint (python-gitlab's description)") }),
        ));
    }
    None
}

/// A text position naming a version by its three commits and a line its diff shows, in
/// GitLab's terms.
fn valid_position(st: &State, p: &Value) -> bool {
    let text = |k: &str| p[k].as_str().unwrap_or("");
    if text("position_type") != "text" {
        return false;
    }
    let Some(version) = st.versions.iter().find(|v| {
        v.base == text("base_sha") && v.start == text("start_sha") && v.head == text("head_sha")
    }) else {
        return false;
    };
    let new_path = text("new_path");
    if st.refuse_positions_on.iter().any(|r| r == new_path) {
        return false;
    }
    let Some(file) = version
        .diffs
        .iter()
        .find(|f| f.new_path == new_path && f.old_path == text("old_path"))
    else {
        return false;
    };
    let lines = diff_lines(&file.diff);
    let at = |new: Option<u64>, old: Option<u64>| -> Option<(u32, Option<u32>, bool)> {
        let new = new? as u32;
        let line = lines.iter().find(|l| l.new == Some(new))?;
        match (line.added, old) {
            (true, None) => Some((new, None, true)),
            (false, Some(o)) if line.old == Some(o as u32) => Some((new, line.old, false)),
            _ => None,
        }
    };
    if at(p["new_line"].as_u64(), p["old_line"].as_u64()).is_none() {
        return false;
    }
    let range = &p["line_range"];
    if range.is_null() {
        return true;
    }
    ["start", "end"].iter().all(|end| {
        let point = &range[end];
        let Some((new, old, added)) = at(point["new_line"].as_u64(), point["old_line"].as_u64())
        else {
            return false;
        };
        let old_for_code = if added {
            lines
                .iter()
                .find(|l| l.new == Some(new))
                .and_then(|l| l.old_next)
        } else {
            old
        };
        let expected = format!(
            "{}_{}_{}",
            Sha1::digest(new_path.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>(),
            old_for_code.unwrap_or(0),
            new
        );
        point["line_code"].as_str() == Some(expected.as_str())
            && point["type"].as_str() == Some(if added { "new" } else { "old" })
    })
}

/// A line of a unified diff: its numbers on each side (an added line's `old_next` is the old
/// side's counter, as GitLab's parser keeps it).
///
/// GitLab's parser (`Gitlab::Diff::Parser#parse`, lib/gitlab/diff/parser.rb) starts both
/// counters at the hunk header's numbers read literally (`line.match(/\-[0-9]*/)`), so a
/// `-N,0` header (a new file's `-0,0`, a pure insertion) gives its added lines old number N,
/// not N + 1; line codes are `Gitlab::Git.diff_line_code`: `<sha1(path)>_<old>_<new>`.
struct DiffLine {
    old: Option<u32>,
    old_next: Option<u32>,
    new: Option<u32>,
    added: bool,
}

fn diff_lines(diff: &str) -> Vec<DiffLine> {
    let mut out = Vec::new();
    let (mut old, mut new) = (0u32, 0u32);
    for line in diff.lines() {
        if let Some(h) = line.strip_prefix("@@ -") {
            let mut parts = h.split(' ');
            let side = |s: Option<&str>| -> u32 {
                let s = s.unwrap_or("0").trim_start_matches(['-', '+']);
                let start = s.split_once(',').map_or(s, |(start, _)| start);
                start.parse().unwrap_or(0)
            };
            old = side(parts.next());
            new = side(parts.next());
            continue;
        }
        match line.chars().next() {
            Some('+') if !line.starts_with("+++") => {
                out.push(DiffLine {
                    old: None,
                    old_next: Some(old),
                    new: Some(new),
                    added: true,
                });
                new += 1;
            }
            Some('-') if !line.starts_with("---") => old += 1,
            Some(' ') => {
                out.push(DiffLine {
                    old: Some(old),
                    old_next: None,
                    new: Some(new),
                    added: false,
                });
                old += 1;
                new += 1;
            }
            _ => {}
        }
    }
    out
}

/// One page of `items` with GitLab's pagination headers.
fn paged(
    items: &[Value],
    page: usize,
    per_page: usize,
    url: &str,
    query: &str,
    keyset: bool,
) -> Response<Full<Bytes>> {
    let total_pages = items.len().div_ceil(per_page).max(1);
    let start = (page.max(1) - 1) * per_page;
    let slice: Vec<Value> = items.iter().skip(start).take(per_page).cloned().collect();
    let others: Vec<&str> = query
        .split('&')
        .filter(|kv| !kv.is_empty() && !kv.starts_with("page=") && !kv.starts_with("per_page="))
        .collect();
    let link_to = |p: usize| {
        let mut q = others.join("&");
        if !q.is_empty() {
            q.push('&');
        }
        format!("<{url}?{q}page={p}&per_page={per_page}>")
    };
    let mut links = vec![format!("{}; rel=\"first\"", link_to(1))];
    let next = (page < total_pages).then_some(page + 1);
    if let Some(n) = next {
        links.insert(0, format!("{}; rel=\"next\"", link_to(n)));
    }
    links.push(format!("{}; rel=\"last\"", link_to(total_pages)));
    if keyset {
        return Response::builder()
            .status(StatusCode::OK)
            .header("content-type", "application/json")
            .header("link", links[..links.len() - 1].join(", "))
            .body(Full::new(Bytes::from(Value::Array(slice).to_string())))
            .expect("a response");
    }
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json")
        .header("x-page", page.to_string())
        .header("x-per-page", per_page.to_string())
        .header(
            "x-next-page",
            next.map(|n| n.to_string()).unwrap_or_default(),
        )
        .header(
            "x-prev-page",
            if page > 1 {
                (page - 1).to_string()
            } else {
                String::new()
            },
        )
        .header("x-total", items.len().to_string())
        .header("x-total-pages", total_pages.to_string())
        .header("link", links.join(", "))
        .body(Full::new(Bytes::from(Value::Array(slice).to_string())))
        .expect("a response")
}

fn user_json(username: &str) -> Value {
    let id = Sha1::digest(username.as_bytes())[0] as u64 + 2_200_000_000;
    json!({
        "id": id, "username": username, "name": username, "state": "active",
        "avatar_url": format!("https://gitlab.example.com/uploads/{username}.png"),
        "web_url": format!("https://gitlab.example.com/{username}"),
    })
}

fn web_url(st: &State, mr: &MergeRequest) -> String {
    format!(
        "https://gitlab.example.com/{}/-/merge_requests/{}",
        st.project_path, mr.iid
    )
}

fn mr_json(st: &State, mr: &MergeRequest) -> Value {
    let v = st.versions.first();
    json!({
        "id": 2_400_000_000u64 + mr.iid,
        "iid": mr.iid,
        "project_id": PROJECT_ID,
        "title": mr.title,
        "description": mr.description,
        "state": "opened",
        "created_at": "2026-11-30T09:12:41.000Z",
        "updated_at": "2026-12-01T10:00:00.000Z",
        "target_branch": mr.target_branch,
        "source_branch": mr.source_branch,
        "author": user_json(&mr.author),
        "source_project_id": PROJECT_ID,
        "target_project_id": PROJECT_ID,
        "draft": false,
        "work_in_progress": false,
        "merge_when_pipeline_succeeds": false,
        "detailed_merge_status": "mergeable",
        "sha": v.map(|v| v.head.clone()),
        "merge_commit_sha": null,
        "references": { "short": format!("!{}", mr.iid), "relative": format!("!{}", mr.iid),
                        "full": format!("{}!{}", st.project_path, mr.iid) },
        "web_url": web_url(st, mr),
        "diff_refs": v.map(|v| json!({ "base_sha": v.base, "head_sha": v.head, "start_sha": v.start })),
    })
}

fn commit_json(sha: &str) -> Value {
    json!({
        "id": sha, "short_id": &sha[..8], "title": "commit", "message": "commit\n",
        "author_name": "Jane Doe", "author_email": "jane@example.com",
        "created_at": "2026-11-30T09:00:00.000Z", "parent_ids": [],
        "web_url": format!("https://gitlab.example.com/-/commit/{sha}"),
    })
}

fn version_json(v: &Version, mr: &MergeRequest, with_diffs: bool) -> Value {
    let mut out = json!({
        "id": v.id, "head_commit_sha": v.head, "base_commit_sha": v.base,
        "start_commit_sha": v.start, "created_at": "2026-12-01T10:00:00.000Z",
        "merge_request_id": 2_400_000_000u64 + mr.iid, "state": "collected",
        "real_size": v.diffs.len().to_string(), "patch_id_sha": null,
    });
    if with_diffs {
        out["commits"] = json!([]);
        out["diffs"] = Value::Array(
            v.diffs
                .iter()
                .map(|f| {
                    json!({
                        "old_path": f.old_path, "new_path": f.new_path,
                        "a_mode": if f.new_file { "0" } else { "100644" }, "b_mode": "100644",
                        "diff": f.diff, "new_file": f.new_file, "renamed_file": f.old_path != f.new_path,
                        "deleted_file": false, "generated_file": false,
                    })
                })
                .collect(),
        );
    }
    out
}

fn note_json(n: &FakeNote, mr: &MergeRequest) -> Value {
    let mut out = json!({
        "id": n.id,
        "type": n.kind,
        "body": n.body,
        "attachment": null,
        "author": user_json(&n.author),
        "created_at": "2026-12-01T10:00:00.000Z",
        "updated_at": "2026-12-01T10:00:00.000Z",
        "system": n.system,
        "noteable_id": 2_400_000_000u64 + mr.iid,
        "noteable_type": "MergeRequest",
        "project_id": PROJECT_ID,
        "noteable_iid": mr.iid,
        "resolvable": !n.system,
        "resolved": n.resolved,
        "resolved_by": if n.resolved { user_json(BOT) } else { Value::Null },
        "confidential": false,
        "internal": false,
    });
    if let Some(p) = &n.position {
        out["position"] = p.clone();
        out["commit_id"] = p["head_sha"].clone();
    }
    out
}

fn discussion_json(d: &FakeDiscussion, mr: &MergeRequest) -> Value {
    json!({
        "id": d.id,
        "individual_note": d.individual,
        "notes": d.notes.iter().map(|n| note_json(n, mr)).collect::<Vec<_>>(),
    })
}

fn draft_json(d: &FakeDraft, mr: &MergeRequest) -> Value {
    json!({
        "id": d.id,
        "author_id": FIRST_ID - 7,
        "merge_request_id": 2_400_000_000u64 + mr.iid,
        "resolve_discussion": false,
        "discussion_id": null,
        "note": d.note,
        "commit_id": null,
        "line_code": null,
        "position": d.position.clone().unwrap_or_else(|| json!({
            "base_sha": null, "start_sha": null, "head_sha": null, "old_path": null,
            "new_path": null, "position_type": "text", "old_line": null, "new_line": null,
            "line_range": null,
        })),
    })
}
