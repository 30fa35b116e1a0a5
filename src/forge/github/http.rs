//! The HTTP side of the GitHub forge: REST and GraphQL requests with the token, bounded retries
//! on rate limits and server errors, bounded pagination and bounded response sizes.
//!
//! Calls block: the client runs its requests on its own small tokio runtime, so the rest of
//! deep-review (synchronous stages) calls it like any function. Never call it from inside an
//! async task.

use std::time::Duration;

use anyhow::Context;
use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::location::{Location, Token};
use crate::forge::http::{
    backoff, error_chain, install_crypto_provider, next_page, origin_of, read_limited, same_origin,
};

/// Attempts per request: the first and up to four retries.
const MAX_ATTEMPTS: u32 = 5;
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
    runtime: tokio::runtime::Runtime,
    http: reqwest::Client,
    pub location: Location,
    token: Token,
}

/// A response: status, headers and the body read whole (bounded).
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
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
        install_crypto_provider();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the runtime for GitHub requests")?;
        let mut headers = HeaderMap::new();
        headers.insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("application/vnd.github+json"),
        );
        headers.insert(
            "x-github-api-version",
            HeaderValue::from_static("2022-11-28"),
        );
        let http = reqwest::Client::builder()
            .user_agent(concat!("deep-review/", env!("CARGO_PKG_VERSION")))
            .default_headers(headers)
            .connect_timeout(Duration::from_secs(15))
            .timeout(Duration::from_secs(60))
            .build()
            .context("cannot set up the HTTP client for GitHub")?;
        Ok(Client {
            runtime,
            http,
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

    /// GET `url` as JSON.
    pub fn get<T: DeserializeOwned>(&self, url: Url, what: &str) -> anyhow::Result<T> {
        let answer = self.send(Method::GET, url, None, what)?;
        decode(&answer.body, what)
    }

    /// GET every page of a list (at most [`MAX_PAGES`]), following the `Link: rel="next"` header
    /// on the API's own host only. `true` when pages were left unread.
    pub fn get_all<T: DeserializeOwned>(
        &self,
        mut url: Url,
        what: &str,
    ) -> anyhow::Result<(Vec<T>, bool)> {
        url.query_pairs_mut().append_pair("per_page", "100");
        let mut items = Vec::new();
        for _ in 0..MAX_PAGES {
            let answer = self.send(Method::GET, url.clone(), None, what)?;
            let page: Vec<T> = decode(&answer.body, what)?;
            items.extend(page);
            match next_page(&answer.headers) {
                Some(next) if same_origin(&next, &self.location.api) => url = next,
                Some(next) => anyhow::bail!(
                    "GitHub sent the next page of {what} to another host ({}): not followed, the token is not sent there",
                    next.host_str().unwrap_or("?")
                ),
                None => return Ok((items, false)),
            }
        }
        Ok((items, true))
    }

    /// A request with a JSON body; returns the JSON answer (`Null` for an empty one).
    pub fn send_json(
        &self,
        method: Method,
        url: Url,
        body: &Value,
        what: &str,
    ) -> anyhow::Result<Value> {
        let answer = self.send(method, url, Some(body), what)?;
        if answer.body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Null);
        }
        decode(&answer.body, what)
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
        let envelope: Envelope = decode(&answer.body, what)?;
        Ok((envelope.data, envelope.errors))
    }

    /// One request with retries: rate limits (403/429 with `retry-after` or an exhausted
    /// `x-ratelimit-remaining`) wait as told, up to [`MAX_RATE_LIMIT_WAIT`]; server errors and
    /// network failures back off 1, 2, 4, 8 s, for requests that are safe to repeat (a POST
    /// that failed with a 502 may have been done: it is not sent twice, except GraphQL queries).
    pub fn send(
        &self,
        method: Method,
        url: Url,
        body: Option<&Value>,
        what: &str,
    ) -> anyhow::Result<Answer> {
        self.runtime
            .block_on(self.send_async(method, url, body, what))
    }

    async fn send_async(
        &self,
        method: Method,
        url: Url,
        body: Option<&Value>,
        what: &str,
    ) -> anyhow::Result<Answer> {
        let repeatable = method != Method::POST
            || (url == self.location.graphql
                && body
                    .and_then(|b| b["query"].as_str())
                    .is_some_and(|q| !q.trim_start().starts_with("mutation")));
        let mut attempt = 0;
        let mut waited = Duration::ZERO;
        let mut secondary_limits = 0;
        loop {
            attempt += 1;
            let mut request = self
                .http
                .request(method.clone(), url.clone())
                .bearer_auth(&self.token.value);
            if let Some(body) = body {
                request = request.json(body);
            }
            let response = match request.send().await {
                Ok(response) => response,
                Err(_) if repeatable && attempt < MAX_ATTEMPTS => {
                    tokio::time::sleep(backoff(attempt)).await;
                    continue;
                }
                Err(err) => {
                    anyhow::bail!(
                        "cannot reach GitHub for {what} at {} ({}): check GITHUB_API_URL and the network",
                        origin_of(&url),
                        error_chain(&err)
                    )
                }
            };
            let status = response.status();
            let headers = response.headers().clone();
            let body_bytes = read_limited(response, "GitHub", what).await?;
            if status.is_success() {
                return Ok(Answer {
                    status,
                    headers,
                    body: body_bytes,
                });
            }
            if let Some(limit) = rate_limit(status, &headers, &body_bytes) {
                let wait = match limit {
                    RateLimit::Wait(wait) => wait,
                    RateLimit::Secondary => {
                        secondary_limits += 1;
                        secondary_wait().saturating_mul(1 << (secondary_limits - 1).min(4))
                    }
                };
                if waited + wait <= MAX_RATE_LIMIT_WAIT && attempt < MAX_ATTEMPTS {
                    tokio::time::sleep(wait).await;
                    waited += wait;
                    continue;
                }
                anyhow::bail!(
                    "GitHub's rate limit stops {what} ({} {}) for {} more, after {} of waiting: try again then (a token with a higher limit, such as a GitHub App's, also helps)",
                    method,
                    url.path(),
                    crate::text::duration_short(wait),
                    crate::text::duration_short(waited)
                );
            }
            if status.is_server_error() && repeatable && attempt < MAX_ATTEMPTS {
                tokio::time::sleep(backoff(attempt)).await;
                continue;
            }
            return Err(self.status_error(status, &body_bytes, what, &method, &url));
        }
    }

    /// One sentence for a refused request.
    fn status_error(
        &self,
        status: StatusCode,
        body: &[u8],
        what: &str,
        method: &Method,
        url: &Url,
    ) -> anyhow::Error {
        let message = serde_json::from_slice::<Value>(body)
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
            .unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned());
        let message = crate::text::printable_line(&message);
        let slug = self.location.slug();
        let sentence = match status {
            StatusCode::UNAUTHORIZED => anyhow::anyhow!(
                "GitHub rejected the token from {} ({} {message}): {}",
                self.token.source,
                status.as_u16(),
                self.token.fix()
            ),
            // A GitHub App's token (GITHUB_TOKEN in Actions) asked for something its permissions
            // or GitHub's rules for Apps do not allow.
            StatusCode::FORBIDDEN if message.contains("not accessible by integration") => {
                anyhow::anyhow!(
                    "GitHub refused {what}: {method} {} answered 403 {message}: the token from {} is a GitHub App's (as GITHUB_TOKEN in Actions is), and an App may do this only with `contents: read` and `pull-requests: write` on {slug} (the workflow's `permissions:`), or not at all when GitHub does not enable the operation for Apps",
                    url.path(),
                    self.token.source
                )
            }
            StatusCode::FORBIDDEN => anyhow::anyhow!(
                "GitHub refused {what}: {method} {} answered 403 {message}: the token from {} needs `contents: read` and `pull-requests: write` on {slug}",
                url.path(),
                self.token.source
            ),
            StatusCode::NOT_FOUND => anyhow::anyhow!(
                "GitHub has no {what} in {slug} (404): check the pull request number and the repository (GITHUB_REPOSITORY); a private repository also answers 404 to a token that cannot read it"
            ),
            _ => anyhow::anyhow!("GitHub refused {what} ({} {message})", status.as_u16()),
        };
        anyhow::Error::new(StatusError {
            status: status.as_u16(),
            sentence: sentence.to_string(),
        })
    }
}

/// A refused request that GitHub said was rate-limited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RateLimit {
    /// Wait this long, as a header said.
    Wait(Duration),
    /// A secondary rate limit with no header saying how long.
    Secondary,
}

/// Whether GitHub rate-limited the request (403 or 429): `retry-after` says how long; an
/// exhausted `x-ratelimit-remaining` waits for `x-ratelimit-reset`; a body that says
/// "secondary rate limit" (or any 429) with neither is a secondary limit.
fn rate_limit(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Option<RateLimit> {
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
        let now = chrono::Utc::now().timestamp();
        return Some(RateLimit::Wait(Duration::from_secs(
            u64::try_from(reset.saturating_sub(now)).unwrap_or(0) + 1,
        )));
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(4096)]).to_ascii_lowercase();
    if status == StatusCode::TOO_MANY_REQUESTS || text.contains("rate limit") {
        return Some(RateLimit::Secondary);
    }
    None
}

/// The first wait for a secondary limit that names none: a minute, or what
/// `DEEP_REVIEW_GITHUB_SECONDARY_WAIT` says.
fn secondary_wait() -> Duration {
    std::env::var(SECONDARY_WAIT_VARIABLE)
        .ok()
        .and_then(|v| humantime::parse_duration(v.trim()).ok())
        .unwrap_or(SECONDARY_LIMIT_WAIT)
}

fn decode<T: DeserializeOwned>(body: &[u8], what: &str) -> anyhow::Result<T> {
    serde_json::from_slice(body).map_err(|e| {
        anyhow::anyhow!("GitHub's answer for {what} is not what its API documents ({e})")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
