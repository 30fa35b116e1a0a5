//! Where the GitLab API is and who deep-review is there: the project, the API address and the
//! token, from what GitLab CI sets (and users can set), the merge request's address and the
//! `origin` remote.

use std::path::Path;

use reqwest::Url;

use crate::forge::{PrRef, origin_web, project_path};

pub const GITLAB_COM_API: &str = "https://gitlab.com/api/v4";

/// The one sentence a missing token gives: it names the variable to set.
#[derive(Debug, thiserror::Error)]
#[error(
    "no GitLab token: set GITLAB_TOKEN to a personal, project or group access token that can read the merge request (scope read_api, or api to post)"
)]
pub struct MissingToken;

/// A token, the header it travels in, and where it came from, so that an error can name the
/// variable to fix.
#[derive(Clone)]
pub struct Token {
    pub value: String,
    /// `GITLAB_TOKEN` or `CI_JOB_TOKEN`.
    pub source: &'static str,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Token(*** from {})", self.source)
    }
}

impl Token {
    /// `PRIVATE-TOKEN` for an access token, `JOB-TOKEN` for a CI job's.
    pub fn header(&self) -> &'static str {
        if self.is_job_token() {
            "JOB-TOKEN"
        } else {
            "PRIVATE-TOKEN"
        }
    }

    /// A CI job's token: it reads what GitLab lets jobs read, and posts nothing.
    pub fn is_job_token(&self) -> bool {
        self.source == "CI_JOB_TOKEN"
    }
}

/// A project on a GitLab instance and the API that serves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The API base, `https://gitlab.example.com/api/v4`.
    pub api: Url,
    /// The project as the API names it: its numeric id or its full path (`group/sub/proj`),
    /// URL-encoded when it goes into an address.
    pub project: String,
    /// Where the project came from, for messages.
    pub from: &'static str,
    /// The API's address came from `CI_API_V4_URL` (the job's own instance).
    pub api_from_ci: bool,
}

/// Finds the project of `mr`: the address's own, else `CI_MERGE_REQUEST_PROJECT_ID` (the
/// project the merge request is in, also in a fork's pipeline), `CI_PROJECT_ID`,
/// `CI_PROJECT_PATH`, else the `origin` remote's path. The API is `CI_API_V4_URL` when set, else
/// `https://HOST/api/v4` of the address's or `origin`'s host (self-managed instances included),
/// else GitLab.com's.
pub fn locate(repo: &Path, mr: &PrRef) -> anyhow::Result<Location> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let origin = origin_web(repo).filter(|(_, path)| project_path(path));
    let numeric = |v: String| v.bytes().all(|b| b.is_ascii_digit()).then_some(v);
    let (project, from) = if let Some(path) = &mr.repository {
        (path.clone(), "the merge request's address")
    } else if let Some(id) = env("CI_MERGE_REQUEST_PROJECT_ID").and_then(numeric) {
        (id, "CI_MERGE_REQUEST_PROJECT_ID")
    } else if let Some(id) = env("CI_PROJECT_ID").and_then(numeric) {
        (id, "CI_PROJECT_ID")
    } else if let Some(path) = env("CI_PROJECT_PATH") {
        if !project_path(&path) {
            anyhow::bail!(
                "`{}` (from CI_PROJECT_PATH) is not a GitLab project path: it should read group/project",
                crate::text::printable_line(&path)
            );
        }
        (path, "CI_PROJECT_PATH")
    } else if let Some((_, path)) = &origin {
        (path.clone(), "the `origin` remote")
    } else {
        anyhow::bail!(
            "cannot tell which GitLab project merge request !{} is in: set CI_PROJECT_PATH=group/project, or give the merge request's address (https://gitlab.example.com/group/project/-/merge_requests/{})",
            mr.number,
            mr.number
        );
    };
    let (api_text, api_from_ci) = match env("CI_API_V4_URL") {
        Some(url) => (url, true),
        None => {
            let host = mr.host.clone().or_else(|| origin.map(|(h, _)| h));
            let url = match host {
                Some(h) if h != "gitlab.com" => format!("https://{h}/api/v4"),
                _ => GITLAB_COM_API.to_string(),
            };
            (url, false)
        }
    };
    let api = crate::forge::http::api_url(&api_text, "CI_API_V4_URL", GITLAB_COM_API)?;
    Ok(Location {
        api,
        project,
        from,
        api_from_ci,
    })
}

/// The token: `GITLAB_TOKEN`, else (for the job's own instance only) `CI_JOB_TOKEN`.
/// `GITLAB_TOKEN` goes only to an instance the user named for it ([`token_may_go_to`]): a merge
/// request's address or a clone's `origin` can name any host, and the token must not follow.
pub fn token(location: &Location) -> anyhow::Result<Token> {
    let value = |name: &str| {
        std::env::var(name)
            .ok()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty() && !v.contains(char::is_whitespace))
    };
    if let Some(value) = value("GITLAB_TOKEN") {
        let host = location.api.host_str().unwrap_or_default();
        if !token_may_go_to(location, std::env::var("GITLAB_HOST").ok().as_deref()) {
            anyhow::bail!(
                "GITLAB_TOKEN is not sent to {host}, which the merge request's address or the `origin` remote names: if the token is for that instance, set GITLAB_HOST={host} (or CI_API_V4_URL to its API)"
            );
        }
        return Ok(Token {
            value,
            source: "GITLAB_TOKEN",
        });
    }
    if location.api_from_ci
        && let Some(value) = value("CI_JOB_TOKEN")
    {
        return Ok(Token {
            value,
            source: "CI_JOB_TOKEN",
        });
    }
    Err(MissingToken.into())
}

/// Whether `GITLAB_TOKEN` may go to the API of `location`: GitLab.com's, the one `CI_API_V4_URL`
/// names, or the instance `gitlab_host` (`GITLAB_HOST`, as glab reads it: a host name or an
/// address) names.
fn token_may_go_to(location: &Location, gitlab_host: Option<&str>) -> bool {
    let host = location.api.host_str().unwrap_or_default();
    let named = gitlab_host
        .map(|h| h.trim())
        .map(|h| h.split_once("://").map_or(h, |(_, rest)| rest))
        .map(|h| h.split(['/', ':']).next().unwrap_or_default())
        .is_some_and(|h| !h.is_empty() && h.eq_ignore_ascii_case(host));
    location.api_from_ci || host == "gitlab.com" || named
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(api: &str, api_from_ci: bool) -> Location {
        Location {
            api: Url::parse(api).unwrap(),
            project: "g/p".into(),
            from: "the merge request's address",
            api_from_ci,
        }
    }

    /// A merge request's address on another host does not take the user's token there.
    #[test]
    fn the_token_goes_only_to_an_instance_named_for_it() {
        assert!(token_may_go_to(&at(GITLAB_COM_API, false), None));
        assert!(token_may_go_to(
            &at("https://ci.example/api/v4", true),
            None
        ));
        let other = at("https://gitlab.evil.example/api/v4", false);
        assert!(!token_may_go_to(&other, None));
        assert!(!token_may_go_to(&other, Some("gitlab.example.com")));
        assert!(!token_may_go_to(&other, Some("evil.example")));
        assert!(token_may_go_to(&other, Some("gitlab.evil.example")));
        assert!(token_may_go_to(
            &other,
            Some("https://GitLab.evil.example/")
        ));
        assert!(token_may_go_to(&other, Some("gitlab.evil.example:443")));
    }
}
