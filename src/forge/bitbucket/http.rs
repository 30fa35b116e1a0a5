//! The HTTP side of the Bitbucket forge: API 2.0 requests with the credentials in the
//! `Authorization` header, sent to the API's own origin only (a redirect is followed only
//! there: Bitbucket answers a pull request's diff and diffstat with a redirect to the
//! repository's), pages followed by the `next` address of Bitbucket's page object, also on the
//! API's origin only, Bitbucket's 429s, and its sentences for a refusal. Retries and bounded
//! answers are the shared [`crate::forge::http`]'s.

use std::time::Duration;

use anyhow::Context;
use reqwest::{Method, StatusCode, Url};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::location::{Credentials, Location, Token};
pub use crate::forge::http::transport::ForgeApi;
use crate::forge::http::transport::{Answer, Request, Transport};
use crate::forge::http::{admit_origin, decode, redirect_refused, same_origin};

/// The server, as messages name it.
const BITBUCKET: &str = "Bitbucket";
/// The longest single wait for a rate limit before giving up with a time to come back.
const MAX_RATE_LIMIT_WAIT: Duration = Duration::from_secs(90);
/// The longest a request waits for rate limits in all, so a run keeps to its deadline.
const MAX_RATE_LIMIT_TOTAL: Duration = Duration::from_secs(300);
/// A 429 that says nothing about when to come back.
const DEFAULT_RATE_LIMIT_WAIT: Duration = Duration::from_secs(30);
/// Items asked for per page (Bitbucket's most for pull request lists).
pub const PAGE_LEN: usize = 50;
/// Redirects followed at most (on the API's origin only).
const MAX_REDIRECTS: usize = 5;

/// A request Bitbucket refused, with its status: what callers decide on (a 400 on an inline
/// comment moves the finding to the summary; a 403 on resolving a comment is "may not").
#[derive(Debug, thiserror::Error)]
#[error("{sentence}")]
pub struct Refused {
    pub status: StatusCode,
    /// Bitbucket's own message, in one line.
    pub message: String,
    sentence: String,
}

/// The status of a refused request, when `err` is one.
pub fn refused_status(err: &anyhow::Error) -> Option<StatusCode> {
    err.downcast_ref::<Refused>().map(|r| r.status)
}

/// A Bitbucket page: `values` and the address of the next page, if any.
#[derive(Deserialize)]
struct Page<T> {
    #[serde(default = "Vec::new")]
    values: Vec<T>,
    #[serde(default)]
    next: Option<String>,
}

/// A Bitbucket API client for one repository.
pub struct Client {
    transport: Transport,
    pub location: Location,
    token: Token,
}

impl Client {
    pub fn new(location: Location, token: Token) -> anyhow::Result<Client> {
        let api = location.api.clone();
        let transport = Transport::new(BITBUCKET, move |builder| {
            builder.redirect(reqwest::redirect::Policy::custom(move |attempt| {
                if attempt.previous().len() < MAX_REDIRECTS && same_origin(attempt.url(), &api) {
                    attempt.follow()
                } else {
                    attempt.stop()
                }
            }))
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
        Url::parse(&text).with_context(|| format!("cannot make a Bitbucket API address of {text}"))
    }

    /// `<api>/repositories/<workspace>/<repo_slug>/<rest>` (both names checked plain).
    pub fn repo_url(&self, rest: &str) -> anyhow::Result<Url> {
        self.api_url(&format!(
            "repositories/{}/{}/{}",
            self.location.workspace,
            self.location.repo_slug,
            rest.trim_start_matches('/')
        ))
    }

    /// GET the pages of a list from `url` on, at most `max_pages`, following each page's
    /// `next` on the API's own origin only. `true` when pages were left unread.
    pub fn get_all<T: DeserializeOwned>(
        &self,
        mut url: Url,
        what: &str,
        max_pages: usize,
    ) -> anyhow::Result<(Vec<T>, bool)> {
        url.query_pairs_mut()
            .append_pair("pagelen", &PAGE_LEN.to_string());
        let mut items = Vec::new();
        for _ in 0..max_pages {
            let page: Page<T> = self.get(url, what)?;
            items.extend(page.values);
            match page.next.as_deref().map(|n| self.next_page(n, what)) {
                Some(next) => url = next?,
                None => return Ok((items, false)),
            }
        }
        Ok((items, true))
    }

    /// A page's `next`, when it is on the API's own origin. Elsewhere is an error, not the end
    /// of the list: the credentials are not sent there, and a list cut short would pass for
    /// a whole one.
    fn next_page(&self, next: &str, what: &str) -> anyhow::Result<Url> {
        let url = Url::parse(next).map_err(|e| {
            anyhow::anyhow!(
                "Bitbucket's next page of {what} is not an address ({e}): `{}`",
                crate::text::printable_line(next)
            )
        })?;
        if !same_origin(&url, &self.location.api) {
            anyhow::bail!(
                "Bitbucket sent the next page of {what} to another host ({}): not followed, the token is not sent there",
                url.host_str().unwrap_or("?")
            );
        }
        Ok(url)
    }

    /// GET `url` as text (a diff).
    pub fn get_text(&self, url: Url, what: &str) -> anyhow::Result<String> {
        let answer = self.send(Method::GET, url, None, what)?;
        Ok(String::from_utf8_lossy(&answer.body).into_owned())
    }

    /// One sentence for a refused request.
    fn status_error(&self, status: StatusCode, body: &[u8], what: &str) -> Refused {
        let (message, scopes) = message_of(body);
        let repository = crate::text::printable_line(&self.location.full_name());
        let source = self.token.source;
        let code = status.as_u16();
        let needs = if scopes.is_empty() {
            "pullrequest:write to post comments, repository:write for the Code Insights report, pullrequest to read".to_string()
        } else {
            scopes.join(", ")
        };
        let sentence = match status {
            StatusCode::UNAUTHORIZED => format!(
                "Bitbucket rejected the credentials from {source} ({code} {message}): set BITBUCKET_ACCESS_TOKEN to a valid access token"
            ),
            StatusCode::FORBIDDEN if !scopes.is_empty() || message.contains("scope") => format!(
                "Bitbucket refused {what} ({code} {message}): the token from {source} needs the scope {needs} on {repository}"
            ),
            StatusCode::NOT_FOUND => format!(
                "Bitbucket has no {what} in repository {repository} (404, from {}): check the pull request number and the repository; a private repository also answers 404 to a token that cannot read it",
                self.location.from
            ),
            _ => format!("Bitbucket refused {what} ({code} {message})"),
        };
        Refused {
            status,
            message,
            sentence,
        }
    }
}

/// Bitbucket's side of the shared retry loop: requests go to the API's own origin only, and a
/// 429 waits what `Retry-After` says (half a minute when it says nothing), up to
/// [`MAX_RATE_LIMIT_WAIT`] each time and [`MAX_RATE_LIMIT_TOTAL`] in all.
impl ForgeApi for Client {
    const NAME: &'static str = BITBUCKET;
    const API_VARIABLE: &'static str = "BITBUCKET_API_URL";
    type Limits = ();

    fn authorize(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token.credentials {
            Credentials::Bearer(token) => request.bearer_auth(token),
            Credentials::Basic { user, secret } => request.basic_auth(user, Some(secret)),
        }
    }

    /// Anything but a POST.
    fn repeatable(&self, request: &Request) -> bool {
        request.method != Method::POST
    }

    fn rate_limit(&self, answer: &Answer, _: &mut ()) -> Option<Duration> {
        (answer.status == StatusCode::TOO_MANY_REQUESTS).then(|| {
            answer
                .headers
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map_or(DEFAULT_RATE_LIMIT_WAIT, Duration::from_secs)
        })
    }

    fn may_wait(&self, wait: Duration, waited: Duration) -> bool {
        wait <= MAX_RATE_LIMIT_WAIT && waited + wait <= MAX_RATE_LIMIT_TOTAL
    }

    fn rate_limited(&self, request: &Request, wait: Duration, _waited: Duration) -> anyhow::Error {
        anyhow::anyhow!(
            "Bitbucket's rate limit stops {} for {} more: try again then",
            request.what,
            crate::text::duration_short(wait)
        )
    }

    fn transport(&self) -> &Transport {
        &self.transport
    }

    /// The API's own origin only: no other gets the credentials.
    fn admit(&self, url: &Url, what: &str) -> anyhow::Result<()> {
        admit_origin(url, &[&self.location.api], Self::NAME, what)
    }

    /// A redirect elsewhere is refused (the credentials are not carried along); any other
    /// refusal keeps its status, which callers decide on.
    fn refused(&self, request: &Request, answer: &Answer) -> anyhow::Error {
        let what = request.what;
        if let Some(refused) = redirect_refused(answer, Self::NAME, what, Self::API_VARIABLE) {
            return refused;
        }
        self.status_error(answer.status, &answer.body, what).into()
    }
}

/// Decodes `body` as `T`, naming Bitbucket in the error.
pub fn decode_as<T: DeserializeOwned>(body: &[u8], what: &str) -> anyhow::Result<T> {
    decode(BITBUCKET, body, what)
}

/// Bitbucket's error message in one line, and the scopes it says were needed:
/// `{"type": "error", "error": {"message": "...", "detail": {"required": [...]}}}`, or the
/// Code Insights service's `{"key": "...", "message": "..."}`.
fn message_of(body: &[u8]) -> (String, Vec<String>) {
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        let text = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
        return (crate::text::printable_line(&text), Vec::new());
    };
    let error = if v["error"].is_object() {
        &v["error"]
    } else {
        &v
    };
    let message = match &error["message"] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let scopes = error["detail"]["required"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .filter(|s| {
                    s.len() <= 40
                        && s.chars()
                            .all(|c| c.is_ascii_alphanumeric() || ":_-".contains(c))
                })
                .map(str::to_string)
                .take(5)
                .collect()
        })
        .unwrap_or_default();
    (crate::text::printable_line(&message), scopes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_scopes_in_every_shape_bitbucket_sends() {
        let (m, scopes) = message_of(
            br#"{"type":"error","error":{"message":"Your credentials lack one or more required privilege scopes.","detail":{"granted":["pullrequest"],"required":["pullrequest:write"]}}}"#,
        );
        assert_eq!(
            m,
            "Your credentials lack one or more required privilege scopes."
        );
        assert_eq!(scopes, vec!["pullrequest:write".to_string()]);
        let (m, scopes) = message_of(
            br#"{"key":"report-service.general.bad-request","message":"The summary field cannot contain more than 450 characters.","arguments":{}}"#,
        );
        assert!(m.starts_with("The summary field"), "{m}");
        assert!(scopes.is_empty());
        assert_eq!(message_of(b"oops").0, "oops");
    }
}
