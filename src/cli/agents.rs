//! `deep-review agents`: which agent CLIs are on PATH, at which version, and how to install the
//! missing ones. A new user runs this first, so every line says what to do next.

use std::process::ExitCode;

use clap::Args;

use crate::config;
use crate::dispatch::AgentSpec;
use crate::dispatch::backend::commands::{VERSION_TIMEOUT, find_program, probe_version};
use crate::dispatch::sandbox;
use crate::types::AgentKind;

#[derive(Debug, Args)]
pub struct AgentsArgs {
    /// Print one JSON object per agent instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// What was found for one agent.
#[derive(Debug, serde::Serialize)]
struct Found {
    agent: String,
    /// `found`, `broken` (on PATH but `--version` failed) or `missing`.
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    npm_package: Option<&'static str>,
    /// The sandbox layers an agent process runs under (none for a model API).
    #[serde(skip_serializing_if = "Option::is_none")]
    sandbox: Option<String>,
    /// Where it may connect.
    #[serde(skip_serializing_if = "Option::is_none")]
    network: Option<String>,
}

/// Lists the agents `run` would use, with the commands the config gives them (the repository's
/// `.deep-review.toml` when run inside one, and the user's file). Exits 0 once it has listed
/// what it found, usable or not (1 is for a gate that failed; this command has none); 2 on a
/// config it cannot read.
pub fn execute(args: AgentsArgs) -> anyhow::Result<ExitCode> {
    let repo_root =
        crate::git::git_probe(std::path::Path::new("."), &["rev-parse", "--show-toplevel"])
            .map(std::path::PathBuf::from);
    let config = match &repo_root {
        Some(root) => {
            let loaded = config::load(root, config::RepoConfig::WorkingTree)?;
            for note in &loaded.notes {
                crate::say!("deep-review: {}", crate::text::printable_line(note));
            }
            loaded.config
        }
        None => config::load_files(&config::user_config_path().into_iter().collect::<Vec<_>>())?,
    };
    let specs = config.enabled_agent_specs();
    if specs.is_empty() {
        crate::say!(
            "deep-review: every agent is disabled (enabled = false) in {}: set `enabled = true` for one",
            config.files_list()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let plan = sandbox::Plan::new(
        sandbox::Mode::from_env().map_err(anyhow::Error::msg)?,
        sandbox::default_helper(),
    );
    // Probed side by side: each `--version` starts a node process (a second or more).
    let found: Vec<Found> = std::thread::scope(|scope| {
        let probes: Vec<_> = specs
            .iter()
            .map(|spec| scope.spawn(|| probe(spec, &plan)))
            .collect();
        probes
            .into_iter()
            .zip(&specs)
            .map(|(probe, spec)| {
                probe.join().unwrap_or_else(|_| Found {
                    agent: spec.name.clone(),
                    status: "broken",
                    path: None,
                    version: None,
                    problem: Some("its check stopped unexpectedly".into()),
                    npm_package: AgentKind::from_name(&spec.name).npm_package(),
                    sandbox: None,
                    network: None,
                })
            })
            .collect()
    });
    if !args.json {
        super::print_out(&format!("sandbox: {}\n", sandbox::describe_machine(&plan)))?;
    }
    print_and_exit_code(&found, args.json)
}

/// Finds one agent's command and asks it for its version (the registry's agents only: a custom
/// agent's command need not know `--version`).
fn probe(spec: &AgentSpec, plan: &sandbox::Plan) -> Found {
    let kind = AgentKind::from_name(&spec.name);
    let npm_package = kind.npm_package();
    let install = match npm_package {
        Some(pkg) => format!("install it with `npm install -g {pkg}`"),
        None => "fix `command` in its config".to_string(),
    };
    let process = !spec.kind.is_http();
    let found = |status, path: Option<String>, version, problem| Found {
        agent: spec.name.clone(),
        status,
        path,
        version,
        problem,
        npm_package,
        sandbox: process.then(|| plan.layers.name()),
        network: process.then(|| sandbox::describe_network(spec, plan)),
    };
    // A model API: nothing to find on PATH; its key must be set (never probed over the network).
    if spec.kind.is_http() {
        let base = spec
            .http
            .base_url
            .clone()
            .or_else(|| spec.kind.default_base_url().map(str::to_string));
        let what = Some(format!(
            "{} API, model {}",
            spec.kind.config_name(),
            spec.model.as_deref().unwrap_or("?")
        ));
        let var = spec
            .http
            .api_key_env
            .clone()
            .or_else(|| spec.kind.default_key_env().map(str::to_string));
        return match var {
            Some(var) if std::env::var(&var).map_or(true, |v| v.trim().is_empty()) => found(
                "missing",
                base,
                what,
                Some(format!("`{var}` is not set: export the API key in it")),
            ),
            _ => found("found", base, what, None),
        };
    }
    let Some(path) = find_program(&spec.command) else {
        return found(
            "missing",
            None,
            None,
            Some(format!("`{}` is not found: {install}", spec.command)),
        );
    };
    let shown = Some(path.display().to_string());
    if kind == AgentKind::Generic {
        return found("found", shown, Some("(custom agent)".into()), None);
    }
    match probe_version(&path, VERSION_TIMEOUT) {
        Ok(version) => found("found", shown, Some(version), None),
        Err(problem) => found(
            "broken",
            shown,
            None,
            Some(format!(
                "{problem}; {}",
                install.replace("install it", "reinstall it")
            )),
        ),
    }
}

fn print_and_exit_code(found: &[Found], json: bool) -> anyhow::Result<ExitCode> {
    if json {
        for f in found {
            super::print_out(&format!("{}\n", serde_json::to_string(f)?))?;
        }
    } else {
        for f in found {
            match f.status {
                "found" => {
                    super::print_out(&format!(
                        "{:<7} {:<32} {}\n",
                        f.agent,
                        f.version.as_deref().unwrap_or(""),
                        f.path.as_deref().unwrap_or("")
                    ))?;
                    if let Some(network) = &f.network {
                        super::print_out(&format!("        network: {network}\n"))?;
                    }
                }
                _ => super::print_out(&format!(
                    "{:<7} {:<32} {}\n",
                    f.agent,
                    f.status,
                    f.problem.as_deref().unwrap_or("")
                ))?,
            }
        }
    }
    let usable = found.iter().filter(|f| f.status == "found").count();
    if usable == 0 {
        crate::say!(
            "deep-review: no agent CLI is usable; install at least one: npm install -g @anthropic-ai/claude-code @openai/codex @google/gemini-cli"
        );
    }
    Ok(ExitCode::SUCCESS)
}
