//! The throwaway state home: where an agent CLI keeps its configuration, sessions and caches
//! during one run, made for that run and removed with it.
//!
//! The CLIs write their state under `$HOME` (`~/.claude`, `~/.claude.json`, `~/.codex`,
//! `~/.gemini`), and part of that state is configuration that runs later, outside any sandbox:
//! Claude Code's hooks, Codex's `env_key` (which variable it sends as the key), Gemini CLI's
//! settings. If an agent could write the user's real directories, a change under review could
//! plant configuration that the user's own, unsandboxed CLI would run. So each agent gets a home
//! of its own, seeded with copies of what its CLI needs to log in and work (credential files,
//! the user's settings of that CLI, the git configuration), and `HOME`, `CLAUDE_CONFIG_DIR`,
//! `CODEX_HOME` and the XDG directories point into it. Nothing is copied back: a token the CLI
//! refreshes during the run is kept for that run only (an API key is never affected), because
//! copying the agent's writes back is exactly the door this closes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::types::AgentKind;

/// Seed files bigger than this are left out (a state directory can hold large session logs;
/// logins and settings are small).
const SEED_FILE_LIMIT: u64 = 4 * 1024 * 1024;

/// What one CLI needs from the user's state to log in and keep its settings: files relative
/// to its state directory.
fn seed_files(kind: AgentKind) -> &'static [&'static str] {
    match kind {
        AgentKind::Claude => &[".credentials.json", "settings.json"],
        AgentKind::Codex => &["auth.json", "config.toml"],
        AgentKind::Gemini => &[
            "settings.json",
            "oauth_creds.json",
            "google_accounts.json",
            "installation_id",
            ".env",
        ],
        _ => &[],
    }
}

/// One agent's throwaway home and the variables that point the CLI at it.
#[derive(Debug, Clone)]
pub struct StateHome {
    path: PathBuf,
    /// `HOME`, the CLI's state variable and the XDG directories, set over the inherited ones.
    pub env: BTreeMap<String, String>,
}

impl StateHome {
    /// The home directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes `dir` the throwaway home of an agent of `kind`, seeded from the user's own state:
    /// `user_env` is deep-review's environment (where the user's `HOME`, `CLAUDE_CONFIG_DIR` and
    /// `CODEX_HOME` are read), `trusted_dirs` the directories the git config may name as safe
    /// (the checkout and the repository: their owner inside the sandbox may differ).
    pub fn create(
        dir: &Path,
        kind: AgentKind,
        user_env: &dyn Fn(&str) -> Option<String>,
        safe_dirs: &[&Path],
    ) -> std::io::Result<StateHome> {
        std::fs::create_dir_all(dir)?;
        let user_home = user_env("HOME").map(PathBuf::from);
        let mut env = BTreeMap::new();
        env.insert("HOME".to_string(), dir.display().to_string());
        for (var, sub) in [
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_CACHE_HOME", ".cache"),
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_STATE_HOME", ".local/state"),
        ] {
            let path = dir.join(sub);
            std::fs::create_dir_all(&path)?;
            env.insert(var.to_string(), path.display().to_string());
        }
        let (source, target, variable) = state_dir(kind, user_home.as_deref(), user_env, dir);
        if let Some(target) = &target {
            std::fs::create_dir_all(target)?;
            if let Some(source) = &source {
                for name in seed_files(kind) {
                    copy_seed(&source.join(name), &target.join(name));
                }
            }
            if let Some(variable) = variable {
                env.insert(variable.to_string(), target.display().to_string());
            }
        }
        if kind == AgentKind::Claude {
            // Claude Code keeps its account and onboarding state beside its directory
            // (`~/.claude.json`), or inside it when CLAUDE_CONFIG_DIR names one.
            let (from, to) = match (user_env("CLAUDE_CONFIG_DIR"), &user_home) {
                (Some(config), _) => (
                    PathBuf::from(config).join(".claude.json"),
                    dir.join(".claude/.claude.json"),
                ),
                (None, Some(home)) => (home.join(".claude.json"), dir.join(".claude.json")),
                (None, None) => (PathBuf::new(), PathBuf::new()),
            };
            if !from.as_os_str().is_empty() {
                copy_seed(&from, &to);
            }
        }
        seed_git_config(dir, safe_dirs)?;
        Ok(StateHome {
            path: dir.to_path_buf(),
            env,
        })
    }
}

/// The user's state directory of a CLI, its place in the throwaway home, and the variable that
/// names it (`None`: the CLI finds it under `HOME`).
fn state_dir(
    kind: AgentKind,
    user_home: Option<&Path>,
    user_env: &dyn Fn(&str) -> Option<String>,
    dir: &Path,
) -> (Option<PathBuf>, Option<PathBuf>, Option<&'static str>) {
    let from_home = |sub: &str| user_home.map(|h| h.join(sub));
    match kind {
        AgentKind::Claude => (
            user_env("CLAUDE_CONFIG_DIR")
                .map(PathBuf::from)
                .or_else(|| from_home(".claude")),
            Some(dir.join(".claude")),
            user_env("CLAUDE_CONFIG_DIR").map(|_| "CLAUDE_CONFIG_DIR"),
        ),
        AgentKind::Codex => (
            user_env("CODEX_HOME")
                .map(PathBuf::from)
                .or_else(|| from_home(".codex")),
            Some(dir.join(".codex")),
            Some("CODEX_HOME"),
        ),
        AgentKind::Gemini => (from_home(".gemini"), Some(dir.join(".gemini")), None),
        _ => (None, None, None),
    }
}

/// Copies one seed file if it is there, a regular file and not too big. Best effort: a CLI
/// without its login fails with its own message, which the report shows.
fn copy_seed(from: &Path, to: &Path) {
    let Ok(meta) = std::fs::metadata(from) else {
        return;
    };
    if !meta.is_file() || meta.len() > SEED_FILE_LIMIT {
        return;
    }
    if let Some(parent) = to.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    if std::fs::copy(from, to).is_ok() {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o600));
    }
}

/// A git configuration of its own: `safe.directory` for the checkout and the repository
/// (inside the sandbox their owner may show as another uid, and git then refuses to read them),
/// and nothing of the user's. A global git config is where CI images keep credentials
/// (`url.<token>@host.insteadOf`, `http.extraheader`, `credential.*`), and an agent reading
/// the code needs none of it.
fn seed_git_config(dir: &Path, safe_dirs: &[&Path]) -> std::io::Result<()> {
    let mut text = String::from("[safe]\n");
    for safe in safe_dirs {
        text.push_str(&format!("\tdirectory = {}\n", git_config_value(safe)));
    }
    std::fs::write(dir.join(".gitconfig"), text)
}

/// A path as a git config value: quoted, with `"` and `\` escaped.
fn git_config_value(path: &Path) -> String {
    let raw = path.display().to_string();
    format!("\"{}\"", raw.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_holds_copies_of_the_login_and_points_the_cli_at_itself() {
        let user = tempfile::tempdir().unwrap();
        let codex = user.path().join(".codex");
        std::fs::create_dir_all(&codex).unwrap();
        std::fs::write(codex.join("auth.json"), "{\"token\":\"t\"}").unwrap();
        std::fs::write(codex.join("config.toml"), "model = \"m\"\n").unwrap();
        std::fs::write(codex.join("history.jsonl"), "private history\n").unwrap();
        std::fs::write(
            user.path().join(".gitconfig"),
            "[user]\n\tname = U\n[http]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n",
        )
        .unwrap();
        let run = tempfile::tempdir().unwrap();
        let home_dir = run.path().join("home-codex");
        let user_home = user.path().display().to_string();
        let env = move |name: &str| (name == "HOME").then(|| user_home.clone());
        let checkout = Path::new("/tmp/run/checkout");
        let home = StateHome::create(&home_dir, AgentKind::Codex, &env, &[checkout]).unwrap();
        assert_eq!(home.env["HOME"], home_dir.display().to_string());
        assert_eq!(
            home.env["CODEX_HOME"],
            home_dir.join(".codex").display().to_string()
        );
        assert_eq!(
            std::fs::read_to_string(home_dir.join(".codex/auth.json")).unwrap(),
            "{\"token\":\"t\"}"
        );
        assert!(home_dir.join(".codex/config.toml").is_file());
        assert!(
            !home_dir.join(".codex/history.jsonl").exists(),
            "only the login and settings are seeded"
        );
        let git = std::fs::read_to_string(home_dir.join(".gitconfig")).unwrap();
        assert!(
            !git.contains("extraheader") && !git.contains("name = U"),
            "{git}"
        );
        assert!(git.contains("directory = \"/tmp/run/checkout\""), "{git}");
        // What the agent writes stays in the copy.
        std::fs::write(home_dir.join(".codex/config.toml"), "env_key = \"AWS\"\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(codex.join("config.toml")).unwrap(),
            "model = \"m\"\n"
        );
    }

    #[test]
    fn claude_keeps_its_account_file_where_its_config_dir_says() {
        let user = tempfile::tempdir().unwrap();
        let config = user.path().join("claude-config");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(config.join(".credentials.json"), "{}").unwrap();
        std::fs::write(config.join(".claude.json"), "{\"a\":1}").unwrap();
        let run = tempfile::tempdir().unwrap();
        let dir = run.path().join("home-claude");
        let config_s = config.display().to_string();
        let env = move |name: &str| (name == "CLAUDE_CONFIG_DIR").then(|| config_s.clone());
        let home = StateHome::create(&dir, AgentKind::Claude, &env, &[]).unwrap();
        assert_eq!(
            home.env["CLAUDE_CONFIG_DIR"],
            dir.join(".claude").display().to_string()
        );
        assert!(dir.join(".claude/.credentials.json").is_file());
        assert!(dir.join(".claude/.claude.json").is_file());
    }
}
