//! Everything a run needs, resolved before anything runs or is written: the target, the
//! config, the agents and the brief. `run --dry-run` prints a plan; `run` executes one.

use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::{DateTime, Local};

use crate::brief::{self, BriefOptions, PackOptions};
use crate::config::{self, Config};
use crate::cost::PriceTable;
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
    /// `--store DIR`: the store folder, instead of the repository's
    /// ([`crate::store::locate`]).
    pub store: Option<PathBuf>,
    /// `--synthesize AGENT`: the configured agent (CLI or model API) that writes the summary
    /// and proposes merges after consolidation; `None`: no synthesis.
    pub synthesize: Option<String>,
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
    /// Each model API's own prompt (the brief packed with the code for its context budget), by
    /// agent name.
    pub prompts: BTreeMap<String, Brief>,
    /// The prices of the run: the built-in list prices under the user's `[prices]`.
    pub prices: PriceTable,
    /// The agent that synthesizes, when asked.
    pub synthesizer: Option<AgentSpec>,
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

    /// Why running this plan would stop before any agent runs (for lack of agents), if it
    /// would: what `run` says as its error and `run --dry-run` says beforehand.
    pub fn would_stop(&self) -> Option<String> {
        if self.agents.is_empty() && self.not_installed.is_empty() {
            return Some(format!(
                "no agent is left to run ({}): pick others with `--agents` or fix the config",
                self.notes.join("; ")
            ));
        }
        if self.agents.is_empty() {
            let list: Vec<String> = self.not_installed.iter().map(install_hint).collect();
            return Some(format!(
                "no agent CLI is installed: install at least one of {} (`deep-review agents` shows what is found)",
                list.join(", ")
            ));
        }
        sandbox_stop(&self.agents)
    }
}

/// The sentence that stops a run whose agent CLIs would run with no OS sandbox when none was
/// chosen (`DEEP_REVIEW_SANDBOX=none` chooses it): agents of the model APIs run in deep-review
/// itself and need none.
fn sandbox_stop(agents: &[AgentSpec]) -> Option<String> {
    use crate::dispatch::sandbox;
    if !agents
        .iter()
        .any(|a| a.kind.backend() == crate::types::BackendKind::Process)
    {
        return None;
    }
    let mode = sandbox::Mode::from_env().unwrap_or_default();
    match sandbox::layers_for(mode, sandbox::default_helper().as_deref()) {
        sandbox::Layers::Unavailable { why } => Some(sandbox::unavailable_sentence(&why)),
        _ => None,
    }
}

/// Resolves the target, loads config, picks the agents and builds the brief. A pull request
/// (`236`, `#236`, its URL) is read from its forge first and reviewed as its base and head.
pub fn plan(request: &PlanRequest) -> anyhow::Result<Plan> {
    // The store first: an earlier version's `.reviews/` moves out of the working tree before
    // `--uncommitted` snapshots it.
    target::environment::repo_root(&request.repo)?;
    let located = crate::store::locate(&request.repo, request.store.as_deref())?;
    let pull_request = forge::target::resolve(&request.repo, &request.target)?;
    let spec = pull_request.as_ref().map_or(&request.target, |p| &p.spec);
    let mut target = target::resolve_leaving_out(&request.repo, spec, &located.leave_out)?;
    if let Some(p) = &pull_request {
        p.apply(&mut target);
    }
    let (config, agents, mut notes) = agents_for(&target, request.agents.as_deref())?;
    notes.splice(0..0, located.notes);
    let store = located.store;
    if let Some(p) = &pull_request {
        notes.extend(p.notes.iter().cloned());
    }
    let (agents, not_installed) = installed_agents(request, &config, agents, &mut notes);
    let template = brief_template(request, &config, &target, &mut notes);
    // The change's earlier rounds, from the store the report will be written to.
    let mut history = rounds::history::in_store(&store, &target, None);
    notes.append(&mut history.warnings);
    let brief = shared_brief(
        &target,
        &agents,
        &not_installed,
        template.clone(),
        &history,
        &mut notes,
    )?;
    notes.extend(agents.iter().filter_map(unencrypted_key_note));
    let prompts = packed_prompts(
        &target,
        &agents,
        template.as_deref(),
        rounds::brief::material(&history, &target),
    )?;
    for (name, packed) in &prompts {
        if let Some(w) = &packed.warning {
            notes.push(format!("{name}: {w}"));
        }
    }
    let synthesizer = match &request.synthesize {
        None => None,
        Some(name) => Some(synthesizer_spec(&config, name)?),
    };
    Ok(Plan {
        store,
        history,
        prices: PriceTable::new(config.prices.clone()),
        target,
        config,
        agents,
        not_installed,
        brief,
        prompts,
        synthesizer,
        started_at: Local::now(),
        notes,
    })
}

/// The agents that run and those left out as not installed, with a note on each missing
/// agent the user asked for.
fn installed_agents(
    request: &PlanRequest,
    config: &Config,
    agents: Vec<AgentSpec>,
    notes: &mut Vec<String>,
) -> (Vec<AgentSpec>, Vec<AgentSpec>) {
    if request.agents.is_some() {
        // Named with `--agents`: it would run, and fail.
        let (_, missing) = installed(agents.clone());
        for a in &missing {
            notes.push(format!(
                "{} is not installed: {} is not on PATH, so it will fail",
                a.display,
                install_hint(a)
            ));
        }
        return (agents, Vec::new());
    }
    // Left out quietly, unless the config asks for the agent by name: the registry's agents
    // are all enabled by default, and one never installed is nothing the user asked for.
    let (found, missing) = installed(agents);
    for a in missing
        .iter()
        .filter(|a| !found.is_empty() && config.configures(&a.name))
    {
        notes.push(format!(
            "{} is not installed, reviewing without it: {} is not on PATH",
            a.display,
            install_hint(a)
        ));
    }
    (found, missing)
}

/// The brief template to use: the command line's, else the config's, unless the config's is
/// a file the change under review changes (a change does not write its own brief).
fn brief_template(
    request: &PlanRequest,
    config: &Config,
    target: &Target,
    notes: &mut Vec<String>,
) -> Option<PathBuf> {
    let template = brief::template_path(
        request.brief_template.as_deref(),
        config.brief_template.as_deref(),
    );
    if request.brief_template.is_none()
        && let Some(path) = &template
        && let Some(rel) = changed_by_the_change(target, path)
    {
        notes.push(format!(
            "the brief template {rel} is changed by the change under review: the built-in \
             template is used instead (a change does not write its own brief)"
        ));
        return None;
    }
    template
}

/// One brief for every agent that reads the repository: fitted to the smallest budget among
/// them. Model APIs get packed prompts of their own ([`packed_prompts`]).
fn shared_brief(
    target: &Target,
    agents: &[AgentSpec],
    not_installed: &[AgentSpec],
    template: Option<PathBuf>,
    history: &History,
    notes: &mut Vec<String>,
) -> anyhow::Result<Brief> {
    let budget = agents
        .iter()
        .chain(not_installed)
        .filter(|a| !a.kind.is_http())
        .map(AgentSpec::brief_budget)
        .min();
    let brief = brief::build(
        target,
        &BriefOptions {
            template,
            budget_tokens: budget,
            rounds: rounds::brief::material(history, target),
            ..BriefOptions::default()
        },
    )?;
    if agents.iter().any(|a| !a.kind.is_http()) {
        notes.extend(brief.warning.clone());
    }
    notes.extend(brief.context_note.clone());
    Ok(brief)
}

/// The packed prompt of every model API among `agents`: the change's code within its
/// context budget (`context_tokens` less `max_output_tokens`).
pub fn packed_prompts(
    target: &Target,
    agents: &[AgentSpec],
    template: Option<&std::path::Path>,
    rounds: Option<crate::brief::RoundsBrief>,
) -> anyhow::Result<BTreeMap<String, Brief>> {
    let mut prompts = BTreeMap::new();
    for spec in agents.iter().filter(|a| a.kind.is_http()) {
        let budget = spec.prompt_budget();
        if budget == 0 {
            anyhow::bail!(
                "agent `{}` has no room for a prompt: its context of {} tokens is taken by its \
                 {} output tokens; raise `context_tokens` or lower `max_output_tokens`",
                spec.name,
                spec.context_window(),
                spec.max_output_tokens()
            );
        }
        let packed = brief::pack(
            target,
            &PackOptions {
                context_tokens: budget,
                template: template.map(std::path::Path::to_path_buf),
                no_context: false,
                rounds: rounds.clone(),
            },
        )?;
        prompts.insert(spec.name.clone(), packed);
    }
    Ok(prompts)
}

/// A warning for a model API that would send its key over plain `http://` to another machine.
fn unencrypted_key_note(spec: &AgentSpec) -> Option<String> {
    let base = spec.http.base_url.as_deref()?;
    let url = reqwest::Url::parse(base).ok()?;
    let host = url
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']');
    let local = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    let key = spec
        .http
        .api_key_env
        .as_deref()
        .or(spec.kind.default_key_env())?;
    (url.scheme() == "http" && !local).then(|| {
        format!(
            "{} sends the key in ${key} unencrypted to {base}: use https:// unless that network is \
             yours",
            spec.display
        )
    })
}

/// The agent `--synthesize NAME` names, from config: any configured agent, enabled or not.
pub fn synthesizer_spec(config: &Config, name: &str) -> anyhow::Result<AgentSpec> {
    let mut specs = config
        .agent_specs(Some(name))
        .map_err(|e| anyhow::anyhow!("{}", e.to_string().replace("--agents", "--synthesize")))?;
    specs.pop().ok_or_else(|| {
        anyhow::anyhow!("`--synthesize` names no agent: pass e.g. `--synthesize claude`")
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
        if a.kind.is_http() {
            return true;
        }
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

/// Splits agents into those whose command is found and those whose is not. A model API is
/// always "installed": a missing key fails it with the variable to set.
fn installed(agents: Vec<AgentSpec>) -> (Vec<AgentSpec>, Vec<AgentSpec>) {
    agents
        .into_iter()
        .partition(|a| a.kind.is_http() || find_program(&a.command).is_some())
}

/// "`claude` (npm install -g @anthropic-ai/claude-code)".
pub fn install_hint(a: &AgentSpec) -> String {
    match a.kind.npm_package() {
        Some(pkg) => format!("`{}` (npm install -g {pkg})", a.command),
        None => format!("`{}`", a.command),
    }
}
