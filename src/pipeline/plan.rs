//! Everything a run needs, resolved before anything runs or is written: the target, the
//! config, the agents and the brief. `run --dry-run` prints a plan; `run` executes one.

use std::path::PathBuf;

use chrono::{DateTime, Local};

use crate::brief::{self, BriefOptions};
use crate::config::{self, Config};
use crate::dispatch::backend::commands::find_program;
use crate::forge;
use crate::rounds::{self, History};
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
    /// The change's earlier reports in the store: this run is round `history.next_round`.
    pub history: History,
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

/// Resolves the target, loads config, picks the agents and builds the brief. A pull request
/// (`236`, `#236`, its URL) is read from its forge first and reviewed as its base and head.
pub fn plan(request: &PlanRequest) -> anyhow::Result<Plan> {
    let pull_request = forge::target::resolve(&request.repo, &request.target)?;
    let spec = pull_request.as_ref().map_or(&request.target, |p| &p.spec);
    let mut target = target::resolve(&request.repo, spec)?;
    if let Some(p) = &pull_request {
        p.apply(&mut target);
    }
    let (config, mut agents, mut notes) = agents_for(&target, request.agents.as_deref())?;
    if let Some(p) = &pull_request {
        notes.extend(p.notes.iter().cloned());
    }
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
    let mut template = brief::template_path(
        request.brief_template.as_deref(),
        config.brief_template.as_deref(),
    );
    if request.brief_template.is_none()
        && let Some(path) = &template
        && let Some(rel) = changed_by_the_change(&target, path)
    {
        notes.push(format!(
            "the brief template {rel} is changed by the change under review: the built-in \
             template is used instead (a change does not write its own brief)"
        ));
        template = None;
    }
    // The change's earlier rounds, from the store the report will be written to.
    let out_root = request.out.clone().unwrap_or_else(|| target.repo.clone());
    let store = Store::new(&out_root);
    let mut history = rounds::history::in_store(&store, &target, None);
    notes.append(&mut history.warnings);
    // One brief for every agent: fitted to the smallest budget among them.
    let budget = agents
        .iter()
        .chain(&not_installed)
        .map(AgentSpec::brief_budget)
        .min();
    let brief = brief::build(
        &target,
        &BriefOptions {
            template,
            budget_tokens: budget,
            rounds: rounds::brief::material(&history, &target),
            ..BriefOptions::default()
        },
    )?;
    notes.extend(brief.warning.clone());
    notes.extend(brief.context_note.clone());
    Ok(Plan {
        store,
        history,
        target,
        config,
        agents,
        not_installed,
        brief,
        started_at: Local::now(),
        notes,
    })
}

/// The config for reviewing `target` (the repository's file at the merge-base, trusted or not)
/// and the agents `selection` names (every enabled one when `None`). An agent whose command is a
/// file the change under review edits is left out: the change would choose what runs.
pub fn agents_for(
    target: &Target,
    selection: Option<&str>,
) -> anyhow::Result<(Config, Vec<AgentSpec>, Vec<String>)> {
    let loaded = config::load(
        &target.repo,
        config::RepoConfig::AtBase {
            merge_base: &target.merge_base,
            head: &target.head,
        },
    )?;
    let mut notes = loaded.notes;
    let mut agents = loaded.config.agent_specs(selection)?;
    agents.retain(|a| {
        let Some(rel) = changed_by_the_change(target, std::path::Path::new(&a.command)) else {
            return true;
        };
        notes.push(format!(
            "{} is not run: its command {rel} is a file the change under review edits",
            a.display
        ));
        false
    });
    Ok((loaded.config, agents, notes))
}

/// `path`, relative to the repository, when it is inside the repository and the change adds,
/// edits or renames it.
fn changed_by_the_change(target: &Target, path: &std::path::Path) -> Option<String> {
    if !path.is_absolute() {
        return None;
    }
    let root = std::fs::canonicalize(&target.repo).unwrap_or_else(|_| target.repo.clone());
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let rel = real
        .strip_prefix(&root)
        .or_else(|_| path.strip_prefix(&target.repo))
        .ok()?
        .to_string_lossy()
        .into_owned();
    target
        .changed_files
        .iter()
        .any(|f| f.path == rel || f.old_path.as_deref() == Some(rel.as_str()))
        .then_some(rel)
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
