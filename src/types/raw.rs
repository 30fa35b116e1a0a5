//! What an agent run produced, before anything parses it.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How an agent run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Ok,
    Failed,
    TimedOut,
    Cancelled,
}

/// Token counts as the agent's CLI reported them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TokenUsage {
    pub input: u64,
    pub output: u64,
    #[serde(default)]
    pub cached: u64,
}

/// One agent's run: the review text and everything measured about the run.
/// Saved in the run bundle before it is parsed, so nothing is lost when parsing fails.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RawReview {
    /// Short lower-case name: `claude`, `codex`, `gemini`.
    pub agent: String,
    /// "Claude Opus 4.6"
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    pub status: RunStatus,
    /// The whole review text (for stream output: every assistant text block joined).
    #[serde(default)]
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub duration_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Tool calls by tool name.
    #[serde(default)]
    pub tool_calls: BTreeMap<String, u64>,
    #[serde(default)]
    pub stderr_tail: String,
    /// One sentence saying why the run failed, for the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How many times the run was retried after a transient failure.
    #[serde(default)]
    pub retries: u32,
    /// What the agent changed in its worktree, if anything (it must change nothing).
    #[serde(default)]
    pub worktree_changes: Vec<String>,
}

impl RawReview {
    pub fn total_tool_calls(&self) -> u64 {
        self.tool_calls.values().sum()
    }
}
