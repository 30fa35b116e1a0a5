//! Configuration: `.deep-review.toml` in the repository merged over the user's
//! `$XDG_CONFIG_HOME/deep-review/config.toml`, resolved into one [`AgentSpec`] per agent to run.
//!
//! Every setting has a default, so no config file is needed at all:
//!
//! ```toml
//! pass_forge_tokens = false        # keep GITHUB_TOKEN / GH_TOKEN from the agents
//! brief_template = "review.j2"     # relative to this file
//!
//! [agents.claude]
//! command = "claude"               # name on PATH, or a path
//! args = []                        # appended after the registry's own arguments
//! model = "opus"
//! effort = "high"
//! timeout = "30m"                  # 90s, 1h30m ...
//! env = { KEY = "value" }
//! enabled = true
//! display = "Claude Opus 4.6"      # how the report names it
//! ```

mod file;

pub use file::{AgentLayer, Layer, parse_layer};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::types::AgentSpec;

/// The agents the registry can run, by name: each runs the command of its name by default and
/// is shown with its name capitalized.
pub use crate::types::KNOWN_AGENTS;

pub use crate::types::DEFAULT_TIMEOUT;

/// Name of the per-repository config file, at the repository's top level.
pub const REPO_CONFIG_FILE: &str = ".deep-review.toml";

/// The merged configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    pub pass_forge_tokens: bool,
    pub brief_template: Option<PathBuf>,
    pub agents: BTreeMap<String, AgentLayer>,
    /// The files that were read, lowest priority first (for messages).
    pub files: Vec<PathBuf>,
}

/// `$XDG_CONFIG_HOME/deep-review/config.toml` (`~/.config/...` when unset).
pub fn user_config_path() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("deep-review").join("config.toml"))
}

/// Loads the user file, then the repository's `.deep-review.toml` over it. Missing files are
/// fine; unreadable or malformed ones are errors naming the file.
pub fn load(repo_root: &Path) -> anyhow::Result<Config> {
    let mut files = Vec::new();
    if let Some(user) = user_config_path() {
        files.push(user);
    }
    files.push(repo_root.join(REPO_CONFIG_FILE));
    load_files(&files)
}

/// Loads the config for reviewing a change that itself modifies `.deep-review.toml`: the
/// repository file then comes from the author of the change, so what it says about what runs on
/// this machine (`command`, `args`, `env`, `pass_forge_tokens`, custom agents) is ignored, and
/// each ignored setting is returned as a sentence for the user. Models, efforts, timeouts and
/// display names still apply.
pub fn load_untrusted_repo(repo_root: &Path) -> anyhow::Result<(Config, Vec<String>)> {
    let names: Vec<&str> = KNOWN_AGENTS.iter().map(|a| a.0).collect();
    let repo_file = repo_root.join(REPO_CONFIG_FILE);
    let mut config = match user_config_path() {
        Some(user) => load_files(&[user])?,
        None => Config::default(),
    };
    let text = match std::fs::read_to_string(&repo_file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((config, Vec::new())),
        Err(e) => anyhow::bail!("cannot read config file {}: {e}", repo_file.display()),
    };
    let (layer, ignored) = parse_layer(&text, &repo_file, &names)?.without_execution(&names);
    config.merge(layer);
    config.files.push(repo_file.clone());
    let notes = ignored
        .into_iter()
        .map(|what| {
            format!(
                "{what} in {} is ignored: the change under review modifies that file, and a \
                 change does not choose what runs on your machine (set it in {} instead)",
                repo_file.display(),
                user_config_path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "your user config".into())
            )
        })
        .collect();
    Ok((config, notes))
}

/// Loads `files` in order, each overriding the ones before it, skipping those that do not exist.
pub fn load_files(files: &[PathBuf]) -> anyhow::Result<Config> {
    let names: Vec<&str> = KNOWN_AGENTS.iter().map(|a| a.0).collect();
    let mut config = Config::default();
    for path in files {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => anyhow::bail!("cannot read config file {}: {e}", path.display()),
        };
        let layer = parse_layer(&text, path, &names)?;
        config.merge(layer);
        config.files.push(path.clone());
    }
    for (name, agent) in &config.agents {
        if !names.contains(&name.as_str()) && agent.command.is_none() {
            anyhow::bail!(
                "`[agents.{name}]` in {} has no `command`: an agent the registry does not know \
                 ({}) runs as a generic agent (prompt on stdin, review on stdout) and needs \
                 `command = \"PROGRAM\"`",
                config.files_list(),
                names.join(", ")
            );
        }
    }
    Ok(config)
}

impl Config {
    /// Lays `layer` over this config: values it sets win, `env` maps are merged key by key.
    pub fn merge(&mut self, layer: Layer) {
        if let Some(p) = layer.pass_forge_tokens {
            self.pass_forge_tokens = p;
        }
        if layer.brief_template.is_some() {
            self.brief_template = layer.brief_template;
        }
        for (name, over) in layer.agents {
            let base = self.agents.entry(name).or_default();
            macro_rules! take {
                ($($f:ident),*) => { $( if over.$f.is_some() { base.$f = over.$f; } )* };
            }
            take!(
                command,
                args,
                model,
                effort,
                timeout,
                enabled,
                display,
                pass_forge_tokens
            );
            base.env.extend(over.env);
        }
    }

    /// Every agent name this config can run: the registry's, then custom ones from config.
    pub fn agent_names(&self) -> Vec<String> {
        let mut names: Vec<String> = KNOWN_AGENTS.iter().map(|a| a.0.to_string()).collect();
        for name in self.agents.keys() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        names
    }

    /// The agents to run: those named by `selection` (`"claude,codex"`, in that order, even when
    /// config disables them), else every enabled agent: the registry's in its order, then custom
    /// agents from config by name.
    pub fn agent_specs(&self, selection: Option<&str>) -> anyhow::Result<Vec<AgentSpec>> {
        let all = self.agent_names();
        let known: Vec<&str> = all.iter().map(String::as_str).collect();
        let names: Vec<String> = match selection {
            Some(list) => {
                let mut names: Vec<String> = Vec::new();
                for n in list.split(',').map(|n| n.trim().to_ascii_lowercase()) {
                    if n.is_empty() {
                        continue;
                    }
                    if !known.contains(&n.as_str()) {
                        anyhow::bail!(
                            "unknown agent `{n}` in `--agents {list}`: the agents are {}",
                            known.join(", ")
                        );
                    }
                    if !names.contains(&n) {
                        names.push(n);
                    }
                }
                if names.is_empty() {
                    anyhow::bail!("`--agents` names no agent: pass e.g. `--agents claude,codex`");
                }
                names
            }
            None => {
                let names: Vec<String> = known
                    .iter()
                    .filter(|n| self.agents.get(**n).and_then(|a| a.enabled) != Some(false))
                    .map(|n| n.to_string())
                    .collect();
                if names.is_empty() {
                    anyhow::bail!(
                        "every agent is disabled (enabled = false) in {}: enable one or pass `--agents NAME`",
                        self.files_list()
                    );
                }
                names
            }
        };
        Ok(names.iter().map(|n| self.spec_for(n)).collect())
    }

    fn spec_for(&self, name: &str) -> AgentSpec {
        let layer = self.agents.get(name).cloned().unwrap_or_default();
        let default = AgentSpec::new(name, name);
        AgentSpec {
            display: layer.display.unwrap_or(default.display),
            kind: default.kind,
            command: layer.command.unwrap_or(default.command),
            extra_args: layer.args.unwrap_or_default(),
            model: layer.model,
            effort: layer.effort,
            timeout: layer.timeout.unwrap_or(default.timeout),
            env: layer.env,
            pass_forge_tokens: layer.pass_forge_tokens.unwrap_or(self.pass_forge_tokens),
            name: default.name,
        }
    }

    fn files_list(&self) -> String {
        if self.files.is_empty() {
            return "no config file".to_string();
        }
        self.files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(" and ")
    }
}
