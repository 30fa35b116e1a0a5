//! The HTTP side of the GitLab forge: REST v4 requests with the token in its header, sent to
//! the API's own host only (no redirect is followed, no next page on another host is read),
//! GitLab's rate limits (`Retry-After` or `RateLimit-Reset`), its two ways of naming the next
//! page, and GitLab's sentences for a refusal. Retries, pagination and bounded answers are the
//! shared [`crate::forge::http`]'s.

use std::time::Duration;

use anyhow::Context;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode, Url};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::location::{Location, Token};
use crate::forge::http::pages::{next_link_on_api, read_pages};
pub use crate::forge::http::transport::Answer;
pub use crate::forge::http::transport::ForgeApi;
use crate::forge::http::transport::{Request, Transport};
use crate::forge::http::{admit_origin, redirect_refused};

/// The server, as messages name it.
const GITLAB: &str = "GitLab";
/// The longest wait for a rate limit before giving up with a time to come back.
const MAX_RATE_LIMIT_WAIT: Duration = Duration::from_secs(90);
/// A 429 that says nothing about when to come back: GitLab's limits are per minute.
const DEFAULT_RATE_LIMIT_WAIT: Duration = Duration::from_secs(60);
/// Items asked for per page (GitLab's most).
pub const PER_PAGE: usize = 100;

/// A request GitLab refused, with its status: what callers decide on (a 400 on a position moves
/// a finding to the summary; a 403 on resolving a thread is "may not").
#[derive(Debug, thiserror::Error)]
#[error("{sentence}")]
pub struct Refused {
    pub status: StatusCode,
    /// GitLab's own message, in one line.
    pub message: String,
    sentence: String,
}

/// The status of a refused request, when `err` is one.
pub fn refused_status(err: &anyhow::Error) -> Option<StatusCode> {
    err.downcast_ref::<Refused>().map(|r| r.status)
}

/// Whether `err` is GitLab refusing a comment's position on the diff (`400 ... Note
/// {:line_code=>[...]}` or a message naming the position): that finding goes to the summary.
/// Any other 400 is a request deep-review got wrong, and says so.
pub fn refused_position(err: &anyhow::Error) -> bool {
    err.downcast_ref::<Refused>().is_some_and(|r| {
        let message = r.message.to_ascii_lowercase();
        r.status == StatusCode::BAD_REQUEST
            && (message.contains("line_code") || message.contains("position"))
    })
}

/// A GitLab API client for one project.
pub struct Client {
    transport: Transport,
    pub location: Location,
    token: Token,
}

impl Client {
    pub fn new(location: Location, token: Token) -> anyhow::Result<Client> {
        let transport = Transport::new(GITLAB, |builder| {
            // The token is a custom header, which a redirect would carry to wherever it points:
            // none is followed.
            builder.redirect(reqwest::redirect::Policy::none())
        })?;
        Ok(Client {
            transport,
            location,
            token,
        })
    }

    pub fn token(&self) -> &Token {
        &self.token
    }

    /// `<api>/<rest>`.
    pub fn api_url(&self, rest: &str) -> anyhow::Result<Url> {
        let base = self.location.api.as_str().trim_end_matches('/');
        let text = format!("{base}/{}", rest.trim_start_matches('/'));
        Url::parse(&text).with_context(|| format!("cannot make a GitLab API address of {text}"))
    }

    /// `<api>/projects/<id or URL-encoded path>/<rest>`.
    pub fn project_url(&self, rest: &str) -> anyhow::Result<Url> {
        let project = utf8_percent_encode(&self.location.project, NON_ALPHANUMERIC).to_string();
        self.api_url(&format!(
            "projects/{project}/{}",
            rest.trim_start_matches('/')
        ))
    }

    /// GET the pages of a list, [`PER_PAGE`] items each, at most `max_pages`: the next page is
    /// GitLab's `x-next-page` (offset pagination) or its `Link: rel="next"` (keyset
    /// pagination), on the API's own host only. `true` when pages were left unread.
    pub fn get_all<T: DeserializeOwned>(
        &self,
        mut url: Url,
        what: &str,
        max_pages: usize,
    ) -> anyhow::Result<(Vec<T>, bool)> {
        url.query_pairs_mut()
            .append_pair("per_page", &PER_PAGE.to_string());
        let first = url.clone();
        read_pages(
            GITLAB,
            url,
            max_pages,
            what,
            |page| self.send(Method::GET, page, None, what),
            |headers| self.next(&first, headers, what),
        )
    }

    /// The next page's address, if there is one.
    fn next(&self, first: &Url, headers: &HeaderMap, what: &str) -> anyhow::Result<Option<Url>> {
        let next_page = headers
            .get("x-next-page")
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty());
        match next_page {
            Some(page) => offset_page(first, page, what).map(Some),
            None => next_link_on_api(headers, &self.location.api, GITLAB, what),
        }
    }

    /// One sentence for a refused request to `url`.
    fn status_error(&self, status: StatusCode, body: &[u8], what: &str, url: &Url) -> Refused {
        let message = message_of(body);
        // GitLab's messages repeat the status (`401 Unauthorized`): say it once.
        let code_prefix = format!("{} ", status.as_u16());
        let message = message
            .strip_prefix(&code_prefix)
            .unwrap_or(&message)
            .to_string();
        let project = crate::text::printable_line(&self.location.project);
        let source = self.token.source;
        let code = status.as_u16();
        let sentence = match status {
            StatusCode::UNAUTHORIZED if self.token.is_job_token() => format!(
                "GitLab refused CI_JOB_TOKEN for {what} ({code} {message}): set GITLAB_TOKEN to a project access token with read_api (api to post)"
            ),
            StatusCode::UNAUTHORIZED => format!(
                "GitLab rejected the token from {source} ({code} {message}): set GITLAB_TOKEN to a valid access token"
            ),
            StatusCode::FORBIDDEN if self.token.is_job_token() => format!(
                "GitLab does not let CI_JOB_TOKEN read {what} ({code} {message}): set GITLAB_TOKEN to a project access token with read_api (api to post)"
            ),
            StatusCode::FORBIDDEN => format!(
                "GitLab refused {what} ({code} {message}): the token from {source} needs the api scope (read_api to read) and the Developer role on {project}"
            ),
            StatusCode::NOT_FOUND if self.token.is_job_token() && !job_token_reads(url) => {
                format!(
                    "GitLab answered 404 to CI_JOB_TOKEN for {what} in project {project}: a CI job token may read a merge request and its notes but not its commits, discussions or diff versions, so set GITLAB_TOKEN to a project access token with the read_api scope (api to post)"
                )
            }
            StatusCode::NOT_FOUND if !self.location.api_from_ci => format!(
                "GitLab has no {what} in project {project} (404, from {}): check the merge request number and the project; a private project also answers 404 to a token that cannot read it, and an instance under a relative URL root (https://host/gitlab) needs GITLAB_URL set to that address",
                self.location.from
            ),
            StatusCode::NOT_FOUND => format!(
                "GitLab has no {what} in project {project} (404, from {}): check the merge request number and the project; a private project also answers 404 to a token that cannot read it",
                self.location.from
            ),
            _ => format!("GitLab refused {what} ({code} {message})"),
        };
        Refused {
            status,
            message,
            sentence,
        }
    }
}

/// GitLab's side of the shared retry loop: requests go to the API's own origin only, and a 429
/// waits what `Retry-After` (or `RateLimit-Reset`) says, up to [`MAX_RATE_LIMIT_WAIT`] each time.
impl ForgeApi for Client {
    const NAME: &'static str = GITLAB;
    const API_VARIABLE: &'static str = "CI_API_V4_URL";
    /// Each 429 says how long on its own.
    type Limits = ();

    fn authorize(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        request.header(self.token.header(), &self.token.value)
    }

    /// Anything but a POST.
    fn repeatable(&self, request: &Request) -> bool {
        request.method != Method::POST
    }

    /// A 429, and how long its headers ask to wait.
    fn rate_limit(&self, answer: &Answer, _: &mut ()) -> Option<Duration> {
        (answer.status == StatusCode::TOO_MANY_REQUESTS).then(|| rate_limit_wait(&answer.headers))
    }

    /// Up to [`MAX_RATE_LIMIT_WAIT`] each time.
    fn may_wait(&self, wait: Duration, _waited: Duration) -> bool {
        wait <= MAX_RATE_LIMIT_WAIT
    }

    fn rate_limited(&self, request: &Request, wait: Duration, _waited: Duration) -> anyhow::Error {
        anyhow::anyhow!(
            "GitLab's rate limit stops {} for {} more: try again then",
            request.what,
            crate::text::duration_short(wait)
        )
    }

    fn transport(&self) -> &Transport {
        &self.transport
    }

    /// The API's own origin only: no other gets the token.
    fn admit(&self, url: &Url, what: &str) -> anyhow::Result<()> {
        admit_origin(url, &[&self.location.api], Self::NAME, what)
    }

    /// A redirect is refused (the token is not carried along); any other refusal keeps its
    /// status, which callers decide on.
    fn refused(&self, request: &Request, answer: &Answer) -> anyhow::Error {
        let what = request.what;
        if let Some(refused) = redirect_refused(answer, Self::NAME, what, Self::API_VARIABLE) {
            return refused;
        }
        self.status_error(answer.status, &answer.body, what, &request.url)
            .into()
    }
}

/// Whether a CI job token may read `url`: a merge request itself and its notes, the only
/// merge request endpoints GitLab lets a job token use
/// (<https://docs.gitlab.com/ci/jobs/ci_job_token/#job-token-access>). Anywhere else GitLab
/// takes the job token for no one, and a private project answers 404: not a wrong number.
fn job_token_reads(url: &Url) -> bool {
    let segments: Vec<&str> = url
        .path_segments()
        .map(Iterator::collect)
        .unwrap_or_default();
    match segments.iter().rposition(|s| *s == "merge_requests") {
        Some(at) => matches!(&segments[at + 1..], [_] | [_, "notes"]),
        None => false,
    }
}

/// `first` at page `page` (GitLab's `x-next-page`), its other query pairs kept.
fn offset_page(first: &Url, page: &str, what: &str) -> anyhow::Result<Url> {
    let page: u32 = page.parse().map_err(|_| {
        anyhow::anyhow!(
            "GitLab's x-next-page for {what} is `{}`, not a page number",
            crate::text::printable_line(page)
        )
    })?;
    let mut next = first.clone();
    let pairs: Vec<(String, String)> = first
        .query_pairs()
        .filter(|(k, _)| k != "page")
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    next.query_pairs_mut()
        .clear()
        .extend_pairs(pairs)
        .append_pair("page", &page.to_string());
    Ok(next)
}

/// GitLab's error message: `{"message": "..."}`, `{"message": {"field": ["..."]}}` or
/// `{"error": "..."}`, in one line.
fn message_of(body: &[u8]) -> String {
    let text = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| {
            let m = if v["message"].is_null() {
                &v["error"]
            } else {
                &v["message"]
            };
            match m {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                other => Some(other.to_string()),
            }
        })
        .unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned());
    crate::text::printable_line(&text)
}

/// How long a 429 asks to wait: `Retry-After` in seconds, else `RateLimit-Reset` (a Unix time),
/// else a minute.
fn rate_limit_wait(headers: &HeaderMap) -> Duration {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(secs) = header("retry-after").and_then(|v| v.parse::<u64>().ok()) {
        return Duration::from_secs(secs);
    }
    if let Some(reset) = header("ratelimit-reset").and_then(|v| v.parse::<i64>().ok()) {
        return crate::forge::http::until_reset(reset);
    }
    DEFAULT_RATE_LIMIT_WAIT
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a refused position moves a finding to the summary; another 400 is an error.
    #[test]
    fn a_refused_position_is_told_from_a_bad_request() {
        let refused = |status: StatusCode, message: &str| -> anyhow::Error {
            Refused {
                status,
                message: message.into(),
                sentence: String::new(),
            }
            .into()
        };
        let position =
            "Bad request - Note {:line_code=>[\"can't be blank\", \"must be a valid line code\"]}";
        assert!(refused_position(&refused(
            StatusCode::BAD_REQUEST,
            position
        )));
        assert!(!refused_position(&refused(
            StatusCode::BAD_REQUEST,
            "note is missing"
        )));
        assert!(!refused_position(&refused(StatusCode::FORBIDDEN, position)));
        assert!(!refused_position(&anyhow::anyhow!("line_code")));
    }
    use reqwest::header::HeaderValue;

    #[test]
    fn a_job_token_reads_a_merge_request_and_its_notes_only() {
        let url = |rest: &str| {
            Url::parse(&format!(
                "https://gl.example/api/v4/projects/g%2Fp/merge_requests/{rest}"
            ))
            .unwrap()
        };
        assert!(job_token_reads(&url("42")));
        assert!(job_token_reads(&url("42/notes?sort=asc")));
        for not in [
            "42/commits",
            "42/discussions",
            "42/versions",
            "42/versions/7",
        ] {
            assert!(!job_token_reads(&url(not)), "{not}");
        }
    }

    #[test]
    fn rate_limits_say_how_long_to_wait() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(rate_limit_wait(&headers), Duration::from_secs(7));
        let mut headers = HeaderMap::new();
        let reset = (chrono::Utc::now().timestamp() + 30).to_string();
        headers.insert("ratelimit-reset", HeaderValue::from_str(&reset).unwrap());
        let wait = rate_limit_wait(&headers).as_secs();
        assert!((29..=32).contains(&wait), "{wait}");
        assert_eq!(rate_limit_wait(&HeaderMap::new()), DEFAULT_RATE_LIMIT_WAIT);
    }

    #[test]
    fn messages_in_every_shape_gitlab_sends() {
        assert_eq!(
            message_of(br#"{"message":"401 Unauthorized"}"#),
            "401 Unauthorized"
        );
        assert_eq!(
            message_of(br#"{"message":{"note":["can't be blank"]}}"#),
            r#"{"note":["can't be blank"]}"#
        );
        assert_eq!(
            message_of(br#"{"error":"insufficient_scope"}"#),
            "insufficient_scope"
        );
        assert_eq!(message_of(b"oops"), "oops");
    }
}
