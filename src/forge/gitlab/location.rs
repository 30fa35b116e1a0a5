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
/// `GITLAB_URL`'s `/api/v4` for its instance, else `https://HOST/api/v4` of the address's or
/// `origin`'s host (self-managed instances included), else GitLab.com's.
pub fn locate(repo: &Path, mr: &PrRef) -> anyhow::Result<Location> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    locate_with(mr, origin_web(repo), &env)
}

/// [`locate`] with the `origin` remote's web host and path and the environment given.
fn locate_with(
    mr: &PrRef,
    origin: Option<(String, String)>,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<Location> {
    let instance = Instance::named(env)?;
    let within = |host: &str, path: &str| match &instance {
        Some(i) => i.project_of(host, path),
        None => path.to_string(),
    };
    let origin = origin
        .map(|(host, path)| {
            let path = within(&host, &path);
            (host, path)
        })
        .filter(|(_, path)| project_path(path));
    let address = mr.repository.as_ref().map(|path| match &mr.host {
        Some(host) => within(host, path),
        None => path.clone(),
    });
    let (project, from) = project_of(mr, address, &origin, env)?;
    let (api_text, api_from_ci) = match env("CI_API_V4_URL") {
        Some(url) => (url, true),
        None => {
            let host = mr.host.clone().or_else(|| origin.map(|(h, _)| h));
            (api_of(host.as_deref(), instance.as_ref()), false)
        }
    };
    let variable = if api_from_ci {
        "CI_API_V4_URL"
    } else {
        "GITLAB_URL"
    };
    let api = crate::forge::http::api_url(&api_text, variable, GITLAB_COM_API)?;
    Ok(Location {
        api,
        project,
        from,
        api_from_ci,
    })
}

/// The project and where it came from (see [`locate`]); `address` is the project the merge
/// request's address names, its relative URL root taken off.
fn project_of(
    mr: &PrRef,
    address: Option<String>,
    origin: &Option<(String, String)>,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<(String, &'static str)> {
    let numeric = |v: String| v.bytes().all(|b| b.is_ascii_digit()).then_some(v);
    if let Some(path) = address {
        return Ok((path, "the merge request's address"));
    }
    if let Some(id) = env("CI_MERGE_REQUEST_PROJECT_ID").and_then(numeric) {
        return Ok((id, "CI_MERGE_REQUEST_PROJECT_ID"));
    }
    if let Some(id) = env("CI_PROJECT_ID").and_then(numeric) {
        return Ok((id, "CI_PROJECT_ID"));
    }
    if let Some(path) = env("CI_PROJECT_PATH") {
        if !project_path(&path) {
            anyhow::bail!(
                "`{}` (from CI_PROJECT_PATH) is not a GitLab project path: it should read group/project",
                crate::text::printable_line(&path)
            );
        }
        return Ok((path, "CI_PROJECT_PATH"));
    }
    if let Some((_, path)) = origin {
        return Ok((path.clone(), "the `origin` remote"));
    }
    anyhow::bail!(
        "cannot tell which GitLab project merge request !{} is in: set CI_PROJECT_PATH=group/project, or give the merge request's address (https://gitlab.example.com/group/project/-/merge_requests/{})",
        mr.number,
        mr.number
    )
}

/// The API of the instance at `host` (the address's or `origin`'s): `GITLAB_URL`'s when it
/// names that host (or no host is known), else `https://HOST/api/v4`, else GitLab.com's.
fn api_of(host: Option<&str>, instance: Option<&Instance>) -> String {
    if let Some(i) = instance
        && host.is_none_or(|h| h.eq_ignore_ascii_case(&i.host))
    {
        return format!("{}/api/v4", i.base);
    }
    match host {
        Some(h) if h != "gitlab.com" => format!("https://{h}/api/v4"),
        _ => GITLAB_COM_API.to_string(),
    }
}

/// Whether `host` (an `origin` remote's) is the instance `GITLAB_URL` (or `GITLAB_HOST`) names:
/// a bare merge request number there is a merge request.
pub fn is_named_instance(host: &str) -> bool {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let url = Instance::named(&env).ok().flatten();
    let named_host = env("GITLAB_HOST");
    url.is_some_and(|i| i.host.eq_ignore_ascii_case(host))
        || named_host.is_some_and(|h| h.trim().eq_ignore_ascii_case(host))
}

/// A self-managed instance the user named by its web address, `GITLAB_URL` (or glab's
/// `GITLAB_HOST` when it is given as an address): where it is, and its relative URL root.
/// An instance served under a path (`https://host/gitlab`, GitLab's "relative URL root") has
/// its API at `https://host/gitlab/api/v4` and its projects' web addresses (and https clone
/// addresses) under `/gitlab/`, which is not part of any project's path.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Instance {
    /// The address without a trailing `/`: `https://host/gitlab`.
    base: String,
    /// `host` or `host:port`, lowercased.
    host: String,
    /// The relative URL root's path steps (`gitlab`), empty when there is none.
    root: String,
}

impl Instance {
    fn named(env: &dyn Fn(&str) -> Option<String>) -> anyhow::Result<Option<Instance>> {
        let (text, variable) = match env("GITLAB_URL") {
            Some(url) => (url, "GITLAB_URL"),
            None => match env("GITLAB_HOST").filter(|h| h.contains("://")) {
                Some(url) => (url, "GITLAB_HOST"),
                None => return Ok(None),
            },
        };
        let url =
            crate::forge::http::api_url(&text, variable, "https://gitlab.example.com/gitlab")?;
        let host = match (url.host_str(), url.port()) {
            (Some(h), Some(p)) => format!("{}:{p}", h.to_ascii_lowercase()),
            (Some(h), None) => h.to_ascii_lowercase(),
            (None, _) => anyhow::bail!(
                "{variable} has no host: set it to the instance's address, such as https://gitlab.example.com/gitlab"
            ),
        };
        let root = url.path().trim_matches('/').to_string();
        let base = url.as_str().split(['?', '#']).next().unwrap_or_default();
        Ok(Some(Instance {
            base: base.trim_end_matches('/').to_string(),
            host,
            root,
        }))
    }

    /// The project's path in a web or clone address's `path` on `host`: the relative URL root
    /// taken off when the address is this instance's.
    fn project_of(&self, host: &str, path: &str) -> String {
        if self.root.is_empty() || !host.eq_ignore_ascii_case(&self.host) {
            return path.to_string();
        }
        path.strip_prefix(&self.root)
            .and_then(|rest| rest.strip_prefix('/'))
            .unwrap_or(path)
            .to_string()
    }
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
        let gitlab_host = std::env::var("GITLAB_HOST").ok();
        let gitlab_url = std::env::var("GITLAB_URL").ok();
        if !token_may_go_to(location, &[gitlab_host.as_deref(), gitlab_url.as_deref()]) {
            anyhow::bail!(
                "GITLAB_TOKEN is not sent to {host}, which the merge request's address or the `origin` remote names: if the token is for that instance, set GITLAB_URL to its address (https://{host}, with its relative URL root if it has one)"
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
/// names, or the instance one of `named` (`GITLAB_HOST`, as glab reads it: a host name or an
/// address; `GITLAB_URL`, an address) names.
fn token_may_go_to(location: &Location, named: &[Option<&str>]) -> bool {
    let host = location.api.host_str().unwrap_or_default();
    let names = |h: &str| {
        let h = h.trim();
        let h = h.split_once("://").map_or(h, |(_, rest)| rest);
        let h = h.split(['/', ':']).next().unwrap_or_default();
        !h.is_empty() && h.eq_ignore_ascii_case(host)
    };
    location.api_from_ci || host == "gitlab.com" || named.iter().flatten().any(|h| names(h))
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

    fn locate_in(
        mr: &str,
        origin: Option<(&str, &str)>,
        vars: &[(&str, &str)],
    ) -> anyhow::Result<Location> {
        let mr = PrRef::parse(mr).unwrap();
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let env = move |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let origin = origin.map(|(h, p)| (h.to_string(), p.to_string()));
        locate_with(&mr, origin, &env)
    }

    /// A self-managed GitLab under a relative URL root: GITLAB_URL names it, and the root is
    /// neither the API's nor the project's (from the remote or the address).
    #[test]
    fn a_relative_url_root_is_the_apis_and_not_the_projects() {
        let root = [("GITLAB_URL", "https://git.example.com/gitlab/")];
        let from_origin =
            locate_in("!42", Some(("git.example.com", "gitlab/group/proj")), &root).unwrap();
        assert_eq!(
            from_origin.api.as_str(),
            "https://git.example.com/gitlab/api/v4"
        );
        assert_eq!(from_origin.project, "group/proj");
        let from_address = locate_in(
            "https://git.example.com/gitlab/group/sub/proj/-/merge_requests/42",
            None,
            &root,
        )
        .unwrap();
        assert_eq!(
            (from_address.api.as_str(), from_address.project.as_str()),
            ("https://git.example.com/gitlab/api/v4", "group/sub/proj")
        );
        // An ssh remote has no root in its path; another host is not GITLAB_URL's instance.
        let ssh = locate_in("!42", Some(("git.example.com", "group/proj")), &root).unwrap();
        assert_eq!(ssh.project, "group/proj");
        let other = locate_in("!42", Some(("other.example", "gitlab/proj")), &root).unwrap();
        assert_eq!(
            (other.api.as_str(), other.project.as_str()),
            ("https://other.example/api/v4", "gitlab/proj")
        );
        // glab's GITLAB_HOST given as an address does the same; CI_API_V4_URL still wins.
        let glab = locate_in(
            "!42",
            Some(("git.example.com", "gitlab/group/proj")),
            &[("GITLAB_HOST", "https://git.example.com/gitlab")],
        )
        .unwrap();
        assert_eq!(glab.project, "group/proj");
        let ci = locate_in(
            "!42",
            None,
            &[
                ("CI_API_V4_URL", "https://ci.example/gl/api/v4"),
                ("CI_PROJECT_ID", "2147483700"),
                ("GITLAB_URL", "https://git.example.com/gitlab"),
            ],
        )
        .unwrap();
        assert_eq!(ci.api.as_str(), "https://ci.example/gl/api/v4");
        assert!(locate_in("!42", None, &[("GITLAB_URL", "http://git.example.com/")]).is_err());
    }

    /// A merge request's address on another host does not take the user's token there.
    #[test]
    fn the_token_goes_only_to_an_instance_named_for_it() {
        assert!(token_may_go_to(&at(GITLAB_COM_API, false), &[None]));
        assert!(token_may_go_to(
            &at("https://ci.example/api/v4", true),
            &[None]
        ));
        let other = at("https://gitlab.evil.example/api/v4", false);
        assert!(!token_may_go_to(&other, &[None, None]));
        assert!(!token_may_go_to(&other, &[Some("gitlab.example.com")]));
        assert!(!token_may_go_to(&other, &[Some("evil.example")]));
        assert!(token_may_go_to(&other, &[Some("gitlab.evil.example")]));
        assert!(token_may_go_to(
            &other,
            &[None, Some("https://GitLab.evil.example/gitlab")]
        ));
        assert!(token_may_go_to(&other, &[Some("gitlab.evil.example:443")]));
    }
}
