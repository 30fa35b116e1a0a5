//! Where the GitHub API is and who deep-review is there: the repository, the REST and GraphQL
//! addresses and the token, from the environment GitHub Actions sets (and users can set), the
//! target's URL, the `origin` remote and `gh`.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::Url;

use crate::forge::http::api_url;
use crate::forge::{PrRef, origin_web, plain_name};

pub const DEFAULT_API: &str = "https://api.github.com";
pub const DEFAULT_GRAPHQL: &str = "https://api.github.com/graphql";

/// The one sentence a missing token gives: it names the variable to set.
#[derive(Debug, thiserror::Error)]
pub enum MissingToken {
    #[error(
        "no GitHub token: set GITHUB_TOKEN to a token that can read the pull request (GH_TOKEN, or a `gh auth login`, also work)"
    )]
    GitHub,
    /// A host other than GitHub.com's API or `GITHUB_API_URL`'s: its own variable.
    #[error(
        "no token for {0}: set GH_ENTERPRISE_TOKEN to a token of that host (GITHUB_TOKEN and GH_TOKEN are sent only to api.github.com or GITHUB_API_URL's host)"
    )]
    Enterprise(String),
    /// A GitHub Enterprise Cloud host (`TENANT.ghe.com`) that `GH_HOST` does not name.
    #[error(
        "no token for {0}: set GH_HOST={0} and GH_TOKEN to a token of that host (GITHUB_TOKEN and GH_TOKEN go to a ghe.com host only when GH_HOST or GITHUB_API_URL names it)"
    )]
    Tenancy(String),
}

/// The variables that hold a token for GitHub.com's API or `GITHUB_API_URL`'s host.
const GENERAL_TOKENS: [&str; 2] = ["GITHUB_TOKEN", "GH_TOKEN"];
/// The variables that hold a token for any other host, as `gh` reads them.
const ENTERPRISE_TOKENS: [&str; 2] = ["GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"];

/// A token and where it came from, so that an error can name the variable to fix.
#[derive(Clone)]
pub struct Token {
    pub value: String,
    /// `GITHUB_TOKEN`, `GH_TOKEN` or `gh auth token`.
    pub source: &'static str,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Token(*** from {})", self.source)
    }
}

impl Token {
    /// What to do when GitHub rejects this token, as the end of a sentence.
    pub fn fix(&self) -> &'static str {
        match self.source {
            "GH_TOKEN" => "set GH_TOKEN (or GITHUB_TOKEN) to a valid token",
            "GH_ENTERPRISE_TOKEN" | "GITHUB_ENTERPRISE_TOKEN" => {
                "set GH_ENTERPRISE_TOKEN to a valid token of that host"
            }
            "gh auth token" => "run `gh auth login` again, or set GITHUB_TOKEN to a valid token",
            _ => "set GITHUB_TOKEN to a valid token",
        }
    }
}

/// A repository on a GitHub host and the API that serves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub owner: String,
    pub name: String,
    /// The REST base (`https://api.github.com`, `https://ghe.example.com/api/v3`).
    pub api: Url,
    pub graphql: Url,
    /// The web host (`github.com`): what `gh auth token --hostname` takes.
    pub host: String,
    /// The API is GitHub.com's, the one `GITHUB_API_URL` names, or a ghe.com tenant's that
    /// `GH_HOST` names: `GITHUB_TOKEN` and `GH_TOKEN` may go there. A GitHub Enterprise Server
    /// gets only its own token (`GH_ENTERPRISE_TOKEN`), another tenant none from the environment.
    pub general: bool,
}

impl Location {
    /// `owner/name`.
    pub fn slug(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

/// Finds the repository of `pr`: the reference's own, else `GITHUB_REPOSITORY`, else the
/// `origin` remote of `repo`. The API is `GITHUB_API_URL` / `GITHUB_GRAPHQL_URL` when set and the
/// host is theirs (`GITHUB_SERVER_URL`'s, github.com by default), else GitHub.com's, else (for
/// another host) that host's own API: GitHub Enterprise Cloud's `api.TENANT.ghe.com`, GitHub
/// Enterprise Server's `/api/v3` and `/api/graphql`.
pub fn locate(repo: &Path, pr: &PrRef) -> anyhow::Result<Location> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    locate_with(pr, origin_web(repo), &env)
}

/// [`locate`] with the `origin` remote's web host and path and the environment given.
///
/// The host, as `gh` finds it: the reference's, else `origin`'s (when the repository is
/// `origin`'s), else `GH_HOST` ("the GitHub hostname for commands where a hostname has not been
/// provided, or cannot be inferred from the context of a local Git repository", gh's
/// environment help), else `GITHUB_SERVER_URL`'s, else github.com.
fn locate_with(
    pr: &PrRef,
    origin: Option<(String, String)>,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<Location> {
    let origin_parts = origin.filter(|(_, path)| {
        path.split_once('/')
            .is_some_and(|(owner, name)| plain_name(owner) && plain_name(name))
    });
    let (slug, from) = if let Some(slug) = &pr.repository {
        (slug.clone(), "the pull request's address")
    } else if let Some(slug) = env("GITHUB_REPOSITORY") {
        (slug, "GITHUB_REPOSITORY")
    } else if let Some((_, slug)) = &origin_parts {
        (slug.clone(), "the `origin` remote")
    } else {
        anyhow::bail!(
            "cannot tell which GitHub repository pull request #{} is in: set GITHUB_REPOSITORY=owner/name, or give the pull request's address (https://github.com/owner/name/pull/{})",
            pr.number,
            pr.number
        );
    };
    let (owner, name) = slug
        .split_once('/')
        .filter(|(o, n)| plain_name(o) && plain_name(n))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "`{}` (from {from}) is not a GitHub repository: it should read owner/name",
                crate::text::printable_line(&slug)
            )
        })?;
    let gh_host = env("GH_HOST").and_then(|h| host_of(&h));
    // The host `GITHUB_API_URL` serves: GitHub Actions sets `GITHUB_SERVER_URL` beside it.
    let server = env("GITHUB_SERVER_URL")
        .and_then(|url| Url::parse(url.trim()).ok())
        .and_then(|url| url.host_str().map(str::to_ascii_lowercase))
        .unwrap_or_else(|| "github.com".to_string());
    let host = pr
        .host
        .clone()
        .or_else(|| {
            // The origin's host, when the repository is the origin's.
            origin_parts
                .as_ref()
                .filter(|(_, s)| s.eq_ignore_ascii_case(&slug))
                .map(|(h, _)| h.clone())
        })
        .or_else(|| gh_host.clone())
        .unwrap_or_else(|| server.clone());
    let configured = env("GITHUB_API_URL").filter(|_| host == server);
    let api_text = configured.clone().unwrap_or_else(|| api_of_host(&host));
    let api = api_url(&api_text, "GITHUB_API_URL", DEFAULT_API)?;
    let graphql_text = env("GITHUB_GRAPHQL_URL")
        .filter(|_| configured.is_some())
        .unwrap_or_else(|| graphql_for(&api_text));
    let graphql = api_url(&graphql_text, "GITHUB_GRAPHQL_URL", DEFAULT_API)?;
    // GH_TOKEN and GITHUB_TOKEN are github.com's, and (as gh reads them) a ghe.com tenant's:
    // that tenant's only when GH_HOST names it, so that an address or an `origin` on some
    // tenant does not take a github.com token there.
    let named_tenancy = is_tenancy(&host) && gh_host.as_deref() == Some(host.as_str());
    let general = configured.is_some() || api.host_str() == Some("api.github.com") || named_tenancy;
    Ok(Location {
        owner: owner.to_string(),
        name: name.to_string(),
        api,
        graphql,
        host,
        general,
    })
}

/// A host as `GH_HOST` may give it (`ghe.example.com`, `https://ghe.example.com/`), lowercased,
/// its port kept; `None` when it is not a host.
fn host_of(text: &str) -> Option<String> {
    let text = text.trim();
    let rest = text.split_once("://").map_or(text, |(_, rest)| rest);
    let host = rest.split('/').next()?.to_ascii_lowercase();
    let plain = !host.is_empty()
        && host.len() <= 255
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-:".contains(c));
    plain.then_some(host)
}

/// A GitHub Enterprise Cloud host with data residency, `TENANT.ghe.com`: its API is at
/// `api.TENANT.ghe.com` (GitHub's docs, "Network details for GHE.com"), and gh sends it GH_TOKEN
/// as it does github.com (go-gh's `auth.IsTenancy`).
fn is_tenancy(host: &str) -> bool {
    host.strip_suffix(".ghe.com")
        .is_some_and(|tenant| !tenant.is_empty() && !tenant.contains('.'))
}

/// The REST base of a web host: GitHub.com's, a ghe.com tenant's `api.TENANT.ghe.com`, or
/// GitHub Enterprise Server's `/api/v3` (over plain http only for a server on this machine).
fn api_of_host(host: &str) -> String {
    if host == "github.com" {
        return DEFAULT_API.to_string();
    }
    if is_tenancy(host) {
        return format!("https://api.{host}");
    }
    let bare = host.rsplit_once(':').map_or(host, |(h, _)| h);
    let scheme = if matches!(bare, "127.0.0.1" | "localhost") {
        "http"
    } else {
        "https"
    };
    format!("{scheme}://{host}/api/v3")
}

/// The GraphQL address that goes with a REST base: GitHub.com's and a ghe.com tenant's
/// `/graphql`, GitHub Enterprise Server's `/api/graphql` beside `/api/v3`.
fn graphql_for(api: &str) -> String {
    let api = api.trim_end_matches('/');
    if api == DEFAULT_API {
        DEFAULT_GRAPHQL.to_string()
    } else if let Some(base) = api.strip_suffix("/api/v3") {
        format!("{base}/api/graphql")
    } else {
        format!("{api}/graphql")
    }
}

/// The token for `location`: `GITHUB_TOKEN`, `GH_TOKEN` for GitHub.com's API or
/// `GITHUB_API_URL`'s; `GH_ENTERPRISE_TOKEN`, `GITHUB_ENTERPRISE_TOKEN` for any other host (a
/// token is sent only where it belongs: an `origin` or a pull request address on another host
/// never gets the GitHub.com token); else what `gh auth token` prints for the host.
pub fn token(location: &Location) -> Result<Token, MissingToken> {
    for &source in token_variables(location) {
        if let Ok(value) = std::env::var(source)
            && !value.trim().is_empty()
        {
            return Ok(Token {
                value: value.trim().to_string(),
                source,
            });
        }
    }
    gh_auth_token(&location.host)
        .map(|value| Token {
            value,
            source: "gh auth token",
        })
        .ok_or_else(|| {
            if location.general {
                MissingToken::GitHub
            } else if is_tenancy(&location.host) {
                MissingToken::Tenancy(location.host.clone())
            } else {
                MissingToken::Enterprise(location.host.clone())
            }
        })
}

/// The variables whose token may go to `location`'s API.
fn token_variables(location: &Location) -> &'static [&'static str] {
    if location.general {
        &GENERAL_TOKENS
    } else if is_tenancy(&location.host) {
        // Not GitHub Enterprise Server's variables either: gh never sends those to a tenant.
        &[]
    } else {
        &ENTERPRISE_TOKENS
    }
}

/// `gh auth token --hostname HOST`, when `gh` is installed and logged in; given 10 seconds
/// (a keyring that waits for a password must not hang the review).
fn gh_auth_token(host: &str) -> Option<String> {
    let program = which::which("gh").ok()?;
    let mut child = Command::new(program)
        .args(["auth", "token", "--hostname", host])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let mut out = String::new();
    child
        .stdout
        .take()?
        .take(4096)
        .read_to_string(&mut out)
        .ok()?;
    let token = out.trim();
    (!token.is_empty() && !token.contains(char::is_whitespace)).then(|| token.to_string())
}

#[cfg(test)]
#[path = "location_tests.rs"]
mod tests;
