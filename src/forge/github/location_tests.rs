//! The tests of [`super`]: where the GitHub API is for each host, and which token goes there.

use super::*;

#[test]
fn graphql_goes_with_the_rest_base() {
    assert_eq!(graphql_for("https://api.github.com/"), DEFAULT_GRAPHQL);
    assert_eq!(
        graphql_for("https://ghe.example.com/api/v3"),
        "https://ghe.example.com/api/graphql"
    );
    assert_eq!(
        graphql_for("http://127.0.0.1:9/"),
        "http://127.0.0.1:9/graphql"
    );
}

fn locate_in(pr: Option<&str>, origin: Option<(&str, &str)>, vars: &[(&str, &str)]) -> Location {
    let pr = match pr {
        Some(text) => PrRef::parse(text).unwrap(),
        None => PrRef::parse("236").unwrap(),
    };
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let env = move |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let origin = origin.map(|(h, p)| (h.to_string(), p.to_string()));
    locate_with(&pr, origin, &env).unwrap()
}

/// `GH_HOST` names the host when nothing more specific does, as for gh: a GitHub Enterprise
/// Server gets its `/api/v3` and `/api/graphql` and only GH_ENTERPRISE_TOKEN.
#[test]
fn gh_host_names_an_enterprise_server() {
    let at = locate_in(
        None,
        None,
        &[("GITHUB_REPOSITORY", "o/r"), ("GH_HOST", "GHE.example.com")],
    );
    assert_eq!(at.host, "ghe.example.com");
    assert_eq!(at.api.as_str(), "https://ghe.example.com/api/v3");
    assert_eq!(at.graphql.as_str(), "https://ghe.example.com/api/graphql");
    assert_eq!(token_variables(&at), ENTERPRISE_TOKENS);
    // The remote's host is more specific than GH_HOST.
    let at = locate_in(
        None,
        Some(("github.com", "o/r")),
        &[("GH_HOST", "ghe.example.com")],
    );
    assert_eq!(at.api.as_str(), "https://api.github.com/");
    assert_eq!(token_variables(&at), GENERAL_TOKENS);
}

/// A ghe.com tenant's API is `api.TENANT.ghe.com`; GH_TOKEN goes there only when GH_HOST
/// names the tenant (never because an address or a remote does).
#[test]
fn a_ghe_com_tenant_has_its_own_api_and_takes_gh_token_when_named() {
    let named = locate_in(
        None,
        None,
        &[
            ("GITHUB_REPOSITORY", "o/r"),
            ("GH_HOST", "https://octo.ghe.com/"),
        ],
    );
    assert_eq!(named.api.as_str(), "https://api.octo.ghe.com/");
    assert_eq!(named.graphql.as_str(), "https://api.octo.ghe.com/graphql");
    assert!(named.general);
    assert_eq!(token_variables(&named), GENERAL_TOKENS);

    let by_address = locate_in(Some("https://octo.ghe.com/o/r/pull/7"), None, &[]);
    assert_eq!(by_address.api.as_str(), "https://api.octo.ghe.com/");
    assert!(!by_address.general);
    assert!(token_variables(&by_address).is_empty());
    let missing = MissingToken::Tenancy(by_address.host.clone()).to_string();
    assert!(
        missing.contains("set GH_HOST=octo.ghe.com and GH_TOKEN"),
        "{missing}"
    );
    let other = locate_in(
        Some("https://evil.ghe.com/o/r/pull/7"),
        None,
        &[("GH_HOST", "octo.ghe.com")],
    );
    assert!(!other.general, "GH_HOST names another tenant");
    assert!(!is_tenancy("a.b.ghe.com") && !is_tenancy("ghe.com"));
}

/// GitHub Actions on a tenant sets GITHUB_API_URL and GITHUB_SERVER_URL: they are used.
#[test]
fn actions_on_a_tenant_use_its_variables() {
    let at = locate_in(
        None,
        None,
        &[
            ("GITHUB_REPOSITORY", "o/r"),
            ("GITHUB_SERVER_URL", "https://octo.ghe.com"),
            ("GITHUB_API_URL", "https://api.octo.ghe.com"),
            ("GITHUB_GRAPHQL_URL", "https://api.octo.ghe.com/graphql"),
        ],
    );
    assert_eq!(at.host, "octo.ghe.com");
    assert_eq!(at.graphql.as_str(), "https://api.octo.ghe.com/graphql");
    assert!(at.general);
}

#[test]
fn another_host_is_served_by_its_own_enterprise_api() {
    assert_eq!(api_of_host("github.com"), DEFAULT_API);
    assert_eq!(
        api_of_host("ghe.example.com"),
        "https://ghe.example.com/api/v3"
    );
    assert_eq!(api_of_host("octo.ghe.com"), "https://api.octo.ghe.com");
    assert_eq!(
        graphql_for("https://api.octo.ghe.com"),
        "https://api.octo.ghe.com/graphql"
    );
    assert_eq!(
        api_of_host("127.0.0.1:8080"),
        "http://127.0.0.1:8080/api/v3"
    );
}
