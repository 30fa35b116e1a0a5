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
pub mod limits;
pub mod trust;

pub use file::{AgentLayer, Layer, parse_layer, schema};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

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
    /// `[prices."model"]` from the user's config, over the built-in list prices.
    pub prices: BTreeMap<String, crate::cost::Price>,
    /// The files that were read, lowest priority first (for messages).
    pub files: Vec<PathBuf>,
}

/// `$XDG_CONFIG_HOME/deep-review/config.toml` (`~/.config/...` when unset).
pub fn user_config_path() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("deep-review").join("config.toml"))
}

/// Which version of the repository's `.deep-review.toml` a command reads.
#[derive(Debug, Clone, Copy)]
pub enum RepoConfig<'a> {
    /// The file in the working tree (`deep-review agents`, `trust`): no change is under review.
    WorkingTree,
    /// The version at the merge-base of the change under review: the base steers the review,
    /// so a change cannot disable agents, shorten timeouts or swap models for its own review.
    AtBase { merge_base: &'a str, head: &'a str },
}

/// A merged config and what the user should know about how it was read.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub config: Config,
    /// One sentence each: ignored keys and how to trust them, which version was read.
    pub notes: Vec<String>,
}

/// Loads the user file, then the repository's `.deep-review.toml` over it.
///
/// The user file is trusted. The repository file is someone else's until the user trusts it
/// (`deep-review trust`, by content hash): until then its keys that run programs or read files
/// (`command`, `args`, `env`, `pass_env`, `pass_forge_tokens`, `brief_template`,
/// `sandbox_read`, `sandbox_write`, custom agents) are ignored, each named in a note; models,
/// efforts, timeouts, display names and `enabled` apply. A symlinked repository file is not
/// read at all (its target could be anything, edited by anyone).
pub fn load(repo_root: &Path, which: RepoConfig<'_>) -> anyhow::Result<Loaded> {
    let names: Vec<&str> = KNOWN_AGENTS.iter().map(|a| a.0).collect();
    let mut loaded = Loaded {
        config: match user_config_path() {
            Some(user) => load_files(&[user])?,
            None => Config::default(),
        },
        notes: Vec::new(),
    };
    let repo_file = repo_root.join(REPO_CONFIG_FILE);
    let text = match which {
        RepoConfig::WorkingTree => match std::fs::symlink_metadata(&repo_file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => anyhow::bail!("cannot read config file {}: {e}", repo_file.display()),
            Ok(meta) if meta.file_type().is_symlink() => {
                loaded.notes.push(format!(
                    "{} is a symlink and is not read: a repository config must be a plain file",
                    repo_file.display()
                ));
                None
            }
            Ok(_) => Some(
                std::fs::read_to_string(&repo_file)
                    .with_context(|| format!("cannot read config file {}", repo_file.display()))?,
            ),
        },
        RepoConfig::AtBase { merge_base, head } => {
            let at_base = git_blob(repo_root, merge_base, REPO_CONFIG_FILE);
            let at_head = git_blob(repo_root, head, REPO_CONFIG_FILE);
            if at_base.as_ref().map(|b| &b.id) != at_head.as_ref().map(|b| &b.id) {
                loaded.notes.push(format!(
                    "the change under review edits {REPO_CONFIG_FILE}: its version at the \
                     merge-base is used ({}); the change's version applies once it is merged",
                    if at_base.is_some() {
                        "its settings"
                    } else {
                        "there is none there"
                    }
                ));
            }
            match at_base {
                Some(blob) if blob.symlink => {
                    loaded.notes.push(format!(
                        "{REPO_CONFIG_FILE} is a symlink at the merge-base and is not read: a \
                         repository config must be a plain file"
                    ));
                    None
                }
                Some(blob) => Some(blob.text),
                None => None,
            }
        }
    };
    let Some(text) = text else {
        return Ok(loaded);
    };
    let layer = parse_layer(&text, &repo_file, &names)?;
    let layer = if trust::is_trusted(&repo_file, &text) {
        layer
    } else {
        // The agents the repository may tune: the registry's and those the user's own config
        // defines (its command comes from the user). Only an agent that exists nowhere but in
        // this file is dropped whole: it would be nothing but the file's command.
        let defined: Vec<&str> = names
            .iter()
            .copied()
            .chain(loaded.config.agents.keys().map(String::as_str))
            .collect();
        let (layer, ignored) = layer.without_execution(&defined);
        if !ignored.is_empty() {
            loaded.notes.push(format!(
                "{} in {} {} ignored: this repository's config is not trusted, and an untrusted \
                 config does not choose what runs on your machine or what it reads (read the \
                 file, then `deep-review trust` trusts this version; or set them in {})",
                ignored.join(", "),
                repo_file.display(),
                if ignored.len() == 1 { "is" } else { "are" },
                user_config_path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "your user config".into())
            ));
        }
        layer
    };
    loaded.config.merge(layer);
    loaded.config.files.push(repo_file);
    loaded.config.check_custom_agents()?;
    Ok(loaded)
}

/// A file's content at a commit, read from git objects (never the working tree).
struct Blob {
    id: String,
    symlink: bool,
    text: String,
}

fn git_blob(repo: &Path, commit: &str, path: &str) -> Option<Blob> {
    let listing = crate::git::git_text(repo, &["ls-tree", commit, "--", path]).ok()?;
    // `<mode> blob <id>\t<path>`
    let (info, _) = listing.split_once('\t')?;
    let mut parts = info.split(' ');
    let mode = parts.next()?;
    let kind = parts.next()?;
    let id = parts.next()?.to_string();
    if kind != "blob" {
        return None;
    }
    let bytes = crate::git::git_bytes(repo, &["cat-file", "blob", &id]).ok()?;
    Some(Blob {
        symlink: mode == "120000",
        text: String::from_utf8_lossy(&bytes).into_owned(),
        id,
    })
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
    config.check_custom_agents()?;
    Ok(config)
}

impl Config {
    /// Every agent the registry does not know needs a command or a model API `kind`; every
    /// model API needs a model, and `openai-compatible` an address.
    fn check_custom_agents(&self) -> anyhow::Result<()> {
        let names: Vec<&str> = KNOWN_AGENTS.iter().map(|a| a.0).collect();
        for (name, agent) in &self.agents {
            if let Some(kind) = agent.kind.filter(|k| k.is_http()) {
                if agent.model.is_none() {
                    anyhow::bail!(
                        "`[agents.{name}]` in {} is a `{}` model API with no `model`: name the \
                         model it asks for (`model = \"...\"`)",
                        self.files_list(),
                        kind.config_name()
                    );
                }
                if kind.default_base_url().is_none() && agent.base_url.is_none() {
                    anyhow::bail!(
                        "`[agents.{name}]` in {} is `{}` with no `base_url`: give the server's \
                         address, e.g. `base_url = \"http://127.0.0.1:11434/v1\"`",
                        self.files_list(),
                        kind.config_name()
                    );
                }
                continue;
            }
            if !names.contains(&name.as_str()) && agent.command.is_none() {
                anyhow::bail!(
                    "`[agents.{name}]` in {} has no `command`: an agent the registry does not know \
                     ({}) runs as a generic agent (prompt on stdin, review on stdout) and needs \
                     `command = \"PROGRAM\"`",
                    self.files_list(),
                    names.join(", ")
                );
            }
        }
        Ok(())
    }

    /// Lays `layer` over this config: values it sets win, `env` maps are merged key by key.
    pub fn merge(&mut self, layer: Layer) {
        if let Some(p) = layer.pass_forge_tokens {
            self.pass_forge_tokens = p;
        }
        if layer.brief_template.is_some() {
            self.brief_template = layer.brief_template;
        }
        self.prices.extend(layer.prices);
        for (name, over) in layer.agents {
            let base = self.agents.entry(name).or_default();
            macro_rules! take {
                ($($f:ident),*) => { $( if over.$f.is_some() { base.$f = over.$f; } )* };
            }
            take!(
                kind,
                command,
                args,
                model,
                effort,
                context_tokens,
                timeout,
                enabled,
                display,
                pass_forge_tokens,
                base_url,
                max_output_tokens,
                temperature,
                request_timeout,
                api_key_env,
                structured_output,
                network
            );
            base.env.extend(over.env);
            base.pass_env.extend(over.pass_env);
            base.sandbox_read.extend(over.sandbox_read);
            base.sandbox_write.extend(over.sandbox_write);
            base.sandbox_sockets.extend(over.sandbox_sockets);
            base.network_allow.extend(over.network_allow);
            base.limits = over.limits.over(base.limits);
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
                let specs = self.enabled_agent_specs();
                if specs.is_empty() {
                    anyhow::bail!(
                        "every agent is disabled (enabled = false) in {}: enable one or pass `--agents NAME`",
                        self.files_list()
                    );
                }
                return Ok(specs);
            }
        };
        Ok(names.iter().map(|n| self.spec_for(n)).collect())
    }

    /// Every enabled agent (none when config disables them all): the registry's in its order,
    /// then custom agents from config by name.
    pub fn enabled_agent_specs(&self) -> Vec<AgentSpec> {
        self.agent_names()
            .iter()
            .filter(|n| self.agents.get(n.as_str()).and_then(|a| a.enabled) != Some(false))
            .map(|n| self.spec_for(n))
            .collect()
    }

    /// Whether a config file has a table for agent `name`: the user asked for it by name.
    pub fn configures(&self, name: &str) -> bool {
        self.agents.contains_key(name)
    }

    fn spec_for(&self, name: &str) -> AgentSpec {
        let layer = self.agents.get(name).cloned().unwrap_or_default();
        let default = AgentSpec::new(name, name);
        AgentSpec {
            display: layer.display.unwrap_or(default.display),
            kind: layer.kind.unwrap_or(default.kind),
            command: layer.command.unwrap_or(default.command),
            pass_env: layer.pass_env,
            sandbox_read: layer.sandbox_read,
            sandbox_write: layer.sandbox_write,
            sandbox_sockets: layer.sandbox_sockets,
            network: layer.network.unwrap_or_default(),
            network_allow: layer.network_allow,
            extra_args: layer.args.unwrap_or_default(),
            model: layer.model,
            effort: layer.effort,
            context_tokens: layer.context_tokens,
            http: crate::types::HttpSettings {
                base_url: layer.base_url,
                max_output_tokens: layer.max_output_tokens,
                temperature: layer.temperature,
                request_timeout: layer.request_timeout,
                api_key_env: layer.api_key_env,
                structured_output: layer.structured_output,
            },
            timeout: layer.timeout.unwrap_or(default.timeout),
            env: layer.env,
            pass_forge_tokens: layer.pass_forge_tokens.unwrap_or(self.pass_forge_tokens),
            limits: layer.limits.resolve(),
            name: default.name,
        }
    }

    pub fn files_list(&self) -> String {
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
