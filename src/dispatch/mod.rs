//! Dispatch stage: the brief to every agent at once, each in its own read-only worktree.

use std::collections::BTreeMap;
use std::time::Duration;

/// Everything needed to launch one agent: what config and the command line resolved to.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSpec {
    /// Registry name in lower case: `claude`, `codex`, `gemini`.
    pub name: String,
    /// How reports name it: "Claude Opus 4.6".
    pub display: String,
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
}
