//! The run bundle: everything a run produced, written before anything parses it, so a parser
//! bug or a crash later never loses an agent's work, and read back to consolidate a run again
//! (`consolidate --bundle`) or to finish it (`run --resume`):
//!
//! ```text
//! <bundle>/run.json                  the run: its id, start time and reviewers, in order
//! <bundle>/brief.md                  the brief exactly as the agents got it
//! <bundle>/target.json               the resolved target (commits, changed files)
//! <bundle>/events.jsonl              one JSON object per dispatch event
//! <bundle>/<agent>/command.txt       the command line (or a model API's endpoint), secrets redacted
//! <bundle>/<agent>/prompt.md         a model API's own prompt (the brief packed with the code)
//! <bundle>/<agent>/stdout.jsonl      raw stdout, streamed to disk as it arrives
//! <bundle>/<agent>/stdout.attempt-N.jsonl   stdout of an attempt that was retried
//! <bundle>/<agent>/review.md         the final review text
//! <bundle>/<agent>/stderr-tail.txt   the end of stderr
//! <bundle>/<agent>/network.jsonl     every connection the agent made through its proxy, refused or not
//! <bundle>/<agent>/meta.json         the RawReview without its text, plus the attempts
//! ```

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::types::RawReview;

pub const RUN_FILE: &str = "run.json";
pub const BRIEF_FILE: &str = "brief.md";
pub const TARGET_FILE: &str = "target.json";
pub const EVENTS_FILE: &str = "events.jsonl";
pub const COMMAND_FILE: &str = "command.txt";
pub const PROMPT_FILE: &str = "prompt.md";
pub const STDOUT_FILE: &str = "stdout.jsonl";
pub const REVIEW_FILE: &str = "review.md";
pub const STDERR_FILE: &str = "stderr-tail.txt";
pub const META_FILE: &str = "meta.json";
pub const NETWORK_FILE: &str = "network.jsonl";

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

/// Writes the command line as shown to users (secrets already redacted by the caller).
pub fn write_command(dir: &Path, shown: &str) -> Result<()> {
    write(dir, COMMAND_FILE, format!("{shown}\n").as_bytes())
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

/// One agent's run read back from its directory: `meta.json` with the text of `review.md`.
/// `None` when the agent has no `meta.json` (it never finished writing its results).
pub fn read_agent(dir: &Path) -> Result<Option<RawReview>> {
    let meta_path = dir.join(META_FILE);
    let meta = match std::fs::read_to_string(&meta_path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", meta_path.display())),
    };
    let mut review: RawReview = serde_json::from_str(&meta).with_context(|| {
        format!(
            "{} is not the metadata of an agent run: {}",
            meta_path.display(),
            "it may come from another version of deep-review"
        )
    })?;
    let review_path = dir.join(REVIEW_FILE);
    review.text = match std::fs::read(&review_path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", review_path.display())),
    };
    Ok(Some(review))
}

/// One reviewer of a run as `run.json` records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReviewer {
    pub name: String,
    pub display: String,
    /// The directory under the bundle that holds its files.
    pub dir: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
}

/// `run.json`: what a bundle is a run of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub id: String,
    /// When the run started (local time with its offset).
    pub started_at: chrono::DateTime<chrono::FixedOffset>,
    /// The reviewers, in the order the report lists them.
    pub reviewers: Vec<RunReviewer>,
    /// The whole run's duration, written when it ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_clock_s: Option<f64>,
}

/// Writes a file of an agent's directory, secrets redacted.
fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let path = dir.join(name);
    std::fs::write(&path, crate::redact::redact_bytes(bytes))
        .with_context(|| format!("could not write {}", path.display()))
}

/// A run read back from its bundle.
#[derive(Debug, Clone)]
pub struct SavedRun {
    /// `run.json`, when the run wrote one.
    pub record: Option<RunRecord>,
    pub target: crate::types::Target,
    /// The brief exactly as the agents got it.
    pub brief: String,
    /// Each agent's run that finished writing its results, in the order of `run.json`
    /// (directory order for a bundle without one).
    pub runs: Vec<RawReview>,
    /// Reviewers of `run.json` that left no results (killed before they finished).
    pub unfinished: Vec<RunReviewer>,
}

/// Reads a run bundle: what the run was given and what each agent produced.
pub fn read(dir: &Path) -> Result<SavedRun> {
    let target_path = dir.join(TARGET_FILE);
    let target_text = std::fs::read_to_string(&target_path).with_context(|| {
        format!(
            "cannot read {}: is {} a run bundle (`<store>/runs/<id>`)?",
            target_path.display(),
            dir.display()
        )
    })?;
    let target: crate::types::Target = serde_json::from_str(&target_text)
        .with_context(|| format!("{} is not a saved target", target_path.display()))?;
    let brief = std::fs::read_to_string(dir.join(BRIEF_FILE)).unwrap_or_default();
    let record: Option<RunRecord> = match std::fs::read_to_string(dir.join(RUN_FILE)) {
        Ok(text) => Some(
            serde_json::from_str(&text)
                .with_context(|| format!("{} is not a run record", dir.join(RUN_FILE).display()))?,
        ),
        Err(_) => None,
    };
    let dirs: Vec<(String, Option<RunReviewer>)> = match &record {
        Some(r) => r
            .reviewers
            .iter()
            .map(|rv| (rv.dir.clone(), Some(rv.clone())))
            .collect(),
        None => {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .with_context(|| format!("cannot read {}", dir.display()))?
                .flatten()
                .filter(|e| e.path().join(META_FILE).is_file())
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .collect();
            names.sort();
            names.into_iter().map(|n| (n, None)).collect()
        }
    };
    let mut runs = Vec::new();
    let mut unfinished = Vec::new();
    for (name, reviewer) in dirs {
        match read_agent(&agent_dir(dir, &name))? {
            Some(run) => runs.push(run),
            None => unfinished.extend(reviewer),
        }
    }
    Ok(SavedRun {
        record,
        target,
        brief,
        runs,
        unfinished,
    })
}

/// Moves an agent's files aside before `run --resume` runs it again, so the earlier attempt
/// stays in the bundle (`<agent>/before-resume-N/`).
pub fn set_aside(dir: &Path) -> Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    let mut n = 1;
    while dir.join(format!("before-resume-{n}")).exists() {
        n += 1;
    }
    let aside = dir.join(format!("before-resume-{n}"));
    std::fs::create_dir(&aside).with_context(|| format!("cannot create {}", aside.display()))?;
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::rename(entry.path(), aside.join(entry.file_name()))?;
        }
    }
    Ok(())
}
