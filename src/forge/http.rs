//! What the forges' HTTP clients share: the retry loop ([`transport`]), bounded pagination
//! ([`pages`]), the TLS provider, reading and decoding a bounded body, the `Link` header's next
//! page, and the small rules about where a token may go. Each forge's client
//! ([`super::github::http`], [`super::gitlab::http`]) keeps what differs: how its token travels,
//! how it signals rate limits and refusals, and its own sentences.

pub mod pages;
pub mod transport;

use std::sync::Once;
use std::time::Duration;

use anyhow::Context;
use reqwest::Url;
use reqwest::header::HeaderMap;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The largest response read, so a broken or hostile server cannot exhaust memory.
pub const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;

/// Installs rustls's `ring` provider for the process, once (reqwest is built with
/// `rustls-no-provider`: `ring` builds much faster than the default aws-lc-rs).
pub fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err means a provider is installed already, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The wait until a rate limit's reset time (Unix seconds) has passed, a second to spare.
pub fn until_reset(reset: i64) -> Duration {
    let now = chrono::Utc::now().timestamp();
    Duration::from_secs(u64::try_from(reset.saturating_sub(now)).unwrap_or(0) + 1)
}

/// 1, 2, 4, 8 s: the wait before retry `attempt` (1-based) of a server error.
pub fn backoff(attempt: u32) -> Duration {
    Duration::from_secs(1u64 << (attempt - 1).min(3))
}

/// The body, at most [`MAX_RESPONSE_BYTES`]; `forge` names the server in the errors.
pub async fn read_limited(
    mut response: reqwest::Response,
    forge: &str,
    what: &str,
) -> anyhow::Result<Vec<u8>> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .with_context(|| format!("the connection to {forge} broke while reading {what}"))?
    {
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            anyhow::bail!(
                "{forge}'s answer for {what} is larger than {} MB: not read",
                MAX_RESPONSE_BYTES / (1024 * 1024)
            );
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// `body` as `T`; `forge` names the server in the error.
pub fn decode<T: DeserializeOwned>(forge: &str, body: &[u8], what: &str) -> anyhow::Result<T> {
    serde_json::from_slice(body).map_err(|e| {
        anyhow::anyhow!("{forge}'s answer for {what} is not what its API documents ({e})")
    })
}

/// `body` as JSON, `Null` when it is empty (a 204, or a write that answers nothing).
pub fn decode_or_null(forge: &str, body: &[u8], what: &str) -> anyhow::Result<Value> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    decode(forge, body, what)
}

/// The `rel="next"` address of a `Link` header.
pub fn next_page(headers: &HeaderMap) -> Option<Url> {
    let link = headers.get("link")?.to_str().ok()?;
    link.split(',').find_map(|part| {
        let (target, params) = part.split_once(';')?;
        let rel_next = params
            .split(';')
            .any(|p| p.trim().replace(' ', "") == "rel=\"next\"");
        let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
        rel_next.then(|| Url::parse(target).ok()).flatten()
    })
}

/// Same scheme, host and port: where a token already goes may get it again.
pub fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// Refuses `url` unless it is at the origin of one of `apis` (the forge's REST base first): a
/// forge's token goes to its own API alone, whatever builds an address later.
pub fn admit_origin(url: &Url, apis: &[&Url], forge: &str, what: &str) -> anyhow::Result<()> {
    if apis.iter().any(|api| same_origin(url, api)) {
        return Ok(());
    }
    let api = apis
        .first()
        .map_or_else(|| "?".to_string(), |api| origin_of(api));
    anyhow::bail!(
        "{what} would go to {}, not the {forge} API at {api}: not sent",
        origin_of(url)
    )
}

/// A redirect answer, refused in one sentence: the token is not carried to wherever it points,
/// and `setting` names what gives the API's own address. `None` for any other answer.
pub fn redirect_refused(
    answer: &transport::Answer,
    forge: &str,
    what: &str,
    setting: &str,
) -> Option<anyhow::Error> {
    if !answer.status.is_redirection() {
        return None;
    }
    let to = answer
        .headers
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("?");
    Some(anyhow::anyhow!(
        "{forge} answered {what} with a redirect to {} ({}): not followed with the token; set {setting} to the API's own address",
        crate::text::printable_line(to),
        answer.status.as_u16()
    ))
}

/// `scheme://host[:port]`, for messages.
pub fn origin_of(url: &Url) -> String {
    match url.port() {
        Some(port) => format!(
            "{}://{}:{port}",
            url.scheme(),
            url.host_str().unwrap_or("?")
        ),
        None => format!("{}://{}", url.scheme(), url.host_str().unwrap_or("?")),
    }
}

/// An error with its causes, in one line (reqwest's own message alone says little).
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut parts = vec![err.to_string()];
    let mut source = err.source();
    while let Some(e) = source {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = e.source();
    }
    parts.join(": ")
}

/// An API address a token may be sent to: `https:`, or plain `http:` on this machine only (a
/// token sent in clear over a network is a token given away). `variable` names where it came
/// from, `example` is what it should look like.
pub fn api_url(text: &str, variable: &str, example: &str) -> anyhow::Result<Url> {
    let url = Url::parse(text.trim()).map_err(|e| {
        anyhow::anyhow!(
            "{variable} is not an address ({e}): set it to the API's address, such as {example}"
        )
    })?;
    let local = matches!(
        url.host_str(),
        Some("127.0.0.1" | "localhost" | "[::1]" | "::1")
    );
    match url.scheme() {
        "https" => Ok(url),
        "http" if local => Ok(url),
        _ => anyhow::bail!(
            "{variable} must be an https address (it is {}): the token would travel in clear",
            crate::text::printable_line(text)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn the_next_page_comes_from_the_link_header() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "link",
            HeaderValue::from_static(
                "<https://api.github.com/x?page=1>; rel=\"prev\", <https://api.github.com/x?page=3>; rel=\"next\"",
            ),
        );
        assert_eq!(
            next_page(&headers).map(|u| u.to_string()),
            Some("https://api.github.com/x?page=3".to_string())
        );
        assert_eq!(next_page(&HeaderMap::new()), None);
    }

    #[test]
    fn tokens_travel_only_over_https_or_on_this_machine() {
        assert!(api_url("https://api.github.com", "X", "e").is_ok());
        assert!(api_url("http://127.0.0.1:8080", "X", "e").is_ok());
        let err = api_url("http://ghe.example.com/api/v3", "GITHUB_API_URL", "e").unwrap_err();
        assert!(err.to_string().contains("GITHUB_API_URL must be an https"));
        assert!(api_url("not a url", "X", "e").is_err());
    }
}
