//! A reviewer as configured: which backend runs it and with what settings. Config builds these;
//! dispatch runs them; the report names them.

use std::collections::BTreeMap;
use std::time::Duration;

/// What an agent is: which CLI (and so which argument layout and output reader) or which model
/// API. Chosen by config (`kind = ...`, or the registry name), never guessed at dispatch time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgentKind {
    Claude,
    Codex,
    Gemini,
    /// A custom command: run it with the extra args only, prompt on stdin, and take all of
    /// stdout as the review text.
    Generic,
}

/// How dispatch runs a reviewer: each backend is a module of `dispatch::backend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// A local process (an agent CLI or a custom command) in a sandboxed checkout.
    Process,
}

impl AgentKind {
    /// The registry entry for an agent name (`claude`, `codex`, `gemini`, case-insensitive).
    pub fn from_name(name: &str) -> AgentKind {
        match name.trim().to_ascii_lowercase().as_str() {
            "claude" => AgentKind::Claude,
            "codex" => AgentKind::Codex,
            "gemini" => AgentKind::Gemini,
            _ => AgentKind::Generic,
        }
    }

    /// The backend that runs this kind of agent.
    pub fn backend(self) -> BackendKind {
        match self {
            AgentKind::Claude | AgentKind::Codex | AgentKind::Gemini | AgentKind::Generic => {
                BackendKind::Process
            }
        }
    }

    /// The context window of the models this kind of agent uses by default, in tokens: what
    /// the brief's budget is sized to when config does not say (`context_tokens`).
    pub fn default_context_tokens(self) -> usize {
        match self {
            AgentKind::Claude => 200_000,
            AgentKind::Codex => 272_000,
            AgentKind::Gemini => 1_000_000,
            AgentKind::Generic => 32_000,
        }
    }

    /// The npm package that provides the CLI, for "install it with ..." messages.
    pub fn npm_package(self) -> Option<&'static str> {
        match self {
            AgentKind::Claude => Some("@anthropic-ai/claude-code"),
            AgentKind::Codex => Some("@openai/codex"),
            AgentKind::Gemini => Some("@google/gemini-cli"),
            AgentKind::Generic => None,
        }
    }
}

/// The registry's known agents with their default executable names.
pub const KNOWN_AGENTS: [(&str, AgentKind); 3] = [
    ("claude", AgentKind::Claude),
    ("codex", AgentKind::Codex),
    ("gemini", AgentKind::Gemini),
];

/// Everything needed to launch one agent: what config and the command line resolved to.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSpec {
    /// Registry name in lower case: `claude`, `codex`, `gemini`.
    pub name: String,
    /// How reports name it: "Claude Opus 4.6".
    pub display: String,
    /// Which CLI or API it is; decides its backend ([`AgentKind::backend`]).
    pub kind: AgentKind,
    /// The executable to run (a name looked up on PATH, or a path).
    pub command: String,
    /// Extra arguments appended after the ones the registry builds.
    pub extra_args: Vec<String>,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub timeout: Duration,
    /// Variables set on top of the inherited environment.
    pub env: BTreeMap<String, String>,
    /// Keep forge tokens (GITHUB_TOKEN, GH_TOKEN) in the agent's environment.
    pub pass_forge_tokens: bool,
    /// More inherited variables the agent may see, by name (the environment is an allowlist:
    /// `dispatch::environment`).
    pub pass_env: Vec<String>,
    /// More directories the agent may read, and read and write, in its sandbox
    /// (`dispatch::sandbox`).
    pub sandbox_read: Vec<std::path::PathBuf>,
    pub sandbox_write: Vec<std::path::PathBuf>,
    /// The model's context window in tokens (`context_tokens` in config), else the kind's
    /// default ([`AgentKind::default_context_tokens`]).
    pub context_tokens: Option<usize>,
}

impl AgentSpec {
    /// The most tokens the brief should take for this agent: a quarter of its context window,
    /// leaving the rest for the code it reads and the review it writes.
    pub fn brief_budget(&self) -> usize {
        self.context_tokens
            .unwrap_or_else(|| self.kind.default_context_tokens())
            / 4
    }
}

/// An agent that has not answered in this long is stopped.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

impl AgentSpec {
    /// Agent `name` running `command` with every default: its name capitalized for the report,
    /// no extra arguments, model or effort, the default timeout, no added environment, forge
    /// tokens removed. Config and tests set what differs.
    pub fn new(name: &str, command: impl Into<String>) -> Self {
        AgentSpec {
            name: name.to_string(),
            display: crate::types::default_display(name),
            kind: AgentKind::from_name(name),
            command: command.into(),
            extra_args: Vec::new(),
            model: None,
            effort: None,
            timeout: DEFAULT_TIMEOUT,
            env: BTreeMap::new(),
            pass_forge_tokens: false,
            pass_env: Vec::new(),
            sandbox_read: Vec::new(),
            sandbox_write: Vec::new(),
            context_tokens: None,
        }
    }
}
