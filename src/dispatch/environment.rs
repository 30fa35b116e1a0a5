//! The environment an agent gets: an allowlist, not the reviewer's whole environment. A review
//! runs model-driven tools on someone else's change; whatever is in the environment, the agent
//! can read and send away. So an agent gets:
//!
//! - what any program needs: `PATH`, `HOME`, `USER`, `SHELL`, locale, terminal, time zone
//!   (never `XDG_RUNTIME_DIR` or `SSH_AUTH_SOCK`: they lead to the user's sockets; `HOME` and
//!   the XDG directories are then pointed at the agent's throwaway home by the sandbox);
//! - how to reach the network: proxy variables and CA certificates;
//! - its own provider's variables only: `ANTHROPIC_*` and `CLAUDE_*` for Claude, `OPENAI_*`,
//!   `CODEX_*` and the `env_key` its Codex config names for Codex, `GEMINI_*` and `GOOGLE_*` for
//!   Gemini (an `AWS_SECRET_ACCESS_KEY` or another provider's key never reaches it);
//! - deep-review's own namespace (`DEEP_REVIEW_*`);
//! - what the trusted config names: `env` (values) and `pass_env` (names to pass through), and
//!   `GITHUB_TOKEN` / `GH_TOKEN` only with `pass_forge_tokens = true`.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;

use crate::types::{AgentKind, AgentSpec};

/// Names every agent gets, when set.
const BASE: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
];

/// Prefixes every agent gets: locale categories and deep-review's own variables.
const BASE_PREFIXES: &[&str] = &["LC_", "DEEP_REVIEW_"];

/// The forge tokens, passed only when config says so.
pub const FORGE_TOKENS: [&str; 2] = ["GITHUB_TOKEN", "GH_TOKEN"];

/// The variable-name prefixes of an agent's own provider.
fn provider_prefixes(kind: AgentKind) -> &'static [&'static str] {
    match kind {
        AgentKind::Claude => &["ANTHROPIC_", "CLAUDE_"],
        AgentKind::Codex => &["OPENAI_", "CODEX_"],
        AgentKind::Gemini => &["GEMINI_", "GOOGLE_"],
        _ => &[],
    }
}

/// Whether the variable `name` may pass to `spec`'s agent (its value is inherited).
pub fn allowed(spec: &AgentSpec, name: &str, extra: &BTreeSet<String>) -> bool {
    BASE.contains(&name)
        || BASE_PREFIXES.iter().any(|p| name.starts_with(p))
        || provider_prefixes(spec.kind)
            .iter()
            .any(|p| name.starts_with(p))
        || (spec.pass_forge_tokens && FORGE_TOKENS.contains(&name))
        || spec.pass_env.iter().any(|n| n == name)
        || extra.contains(name)
}

/// The agent's whole environment: the allowed inherited variables, then config's `env` and the
/// CLI's own settings (`set`) over them.
pub fn agent_env(
    spec: &AgentSpec,
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    set: &BTreeMap<String, String>,
) -> BTreeMap<OsString, OsString> {
    let extra = codex_key_names(spec);
    let mut env: BTreeMap<OsString, OsString> = inherited
        .into_iter()
        .filter(|(k, _)| k.to_str().is_some_and(|k| allowed(spec, k, &extra)))
        // The agent runs in a checkout of the change: a relative `PATH` entry there is the
        // change's (`node_modules/.bin`), so only absolute ones pass.
        .filter_map(|(k, v)| match k == "PATH" {
            true => super::backend::commands::absolute_path(Some(&v)).map(|v| (k, v)),
            false => Some((k, v)),
        })
        .collect();
    for (k, v) in set {
        env.insert(k.into(), v.into());
    }
    env
}

/// The names of the variables that hold Codex's provider keys: `env_key` of every provider in
/// `$CODEX_HOME/config.toml` (`~/.codex/config.toml`) and in `-c model_providers.X.env_key=NAME`
/// arguments. The user's own Codex config is trusted: it is theirs, not the change's.
fn codex_key_names(spec: &AgentSpec) -> BTreeSet<String> {
    codex_provider_settings(spec, "env_key")
        .into_iter()
        .collect()
}

/// One setting (`env_key`, `base_url`) of every Codex model provider the user configured: in
/// `$CODEX_HOME/config.toml` (`~/.codex/config.toml`) and in `-c model_providers.X.KEY=VALUE`
/// arguments. Empty for an agent that is not Codex. The user's own Codex config is trusted: it
/// is theirs, not the change's.
pub fn codex_provider_settings(spec: &AgentSpec, setting: &str) -> Vec<String> {
    let mut values = Vec::new();
    if spec.kind != AgentKind::Codex {
        return values;
    }
    let suffix = format!(".{setting}");
    for arg in &spec.extra_args {
        if let Some((key, value)) = arg.split_once('=')
            && key.starts_with("model_providers.")
            && key.ends_with(&suffix)
        {
            values.push(value.trim_matches('"').to_string());
        }
    }
    let home = std::env::var_os("CODEX_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".codex")));
    if let Some(text) = home.and_then(|h| std::fs::read_to_string(h.join("config.toml")).ok())
        && let Ok(value) = text.parse::<toml::Table>()
        && let Some(providers) = value.get("model_providers").and_then(|p| p.as_table())
    {
        for provider in providers.values() {
            if let Some(v) = provider.get(setting).and_then(|k| k.as_str()) {
                values.push(v.to_string());
            }
        }
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn an_agent_gets_its_own_provider_and_nothing_secret_of_others() {
        let outside = env(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/u"),
            ("LC_ALL", "C"),
            ("AWS_SECRET_ACCESS_KEY", "aws-secret"),
            ("OPENAI_API_KEY", "sk-openai"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("GITHUB_TOKEN", "ghp_x"),
            ("DATABASE_URL", "postgres://u:pw@db/x"),
            ("DEEP_REVIEW_TEST_TAG", "t"),
        ]);
        let claude = AgentSpec::new("claude", "claude");
        let got = agent_env(&claude, outside.clone(), &BTreeMap::new());
        let names: Vec<&str> = got.keys().filter_map(|k| k.to_str()).collect();
        assert_eq!(
            names,
            [
                "ANTHROPIC_API_KEY",
                "DEEP_REVIEW_TEST_TAG",
                "HOME",
                "LC_ALL",
                "PATH"
            ]
        );

        let mut gemini = AgentSpec::new("gemini", "gemini");
        gemini.pass_forge_tokens = true;
        gemini.pass_env = vec!["DATABASE_URL".into()];
        let set = BTreeMap::from([("GEMINI_CLI_NO_RELAUNCH".to_string(), "true".to_string())]);
        let got = agent_env(&gemini, outside, &set);
        let names: Vec<&str> = got.keys().filter_map(|k| k.to_str()).collect();
        assert_eq!(
            names,
            [
                "DATABASE_URL",
                "DEEP_REVIEW_TEST_TAG",
                "GEMINI_CLI_NO_RELAUNCH",
                "GITHUB_TOKEN",
                "HOME",
                "LC_ALL",
                "PATH"
            ]
        );
    }

    #[test]
    fn an_agent_gets_only_the_absolute_directories_of_path() {
        let claude = AgentSpec::new("claude", "claude");
        let got = agent_env(
            &claude,
            env(&[("PATH", "node_modules/.bin:/usr/bin::.:/bin")]),
            &BTreeMap::new(),
        );
        assert_eq!(
            got[&OsString::from("PATH")],
            OsString::from("/usr/bin:/bin")
        );
        let got = agent_env(&claude, env(&[("PATH", ".")]), &BTreeMap::new());
        assert!(!got.contains_key(&OsString::from("PATH")));
    }

    #[test]
    fn codex_gets_the_key_its_provider_names() {
        let mut codex = AgentSpec::new("codex", "codex");
        codex.extra_args = vec![
            "-c".into(),
            "model_providers.gw.env_key=MY_GATEWAY_KEY".into(),
        ];
        let got = agent_env(
            &codex,
            env(&[("MY_GATEWAY_KEY", "k"), ("OTHER_KEY", "x")]),
            &BTreeMap::new(),
        );
        assert!(got.contains_key(&OsString::from("MY_GATEWAY_KEY")));
        assert!(!got.contains_key(&OsString::from("OTHER_KEY")));
    }
}
