//! The run bundle's per-agent files, written before anything parses the review, so a parser
//! bug or a crash later never loses an agent's work:
//!
//! ```text
//! <bundle>/<agent>/command.txt       the command line, secrets redacted
//! <bundle>/<agent>/stdout.jsonl      raw stdout, streamed to disk as it arrives
//! <bundle>/<agent>/stdout.attempt-N.jsonl   stdout of an attempt that was retried
//! <bundle>/<agent>/review.md         the final review text
//! <bundle>/<agent>/stderr-tail.txt   the end of stderr
//! <bundle>/<agent>/meta.json         the RawReview without its text, plus the attempts
//! ```

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use super::agents::AgentCommand;
use crate::types::RawReview;

pub const COMMAND_FILE: &str = "command.txt";
pub const STDOUT_FILE: &str = "stdout.jsonl";
pub const REVIEW_FILE: &str = "review.md";
pub const STDERR_FILE: &str = "stderr-tail.txt";
pub const META_FILE: &str = "meta.json";

/// One attempt of a run, as `meta.json` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct AttemptRecord {
    pub duration_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub outcome: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why it was retried, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retried_because: Option<String>,
}

/// What `meta.json` holds beyond the RawReview.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MetaExtra {
    pub attempts: Vec<AttemptRecord>,
    /// The duration the CLI itself reported for the last attempt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cli_duration_s: Option<f64>,
    /// The commit the agent reviewed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    /// Seconds spent making the worktree and, after the run, checking and removing it: the
    /// time dispatch adds around the agent's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree_setup_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree_cleanup_s: Option<f64>,
}

pub fn agent_dir(bundle_dir: &Path, dir_name: &str) -> PathBuf {
    bundle_dir.join(dir_name)
}

pub fn write_command(dir: &Path, command: &AgentCommand) -> Result<()> {
    write(
        dir,
        COMMAND_FILE,
        format!("{}\n", command.display()).as_bytes(),
    )
}

/// Moves an attempt's stdout aside before the next attempt starts its own.
pub fn keep_attempt_stdout(dir: &Path, attempt: u32) {
    let from = dir.join(STDOUT_FILE);
    if from.exists() {
        let _ = std::fs::rename(&from, dir.join(format!("stdout.attempt-{attempt}.jsonl")));
    }
}

/// Writes `review.md`, `stderr-tail.txt` and `meta.json`.
pub fn write_results(dir: &Path, review: &RawReview, extra: &MetaExtra) -> Result<()> {
    write(dir, REVIEW_FILE, review.text.as_bytes())?;
    write(dir, STDERR_FILE, review.stderr_tail.as_bytes())?;
    let mut meta =
        serde_json::to_value(review).context("could not serialise the run's metadata")?;
    if let Some(map) = meta.as_object_mut() {
        map.remove("text");
        let extra = serde_json::to_value(extra).context("could not serialise the attempts")?;
        if let Some(extra) = extra.as_object() {
            for (k, v) in extra {
                map.insert(k.clone(), v.clone());
            }
        }
    }
    let text = serde_json::to_string_pretty(&meta).context("could not serialise meta.json")?;
    write(dir, META_FILE, format!("{text}\n").as_bytes())
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).with_context(|| format!("could not write {}", path.display()))
}
