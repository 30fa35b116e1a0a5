//! The HTTP side of the GitHub forge: REST and GraphQL requests with the token as a bearer,
//! GitHub's rate limits (primary, with their reset time, and secondary, which name none) and
//! GitHub's sentences for a refusal. Retries, pagination and bounded answers are the shared
//! [`crate::forge::http`]'s.

use std::time::Duration;

use anyhow::Context;
use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::location::{Location, Token};
use crate::forge::http::pages::{next_link_on_api, read_pages};
pub use crate::forge::http::transport::Answer;
pub use crate::forge::http::transport::ForgeApi;
use crate::forge::http::transport::{Request, Transport};
use crate::forge::http::{admit_origin, decode};

/// The server, as messages name it.
const GITHUB: &str = "GitHub";
/// The most one request waits for rate limits in all before giving up with a time to come
/// back: a primary limit resets within the hour, and a review should not stall that long.
const MAX_RATE_LIMIT_WAIT: Duration = Duration::from_secs(300);
/// A secondary rate limit with no header saying how long: GitHub asks for at least a minute,
/// and longer each time it repeats (doubled here).
const SECONDARY_LIMIT_WAIT: Duration = Duration::from_secs(60);
/// Replaces [`SECONDARY_LIMIT_WAIT`] (a duration such as `1s`): for tests, which must not wait
/// minutes to see the retry.
const SECONDARY_WAIT_VARIABLE: &str = "DEEP_REVIEW_GITHUB_SECONDARY_WAIT";
/// Pages of a list read at most (100 items a page).
pub const MAX_PAGES: usize = 30;

/// A GitHub API client for one repository's host.
pub struct Client {
    transport: Transport,
    pub location: Location,
    token: Token,
}

/// A request GitHub refused: its status, and the sentence that says what to do.
#[derive(Debug, thiserror::Error)]
#[error("{sentence}")]
pub struct StatusError {
    pub status: u16,
    sentence: String,
}

/// GitHub answered 422: the request was well formed but GitHub would not do it (a review
/// comment on a line outside its diff).
pub fn is_unprocessable(err: &anyhow::Error) -> bool {
    err.downcast_ref::<StatusError>()
        .is_some_and(|e| e.status == 422)
}

/// A GraphQL error as GitHub returns it beside (or instead of) data.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct GraphqlError {
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub message: String,
}

impl GraphqlError {
    /// The token may not do this (GitHub says `FORBIDDEN`, or "not accessible by integration").
    pub fn is_forbidden(&self) -> bool {
        self.kind.as_deref() == Some("FORBIDDEN") || self.message.contains("not accessible")
    }
}

/// `data` when GitHub gave it, else one sentence with GitHub's messages.
pub fn require_data(data: Value, errors: &[GraphqlError], what: &str) -> anyhow::Result<Value> {
    if !data.is_null() {
        return Ok(data);
    }
    Err(graphql_error(errors, what))
}

/// One sentence with GitHub's GraphQL messages.
pub fn graphql_error(errors: &[GraphqlError], what: &str) -> anyhow::Error {
    let messages: Vec<String> = errors
        .iter()
        .map(|e| crate::text::printable_line(&e.message))
        .collect();
    anyhow::anyhow!(
        "GitHub could not give {what}: {}",
        if messages.is_empty() {
            "its answer was empty".to_string()
        } else {
            messages.join("; ")
        }
    )
}

impl Client {
    pub fn new(location: Location, token: Token) -> anyhow::Result<Client> {
        let mut headers = HeaderMap::new();
        headers.insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("application/vnd.github+json"),
        );
        headers.insert(
            "x-github-api-version",
            HeaderValue::from_static("2022-11-28"),
        );
        let transport = Transport::new(GITHUB, |builder| builder.default_headers(headers))?;
        Ok(Client {
            transport,
            location,
            token,
        })
    }

    pub fn token(&self) -> &Token {
        &self.token
    }

    /// `<api>/repos/<owner>/<name>/<rest>`.
    pub fn repo_url(&self, rest: &str) -> anyhow::Result<Url> {
        let base = self.location.api.as_str().trim_end_matches('/');
        let text = format!(
            "{base}/repos/{}/{}/{}",
            self.location.owner,
            self.location.name,
            rest.trim_start_matches('/')
        );
        Url::parse(&text).with_context(|| format!("cannot make a GitHub API address of {text}"))
    }

    /// GET every page of a list (at most [`MAX_PAGES`]), following the `Link: rel="next"` header
    /// on the API's own host only. `true` when pages were left unread.
    pub fn get_all<T: DeserializeOwned>(
        &self,
        mut url: Url,
        what: &str,
    ) -> anyhow::Result<(Vec<T>, bool)> {
        url.query_pairs_mut().append_pair("per_page", "100");
        read_pages(
            GITHUB,
            url,
            MAX_PAGES,
            what,
            |page| self.send(Method::GET, page, None, what),
            |headers| next_link_on_api(headers, &self.location.api, GITHUB, what),
        )
    }

    /// A GraphQL request: its `data` (`Null` when GitHub gave none) and `errors`.
    pub fn graphql(
        &self,
        query: &str,
        variables: Value,
        what: &str,
    ) -> anyhow::Result<(Value, Vec<GraphqlError>)> {
        let body = serde_json::json!({ "query": query, "variables": variables });
        let answer = self.send(
            Method::POST,
            self.location.graphql.clone(),
            Some(&body),
            what,
        )?;
        #[derive(serde::Deserialize)]
        struct Envelope {
            #[serde(default)]
            data: Value,
            #[serde(default)]
            errors: Vec<GraphqlError>,
        }
        let envelope: Envelope = decode(GITHUB, &answer.body, what)?;
        Ok((envelope.data, envelope.errors))
    }

    /// The sentence for a 403: an App's token meets GitHub's rules for Apps, any other token
    /// lacks permissions.
    fn forbidden(&self, request: &Request, message: &str) -> anyhow::Error {
        let Request {
            method, url, what, ..
        } = request;
        let slug = self.location.slug();
        // A GitHub App's token (GITHUB_TOKEN in Actions) asked for something its permissions or
        // GitHub's rules for Apps do not allow.
        if message.contains("not accessible by integration") {
            return anyhow::anyhow!(
                "GitHub refused {what}: {method} {} answered 403 {message}: the token from {} is a GitHub App's (as GITHUB_TOKEN in Actions is), and an App may do this only with `contents: read` and `pull-requests: write` on {slug} (the workflow's `permissions:`), or not at all when GitHub does not enable the operation for Apps",
                url.path(),
                self.token.source
            );
        }
        anyhow::anyhow!(
            "GitHub refused {what}: {method} {} answered 403 {message}: the token from {} needs `contents: read` and `pull-requests: write` on {slug}",
            url.path(),
            self.token.source
        )
    }
}

/// GitHub's side of the shared retry loop: rate limits (403/429 with `retry-after` or an
/// exhausted `x-ratelimit-remaining`) wait as told, up to [`MAX_RATE_LIMIT_WAIT`] in all; GraphQL
/// queries, though POSTs, are repeated.
impl ForgeApi for Client {
    const NAME: &'static str = GITHUB;
    const API_VARIABLE: &'static str = "GITHUB_API_URL";
    /// Secondary limits met so far: each one waits twice the one before.
    type Limits = u32;

    fn authorize(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        request.bearer_auth(&self.token.value)
    }

    /// Anything but a POST, and a POST of a GraphQL query (not a mutation).
    fn repeatable(&self, request: &Request) -> bool {
        request.method != Method::POST
            || (request.url == self.location.graphql
                && request
                    .body
                    .and_then(|b| b["query"].as_str())
                    .is_some_and(|q| !q.trim_start().starts_with("mutation")))
    }

    fn rate_limit(&self, answer: &Answer, secondary_limits: &mut u32) -> Option<Duration> {
        Some(
            match rate_limit(answer.status, &answer.headers, &answer.body)? {
                RateLimit::Wait(wait) => wait,
                RateLimit::Secondary => {
                    *secondary_limits += 1;
                    secondary_wait().saturating_mul(1 << (*secondary_limits - 1).min(4))
                }
            },
        )
    }

    /// Up to [`MAX_RATE_LIMIT_WAIT`] in all, for one request.
    fn may_wait(&self, wait: Duration, waited: Duration) -> bool {
        waited + wait <= MAX_RATE_LIMIT_WAIT
    }

    fn rate_limited(&self, request: &Request, wait: Duration, waited: Duration) -> anyhow::Error {
        anyhow::anyhow!(
            "GitHub's rate limit stops {} ({} {}) for {} more, after {} of waiting: try again then (a token with a higher limit, such as a GitHub App's, also helps)",
            request.what,
            request.method,
            request.url.path(),
            crate::text::duration_short(wait),
            crate::text::duration_short(waited)
        )
    }

    fn transport(&self) -> &Transport {
        &self.transport
    }

    /// Every address is built from the location's REST or GraphQL base (which may be two
    /// origins); this holds it there whatever builds one later, so the token never leaves them.
    fn admit(&self, url: &Url, what: &str) -> anyhow::Result<()> {
        admit_origin(
            url,
            &[&self.location.api, &self.location.graphql],
            Self::NAME,
            what,
        )
    }

    /// One sentence for a refused request, kept with its status (a 422 is decided on).
    fn refused(&self, request: &Request, answer: &Answer) -> anyhow::Error {
        let status = answer.status;
        let message = crate::text::printable_line(&message_of(&answer.body));
        let what = request.what;
        let sentence = match status {
            StatusCode::UNAUTHORIZED => anyhow::anyhow!(
                "GitHub rejected the token from {} ({} {message}): {}",
                self.token.source,
                status.as_u16(),
                self.token.fix()
            ),
            StatusCode::FORBIDDEN => self.forbidden(request, &message),
            StatusCode::NOT_FOUND => anyhow::anyhow!(
                "GitHub has no {what} in {} (404): check the pull request number and the repository (GITHUB_REPOSITORY); a private repository also answers 404 to a token that cannot read it",
                self.location.slug()
            ),
            _ => anyhow::anyhow!("GitHub refused {what} ({} {message})", status.as_u16()),
        };
        anyhow::Error::new(StatusError {
            status: status.as_u16(),
            sentence: sentence.to_string(),
        })
    }
}

/// GitHub's error message: `message`, with the `errors` it lists (strings or objects with a
/// `message`); the start of the body when it is not JSON.
fn message_of(body: &[u8]) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| {
            let mut m = v["message"].as_str()?.to_string();
            if let Some(errors) = v["errors"].as_array() {
                let details: Vec<String> = errors
                    .iter()
                    .filter_map(|e| {
                        e.as_str()
                            .map(str::to_string)
                            .or_else(|| e["message"].as_str().map(str::to_string))
                    })
                    .collect();
                if !details.is_empty() {
                    m = format!("{m}: {}", details.join("; "));
                }
            }
            Some(m)
        })
        .unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned())
}

/// A refused request that GitHub said was rate-limited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RateLimit {
    /// Wait this long, as a header said.
    Wait(Duration),
    /// A secondary rate limit with no header saying how long.
    Secondary,
}

/// Whether GitHub rate-limited the request (403 or 429, or a GraphQL answer whose error is
/// `RATE_LIMITED`, which comes as a 200): `retry-after` says how long; an exhausted
/// `x-ratelimit-remaining` waits for `x-ratelimit-reset`; a body that says "secondary rate
/// limit" (or any 429) with neither is a secondary limit.
fn rate_limit(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Option<RateLimit> {
    if status.is_success() {
        return graphql_rate_limited(body).then(|| RateLimit::Wait(reset_wait(headers)));
    }
    if status != StatusCode::TOO_MANY_REQUESTS && status != StatusCode::FORBIDDEN {
        return None;
    }
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(secs) = header("retry-after").and_then(|v| v.parse::<u64>().ok()) {
        return Some(RateLimit::Wait(Duration::from_secs(secs)));
    }
    if header("x-ratelimit-remaining") == Some("0")
        && let Some(reset) = header("x-ratelimit-reset").and_then(|v| v.parse::<i64>().ok())
    {
        return Some(RateLimit::Wait(crate::forge::http::until_reset(reset)));
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(4096)]).to_ascii_lowercase();
    if status == StatusCode::TOO_MANY_REQUESTS || text.contains("rate limit") {
        return Some(RateLimit::Secondary);
    }
    None
}

/// Whether a GraphQL answer is the GraphQL API's rate limit: a top-level error of type
/// `RATE_LIMITED`. The body is parsed only when it holds those words at all.
fn graphql_rate_limited(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Errors {
        #[serde(default)]
        errors: Vec<TypedError>,
    }
    #[derive(serde::Deserialize)]
    struct TypedError {
        #[serde(default, rename = "type")]
        kind: Option<String>,
    }
    body.windows(12).any(|w| w == b"RATE_LIMITED")
        && serde_json::from_slice::<Errors>(body).is_ok_and(|e| {
            e.errors
                .iter()
                .any(|e| e.kind.as_deref() == Some("RATE_LIMITED"))
        })
}

/// The wait `x-ratelimit-reset` names, else a minute.
fn reset_wait(headers: &HeaderMap) -> Duration {
    headers
        .get("x-ratelimit-reset")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok())
        .map_or(SECONDARY_LIMIT_WAIT, crate::forge::http::until_reset)
}

/// The first wait for a secondary limit that names none: a minute, or what
/// `DEEP_REVIEW_GITHUB_SECONDARY_WAIT` says.
fn secondary_wait() -> Duration {
    std::env::var(SECONDARY_WAIT_VARIABLE)
        .ok()
        .and_then(|v| humantime::parse_duration(v.trim()).ok())
        .unwrap_or(SECONDARY_LIMIT_WAIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The token goes to the REST and GraphQL origins the location names, and nowhere else,
    /// whatever builds an address (a `Link` header, a field of an answer).
    #[test]
    fn requests_off_the_api_origins_are_not_sent() {
        let location = Location {
            owner: "o".into(),
            name: "r".into(),
            api: Url::parse("https://ghe.example.com/api/v3").unwrap(),
            graphql: Url::parse("https://ghe.example.com/api/graphql").unwrap(),
            host: "ghe.example.com".into(),
            general: false,
        };
        let token = Token {
            value: "ghs_x".into(),
            source: "GITHUB_TOKEN",
        };
        let client = Client::new(location, token).unwrap();
        let at = |u: &str| client.admit(&Url::parse(u).unwrap(), "a request");
        assert!(at("https://ghe.example.com/api/v3/repos/o/r/pulls/1").is_ok());
        assert!(at("https://ghe.example.com/api/graphql").is_ok());
        let refused = at("https://evil.example.net/api/v3/x")
            .unwrap_err()
            .to_string();
        assert!(refused.contains("https://evil.example.net"), "{refused}");
        assert!(at("http://ghe.example.com/api/v3/x").is_err());
        assert!(at("https://ghe.example.com:8443/api/v3/x").is_err());
    }

    #[test]
    fn rate_limits_say_how_long_to_wait() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(
            rate_limit(StatusCode::TOO_MANY_REQUESTS, &headers, b""),
            Some(RateLimit::Wait(Duration::from_secs(7)))
        );
        let mut headers = HeaderMap::new();
        headers.insert("x-ratelimit-remaining", HeaderValue::from_static("0"));
        let reset = (chrono::Utc::now().timestamp() + 30).to_string();
        headers.insert("x-ratelimit-reset", HeaderValue::from_str(&reset).unwrap());
        let Some(RateLimit::Wait(wait)) = rate_limit(StatusCode::FORBIDDEN, &headers, b"") else {
            panic!("a primary limit waits for its reset");
        };
        assert!((29..=32).contains(&wait.as_secs()), "{wait:?}");
        assert_eq!(
            rate_limit(
                StatusCode::FORBIDDEN,
                &HeaderMap::new(),
                b"{\"message\":\"You have exceeded a secondary rate limit.\"}"
            ),
            Some(RateLimit::Secondary)
        );
        // A 403 that is not a rate limit is a permission error: no wait.
        assert_eq!(
            rate_limit(
                StatusCode::FORBIDDEN,
                &HeaderMap::new(),
                b"{\"message\":\"Resource not accessible by integration\"}"
            ),
            None
        );
        assert_eq!(
            rate_limit(StatusCode::BAD_GATEWAY, &HeaderMap::new(), b""),
            None
        );
    }
}
