//! Where the Bitbucket Cloud API is and who deep-review is there: the workspace and repository,
//! the API address and the credentials, from what Bitbucket Pipelines sets (and users can set),
//! the pull request's address and the `origin` remote.
//!
//! The credentials go to one host only: `BITBUCKET_API_URL`'s, by default
//! `https://api.bitbucket.org/2.0`. Nothing the change or its pull request says (an address,
//! a remote, a next page) can send them anywhere else.

use std::path::Path;

use reqwest::Url;

use crate::forge::{PrRef, origin_web, plain_name};

pub const BITBUCKET_API: &str = "https://api.bitbucket.org/2.0";
/// The web host of Bitbucket Cloud, as pull request addresses and clones name it.
pub const WEB_HOST: &str = "bitbucket.org";

/// The one sentence a missing token gives: it names the variable to set and the scopes.
#[derive(Debug, thiserror::Error)]
#[error(
    "no Bitbucket token: set BITBUCKET_ACCESS_TOKEN to a repository, project or workspace access token with the pullrequest scope (pullrequest:write to post, repository:write for the Code Insights report), or BITBUCKET_USERNAME and BITBUCKET_API_TOKEN (or BITBUCKET_APP_PASSWORD)"
)]
pub struct MissingToken;

/// How the credentials travel.
#[derive(Clone)]
pub enum Credentials {
    /// An access token (repository, project or workspace): `Authorization: Bearer`.
    Bearer(String),
    /// An API token or app password with its user name (or e-mail): `Authorization: Basic`.
    Basic { user: String, secret: String },
}

/// Credentials and the variable they came from, so that an error can name it.
#[derive(Clone)]
pub struct Token {
    pub credentials: Credentials,
    /// `BITBUCKET_ACCESS_TOKEN`, `BITBUCKET_API_TOKEN` or `BITBUCKET_APP_PASSWORD`.
    pub source: &'static str,
}

impl Token {
    /// The secret part of the credentials.
    pub fn secret(&self) -> &str {
        match &self.credentials {
            Credentials::Bearer(token) => token,
            Credentials::Basic { secret, .. } => secret,
        }
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Token(*** from {})", self.source)
    }
}

/// A repository on Bitbucket Cloud and the API that serves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The API base, `https://api.bitbucket.org/2.0`.
    pub api: Url,
    pub workspace: String,
    pub repo_slug: String,
    /// Where the repository came from, for messages.
    pub from: &'static str,
}

impl Location {
    /// `workspace/repo_slug`.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.workspace, self.repo_slug)
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// Inside Bitbucket Pipelines (or told so): the workspace and repository are set.
pub fn in_pipelines() -> bool {
    env("BITBUCKET_WORKSPACE").is_some() && env("BITBUCKET_REPO_SLUG").is_some()
}

/// Whether `pr` is a Bitbucket Cloud pull request: its address is on bitbucket.org, or it is a
/// bare number (or `workspace/repo#N`) in Bitbucket Pipelines or in a clone of bitbucket.org.
pub fn claims(repo: &Path, pr: &PrRef) -> bool {
    if pr.kind == Some(crate::types::RequestKind::MergeRequest) {
        return false;
    }
    if let Some(host) = &pr.host {
        return host == WEB_HOST;
    }
    in_pipelines() || origin_web(repo).is_some_and(|(host, _)| host == WEB_HOST)
}

/// `HOST/WORKSPACE/REPO/pull-requests/N[/...]` (after the scheme, without query or fragment):
/// Bitbucket Cloud's address of a pull request.
pub fn parse_url(rest: &str) -> Option<PrRef> {
    let parts: Vec<&str> = rest.split('/').collect();
    let [host, workspace, repo, "pull-requests", n, ..] = parts.as_slice() else {
        return None;
    };
    let host = host.to_ascii_lowercase();
    (host == WEB_HOST && plain_name(workspace) && plain_name(repo)).then_some(())?;
    let digits = *n;
    let number = digits
        .parse::<u64>()
        .ok()
        .filter(|v| *v > 0 && v.to_string() == digits)?;
    Some(PrRef {
        number,
        repository: Some(format!("{workspace}/{repo}")),
        host: Some(host),
        kind: Some(crate::types::RequestKind::PullRequest),
    })
}

/// Finds the repository of `pr`: the address's own (or `workspace/repo#N`), else
/// `BITBUCKET_WORKSPACE` and `BITBUCKET_REPO_SLUG` (what Pipelines sets), else the `origin`
/// remote's path on bitbucket.org. The API is `BITBUCKET_API_URL`, else Bitbucket Cloud's.
pub fn locate(repo: &Path, pr: &PrRef) -> anyhow::Result<Location> {
    let (full, from) = if let Some(full) = &pr.repository {
        (full.clone(), "the pull request's address")
    } else if let (Some(ws), Some(slug)) = (env("BITBUCKET_WORKSPACE"), env("BITBUCKET_REPO_SLUG"))
    {
        (
            format!("{ws}/{slug}"),
            "BITBUCKET_WORKSPACE and BITBUCKET_REPO_SLUG",
        )
    } else if let Some((_, path)) = origin_web(repo).filter(|(host, _)| host == WEB_HOST) {
        (path, "the `origin` remote")
    } else {
        anyhow::bail!(
            "cannot tell which Bitbucket repository pull request #{} is in: set BITBUCKET_WORKSPACE and BITBUCKET_REPO_SLUG, or give the pull request's address (https://bitbucket.org/WORKSPACE/REPO/pull-requests/{})",
            pr.number,
            pr.number
        );
    };
    let Some((workspace, repo_slug)) = full
        .split_once('/')
        .filter(|(w, r)| plain_name(w) && plain_name(r))
    else {
        anyhow::bail!(
            "`{}` (from {from}) is not a Bitbucket repository: it should read WORKSPACE/REPO",
            crate::text::printable_line(&full)
        );
    };
    let api_text = env("BITBUCKET_API_URL").unwrap_or_else(|| BITBUCKET_API.to_string());
    let api = crate::forge::http::api_url(&api_text, "BITBUCKET_API_URL", BITBUCKET_API)?;
    Ok(Location {
        api,
        workspace: workspace.to_string(),
        repo_slug: repo_slug.to_string(),
        from,
    })
}

/// The credentials: `BITBUCKET_ACCESS_TOKEN` (Bearer), else `BITBUCKET_USERNAME` with
/// `BITBUCKET_API_TOKEN` or `BITBUCKET_APP_PASSWORD` (Basic).
pub fn token() -> anyhow::Result<Token> {
    let secret = |name: &str| env(name).filter(|v| !v.contains(char::is_whitespace));
    if let Some(value) = secret("BITBUCKET_ACCESS_TOKEN") {
        return Ok(Token {
            credentials: Credentials::Bearer(value),
            source: "BITBUCKET_ACCESS_TOKEN",
        });
    }
    let user = env("BITBUCKET_USERNAME");
    for source in ["BITBUCKET_API_TOKEN", "BITBUCKET_APP_PASSWORD"] {
        if let Some(secret) = secret(source) {
            let Some(user) = user.clone() else {
                anyhow::bail!(
                    "{source} is set but BITBUCKET_USERNAME is not: set it to the user name (or, for an API token, the e-mail) the password belongs to"
                );
            };
            return Ok(Token {
                credentials: Credentials::Basic { user, secret },
                source,
            });
        }
    }
    Err(MissingToken.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_request_addresses_on_bitbucket_org_only() {
        let pr = parse_url("bitbucket.org/acme/web-app/pull-requests/17/diff").unwrap();
        assert_eq!(pr.number, 17);
        assert_eq!(pr.repository.as_deref(), Some("acme/web-app"));
        assert_eq!(pr.host.as_deref(), Some("bitbucket.org"));
        for not_pr in [
            "bitbucket.org/acme/web-app/pull-requests/x",
            "bitbucket.org/acme/web-app/pull-requests/0",
            "bitbucket.org/acme/../pull-requests/3",
            "bitbucket.example.com/acme/web-app/pull-requests/3",
            "bitbucket.org/acme/web-app/issues/3",
            "bitbucket.org/acme/web-app/pull-requests/+3",
        ] {
            assert_eq!(parse_url(not_pr), None, "{not_pr}");
        }
    }
}
