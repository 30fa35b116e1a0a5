//! Everything a run needs, resolved before anything runs or is written: the target, the
//! config, the agents and the brief. `run --dry-run` prints a plan; `run` executes one.

use std::path::PathBuf;

use chrono::{DateTime, Local};

use crate::brief::{self, BriefOptions};
use crate::config::{self, Config};
use crate::dispatch::backend::commands::find_program;
use crate::store::{Store, run_id};
use crate::target::{self, TargetSpec};
use crate::types::{AgentSpec, Brief, Target};

/// What a front-end asks to run.
#[derive(Debug, Clone, Default)]
pub struct PlanRequest {
    /// The repository (any directory inside it).
    pub repo: PathBuf,
    pub target: TargetSpec,
    /// `--agents claude,codex`: exactly these, installed or not. `None`: every enabled agent
    /// that is installed.
    pub agents: Option<String>,
    /// A brief template given on the command line (trusted: the user typed it).
    pub brief_template: Option<PathBuf>,
    /// Where `.reviews/` goes instead of the repository root.
    pub out: Option<PathBuf>,
}

/// A run, resolved.
#[derive(Debug, Clone)]
pub struct Plan {
    pub target: Target,
    pub config: Config,
    pub agents: Vec<AgentSpec>,
    /// Agents the config enables that are not installed, left out of a default run.
    pub not_installed: Vec<AgentSpec>,
    pub brief: Brief,
    pub store: Store,
    /// When the run started: names the run id and the report's date.
    pub started_at: DateTime<Local>,
    /// What the user should know before the run (ignored config keys, left-out agents), one
    /// sentence each.
    pub notes: Vec<String>,
}

impl Plan {
    /// `YYYYMMDD-HHMMSS-<label>` (the store adds `-2` if that bundle exists already).
    pub fn id(&self) -> String {
        run_id(self.started_at, &self.target.label)
    }
}

/// Whether the change under review adds, edits, renames or deletes `.deep-review.toml`.
fn changes_repo_config(target: &Target) -> bool {
    target.changed_files.iter().any(|f| {
        f.path == config::REPO_CONFIG_FILE
            || f.old_path.as_deref() == Some(config::REPO_CONFIG_FILE)
    })
}

/// Resolves the target, loads config, picks the agents and builds the brief.
pub fn plan(request: &PlanRequest) -> anyhow::Result<Plan> {
    let target = target::resolve(&request.repo, &request.target)?;
    let mut notes = Vec::new();
    let config = if changes_repo_config(&target) {
        let (config, ignored) = config::load_untrusted_repo(&target.repo)?;
        notes.extend(ignored);
        config
    } else {
        config::load(&target.repo)?
    };
    let mut agents = config.agent_specs(request.agents.as_deref())?;
    let mut not_installed = Vec::new();
    if request.agents.is_none() {
        let (found, missing) = installed(agents);
        for a in missing.iter().filter(|_| !found.is_empty()) {
            notes.push(format!(
                "{} is not installed, reviewing without it: {} is not on PATH",
                a.display,
                install_hint(a)
            ));
        }
        agents = found;
        not_installed = missing;
    }
    let template = brief::template_path(
        request.brief_template.as_deref(),
        config.brief_template.as_deref(),
    );
    let brief = brief::build(
        &target,
        &BriefOptions {
            template,
            ..BriefOptions::default()
        },
    )?;
    let out_root = request.out.clone().unwrap_or_else(|| target.repo.clone());
    Ok(Plan {
        store: Store::new(&out_root),
        target,
        config,
        agents,
        not_installed,
        brief,
        started_at: Local::now(),
        notes,
    })
}

/// Splits agents into those whose command is found and those whose is not.
fn installed(agents: Vec<AgentSpec>) -> (Vec<AgentSpec>, Vec<AgentSpec>) {
    agents
        .into_iter()
        .partition(|a| find_program(&a.command).is_some())
}

/// "`claude` (npm install -g @anthropic-ai/claude-code)".
pub fn install_hint(a: &AgentSpec) -> String {
    match a.kind.npm_package() {
        Some(pkg) => format!("`{}` (npm install -g {pkg})", a.command),
        None => format!("`{}`", a.command),
    }
}
