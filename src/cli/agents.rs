//! `deep-review agents`: which agent CLIs are on PATH, at which version, and how to install the
//! missing ones. A new user runs this first, so every line says what to do next.

use std::process::ExitCode;

use clap::Args;

use crate::dispatch::agents::{
    AgentKind, KNOWN_AGENTS, VERSION_TIMEOUT, find_program, probe_version,
};

#[derive(Debug, Args)]
pub struct AgentsArgs {
    /// Print one JSON object per agent instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// What was found for one agent.
#[derive(Debug, serde::Serialize)]
struct Found {
    agent: &'static str,
    /// `found`, `broken` (on PATH but `--version` failed) or `missing`.
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
    npm_package: &'static str,
}

/// Lists the agents. Exits 0 when at least one agent can run, 1 when none can.
pub fn execute(args: AgentsArgs) -> anyhow::Result<ExitCode> {
    // Probed side by side: each `--version` starts a node process (a second or more).
    let found: Vec<Found> = std::thread::scope(|scope| {
        let probes: Vec<_> = KNOWN_AGENTS
            .iter()
            .map(|(name, kind)| scope.spawn(move || probe(name, *kind)))
            .collect();
        probes
            .into_iter()
            .zip(KNOWN_AGENTS)
            .map(|(probe, (name, kind))| {
                probe.join().unwrap_or_else(|_| Found {
                    agent: name,
                    status: "broken",
                    path: None,
                    version: None,
                    problem: Some("its check stopped unexpectedly".into()),
                    npm_package: kind.npm_package().unwrap_or(""),
                })
            })
            .collect()
    });
    print_and_exit_code(&found, args.json)
}

/// Finds one agent on PATH and asks it for its version.
fn probe(name: &'static str, kind: AgentKind) -> Found {
    let npm_package = kind.npm_package().unwrap_or("");
    match find_program(name) {
        None => Found {
            agent: name,
            status: "missing",
            path: None,
            version: None,
            problem: Some(format!(
                "not found on PATH: install it with `npm install -g {npm_package}`"
            )),
            npm_package,
        },
        Some(path) => {
            let shown = path.display().to_string();
            match probe_version(&path, VERSION_TIMEOUT) {
                Ok(version) => Found {
                    agent: name,
                    status: "found",
                    path: Some(shown),
                    version: Some(version),
                    problem: None,
                    npm_package,
                },
                Err(problem) => Found {
                    agent: name,
                    status: "broken",
                    path: Some(shown),
                    version: None,
                    problem: Some(format!(
                        "{problem}; reinstall it with `npm install -g {npm_package}`"
                    )),
                    npm_package,
                },
            }
        }
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
                "found" => super::print_out(&format!(
                    "{:<7} {:<32} {}\n",
                    f.agent,
                    f.version.as_deref().unwrap_or(""),
                    f.path.as_deref().unwrap_or("")
                ))?,
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
        eprintln!(
            "deep-review: no agent CLI is usable; install at least one: npm install -g @anthropic-ai/claude-code @openai/codex @google/gemini-cli"
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
