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
    /// Anthropic's Messages API (`kind = "anthropic"`).
    Anthropic,
    /// OpenAI's Responses API (`kind = "openai"`).
    OpenAi,
    /// Google's Gemini API, `generateContent` (`kind = "gemini"`; the Gemini CLI is
    /// `gemini-cli`).
    GeminiApi,
    /// OpenAI-style chat completions as Ollama, vLLM, the llama.cpp server and most gateways
    /// serve them (`kind = "openai-compatible"`).
    OpenAiCompatible,
}

/// How dispatch runs a reviewer: each backend is a module of `dispatch::backend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// A local process (an agent CLI or a custom command) in a sandboxed checkout.
    Process,
    /// A model API over HTTP: the prompt holds the code (it cannot read the repository).
    Http,
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
            AgentKind::Anthropic
            | AgentKind::OpenAi
            | AgentKind::GeminiApi
            | AgentKind::OpenAiCompatible => BackendKind::Http,
        }
    }

    /// A model API over HTTP rather than a local process.
    pub fn is_http(self) -> bool {
        self.backend() == BackendKind::Http
    }

    /// The kind as config writes it (`kind = "..."`).
    pub fn config_name(self) -> &'static str {
        match self {
            AgentKind::Claude => "claude",
            AgentKind::Codex => "codex",
            AgentKind::Gemini => "gemini-cli",
            AgentKind::Generic => "command",
            AgentKind::Anthropic => "anthropic",
            AgentKind::OpenAi => "openai",
            AgentKind::GeminiApi => "gemini",
            AgentKind::OpenAiCompatible => "openai-compatible",
        }
    }

    /// The kind named by config's `kind = "..."`, or the list of kinds when it names none.
    pub fn from_config_name(text: &str) -> Result<AgentKind, String> {
        const ALL: [AgentKind; 8] = [
            AgentKind::Claude,
            AgentKind::Codex,
            AgentKind::Gemini,
            AgentKind::Generic,
            AgentKind::Anthropic,
            AgentKind::OpenAi,
            AgentKind::GeminiApi,
            AgentKind::OpenAiCompatible,
        ];
        let wanted = text.trim().to_ascii_lowercase();
        ALL.into_iter()
            .find(|k| k.config_name() == wanted)
            .ok_or_else(|| {
                let names: Vec<&str> = ALL.iter().map(|k| k.config_name()).collect();
                format!(
                    "`{wanted}` is not an agent kind: use {} (CLIs: claude, codex, gemini-cli, \
                     command; model APIs: anthropic, openai, gemini, openai-compatible)",
                    names.join(", ")
                )
            })
    }

    /// The API's own address when config gives no `base_url`; `None` for kinds that need one.
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            AgentKind::Anthropic => Some("https://api.anthropic.com"),
            AgentKind::OpenAi => Some("https://api.openai.com/v1"),
            AgentKind::GeminiApi => Some("https://generativelanguage.googleapis.com/v1beta"),
            _ => None,
        }
    }

    /// The variable that holds the API key when config names none (`api_key_env`). None for
    /// `openai-compatible`: a key meant for OpenAI is never sent to another server unless the
    /// user's config says so.
    pub fn default_key_env(self) -> Option<&'static str> {
        match self {
            AgentKind::Anthropic => Some("ANTHROPIC_API_KEY"),
            AgentKind::OpenAi => Some("OPENAI_API_KEY"),
            AgentKind::GeminiApi => Some("GEMINI_API_KEY"),
            _ => None,
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
            AgentKind::Anthropic => 200_000,
            AgentKind::OpenAi => 400_000,
            AgentKind::GeminiApi => 1_000_000,
            // Local servers start small (llama.cpp's default is 4,096): say it in config.
            AgentKind::OpenAiCompatible => 8_192,
        }
    }

    /// The npm package that provides the CLI, for "install it with ..." messages.
    pub fn npm_package(self) -> Option<&'static str> {
        match self {
            AgentKind::Claude => Some("@anthropic-ai/claude-code"),
            AgentKind::Codex => Some("@openai/codex"),
            AgentKind::Gemini => Some("@google/gemini-cli"),
            _ => None,
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
    /// UNIX sockets of the user's the agent may connect to (`sandbox_sockets`: an ssh-agent,
    /// a docker socket); none by default.
    pub sandbox_sockets: Vec<std::path::PathBuf>,
    /// Its network: its provider only (the default) or the host's network (`network = "open"`).
    pub network: NetworkMode,
    /// More destinations it may reach (`network_allow`: `host`, `host:port`, `*.domain`, a
    /// URL).
    pub network_allow: Vec<String>,
    /// The model's context window in tokens (`context_tokens` in config), else the kind's
    /// default ([`AgentKind::default_context_tokens`]).
    pub context_tokens: Option<usize>,
    /// How a model API is called; unused by local processes.
    pub http: HttpSettings,
    /// What its processes may take of the machine (`max_processes`, `max_memory`,
    /// `max_cpu_time`).
    pub limits: crate::types::Limits,
}

/// What network an agent process gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NetworkMode {
    /// Its provider's hosts (and `network_allow`) only, through deep-review's filtering proxy.
    #[default]
    Provider,
    /// The host's network, unfiltered (`network = "open"`): the report says so.
    Open,
}

impl NetworkMode {
    /// The mode config names (`network = "provider" | "open"`).
    pub fn from_config(text: &str) -> Result<NetworkMode, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "provider" | "allowlist" => Ok(NetworkMode::Provider),
            "open" => Ok(NetworkMode::Open),
            other => Err(format!(
                "`{other}` is not a network mode: use \"provider\" (the default: its provider's hosts only) or \"open\""
            )),
        }
    }
}

/// The settings of a reviewer that is a model API (`kind = "anthropic"`, ...). Where to send
/// the prompt and which key goes with it come from the user's own config only: a repository's
/// config cannot choose them (`config::Layer::without_execution`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HttpSettings {
    /// The API's address (`http://127.0.0.1:11434/v1`); the kind's default when `None`.
    pub base_url: Option<String>,
    /// The most tokens the answer may take; see [`AgentSpec::max_output_tokens`].
    pub max_output_tokens: Option<u32>,
    pub temperature: Option<f64>,
    /// The longest one request may take, from sending to the last byte; the agent's own
    /// `timeout` still bounds every attempt together.
    pub request_timeout: Option<Duration>,
    /// The variable holding the API key, instead of the kind's usual one.
    pub api_key_env: Option<String>,
    /// Ask for JSON of the raw-review schema where the API can constrain its output to one;
    /// `Some(false)` turns it off (a server that rejects schemas). Default: on, except for
    /// Anthropic.
    pub structured_output: Option<bool>,
}

/// The answer's room when config does not say: enough for a long review.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8_192;

impl AgentSpec {
    /// The model's context window: config's `context_tokens`, else the kind's default.
    pub fn context_window(&self) -> usize {
        self.context_tokens
            .unwrap_or_else(|| self.kind.default_context_tokens())
    }

    /// The most tokens the brief should take for this agent: a quarter of its context window,
    /// leaving the rest for the code it reads and the review it writes.
    pub fn brief_budget(&self) -> usize {
        self.context_window() / 4
    }

    /// The most tokens a model API may answer with: config's `max_output_tokens`, else
    /// [`DEFAULT_MAX_OUTPUT_TOKENS`] or a quarter of the context, whichever is smaller.
    pub fn max_output_tokens(&self) -> u32 {
        self.http.max_output_tokens.unwrap_or_else(|| {
            let quarter = u32::try_from(self.context_window() / 4).unwrap_or(u32::MAX);
            DEFAULT_MAX_OUTPUT_TOKENS.min(quarter).max(1)
        })
    }

    /// What the packed prompt of a model API may take: its context less its answer's room.
    pub fn prompt_budget(&self) -> usize {
        self.context_window()
            .saturating_sub(self.max_output_tokens() as usize)
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
            sandbox_sockets: Vec::new(),
            network: NetworkMode::default(),
            network_allow: Vec::new(),
            context_tokens: None,
            http: HttpSettings::default(),
            limits: crate::types::Limits::default(),
        }
    }
}
