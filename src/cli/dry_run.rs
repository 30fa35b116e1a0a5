//! What `run --dry-run` prints: the brief, then a summary of the run it would make, each agent
//! with the command line dispatch would run (a placeholder for the temporary checkout, secrets
//! redacted) and its estimated cost. Nothing is run or written.
//!
//! The text is a flat list of named pieces: [`preamble`], [`plan_lines`], one block per agent
//! ([`api_agent_block`] or [`cli_agent_block`], each ending in its [`Estimate`]'s line), then
//! [`footer_lines`].

use std::path::Path;

use crate::dispatch::{self, AgentSpec, command_for};
use crate::pipeline::Plan;
use crate::text::{plural, printable_line};
use crate::types::Brief;

/// What `--dry-run` prints.
pub fn dry_run_text(p: &Plan) -> String {
    let id = p.id();
    let bundle = p.store.bundle_dir(&id);
    let work_root = std::env::temp_dir().join("deep-review-run-XXXXXX");
    let sandbox = dispatch::sandbox::Plan::new(
        dispatch::sandbox::Mode::from_env().unwrap_or_default(),
        dispatch::sandbox::default_helper(),
    );
    let mut out = preamble(&p.brief);
    out.extend(plan_lines(p, &sandbox));
    let mut estimates = Vec::new();
    for spec in p.agents.iter().chain(&p.not_installed) {
        let packed = p.prompts.get(&spec.name);
        let estimate = agent_estimate(p, spec, packed);
        if spec.kind.is_http() {
            out.push_str(&api_agent_block(spec, packed));
        } else {
            let worktree = work_root.join(dispatch::backend::commands::safe_name(&spec.name));
            out.push_str(&cli_agent_block(p, spec, &worktree, &bundle, &sandbox));
        }
        out.push_str(&estimate.line);
        estimates.push(estimate);
    }
    out.extend(footer_lines(p, &id, &bundle, &estimates));
    out
}

/// The brief as the agents get it, a separator, and the banner that nothing was run.
fn preamble(brief: &Brief) -> String {
    let mut out = brief.text.clone();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("\n---\n\n");
    out.push_str("deep-review run --dry-run: nothing was run and nothing was written.\n\n");
    out
}

/// The header: what is reviewed, the round, the brief, its budget, the config files, the
/// sandbox and the number of agents (optional lines left out when there is nothing to say).
fn plan_lines(p: &Plan, sandbox: &dispatch::sandbox::Plan) -> Vec<String> {
    [
        Some(target_line(p)),
        round_line(p),
        Some(brief_line(&p.brief)),
        budget_line(&p.brief),
        config_line(p),
        Some(format!(
            "Sandbox: {}\n",
            dispatch::sandbox::describe_machine(sandbox)
        )),
        Some(format!(
            "Agents:  {}\n",
            p.agents.len() + p.not_installed.len()
        )),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn target_line(p: &Plan) -> String {
    let t = &p.target;
    format!(
        "Target:  {} — {}, {} changed ({})\n",
        printable_line(&t.label),
        plural(t.commits.len(), "commit", "commits"),
        plural(t.changed_files.len(), "file", "files"),
        t.diff_command()
    )
}

/// The round this run would be, when the change has a key to count rounds over.
fn round_line(p: &Plan) -> Option<String> {
    let key = p.history.key.as_ref()?;
    let earlier = p.history.rounds.iter().filter(|r| r.reviewed).count();
    Some(format!(
        "Round:   {} (of {}){}\n",
        p.history.next_round,
        printable_line(&key.to_string()),
        if earlier == 0 {
            String::new()
        } else {
            format!(
                "; the brief lists what {} found",
                plural(earlier, "earlier report", "earlier reports")
            )
        }
    ))
}

fn brief_line(brief: &Brief) -> String {
    let template = match &brief.template {
        Some(path) => path.display().to_string(),
        None => "built-in".to_string(),
    };
    let context = brief.context_file.as_deref().unwrap_or("none");
    format!(
        "Brief:   {} bytes, about {} tokens (template: {}; context file: {})\n",
        brief.bytes,
        brief.estimated_tokens,
        printable_line(&template),
        printable_line(context)
    )
}

/// The brief's token budget and what it left out, when it had one.
fn budget_line(brief: &Brief) -> Option<String> {
    let budget = brief.budget_tokens?;
    Some(format!(
        "Budget:  {budget} tokens (a quarter of the smallest agent context); the whole change \
         would take about {}{}\n",
        brief.full_tokens,
        left_out(&brief.omitted, false)
    ))
}

/// `; left out: a; b`, or nothing when nothing was.
fn left_out(omitted: &[String], printable: bool) -> String {
    if omitted.is_empty() {
        return String::new();
    }
    let list = omitted.join("; ");
    format!(
        "; left out: {}",
        if printable {
            printable_line(&list)
        } else {
            list
        }
    )
}

fn config_line(p: &Plan) -> Option<String> {
    if p.config.files.is_empty() {
        return None;
    }
    let files: Vec<String> = p
        .config
        .files
        .iter()
        .map(|f| printable_line(&f.display().to_string()))
        .collect();
    Some(format!("Config:  {}\n", files.join(", ")))
}

/// One agent's estimated cost: its line, and the dollars when its model has a price.
struct Estimate {
    line: String,
    usd: Option<f64>,
}

fn agent_estimate(p: &Plan, spec: &AgentSpec, packed: Option<&Brief>) -> Estimate {
    let prompt_tokens = packed.map_or(p.brief.estimated_tokens, |b| b.estimated_tokens);
    let estimate = crate::cost::estimate(&p.prices, spec, prompt_tokens);
    match (estimate, p.prices.for_agent(spec)) {
        (Some(usd), Some(priced)) => Estimate {
            line: format!(
                "    estimated cost: {} ({} prompt tokens in, {} out at most; {})\n",
                crate::cost::usd(usd),
                prompt_tokens,
                if spec.kind.is_http() {
                    spec.max_output_tokens() as u64
                } else {
                    crate::cost::EXPECTED_CLI_OUTPUT_TOKENS
                },
                priced.basis
            ),
            usd: Some(usd),
        },
        _ => Estimate {
            line: format!(
                "    estimated cost: unknown (no price for {}; set `[prices.\"MODEL\"]` in your config)\n",
                spec.model
                    .as_deref()
                    .map(|m| format!("model {m}"))
                    .unwrap_or_else(|| "an agent with no model".into())
            ),
            usd: None,
        },
    }
}

/// A model API's block: where it is called and its packed prompt.
fn api_agent_block(spec: &AgentSpec, packed: Option<&Brief>) -> String {
    let mut details = vec![spec.display.clone(), spec.kind.config_name().to_string()];
    if let Some(m) = &spec.model {
        details.push(format!("model {m}"));
    }
    details.push(timeout_detail(spec));
    let base = spec
        .http
        .base_url
        .as_deref()
        .or(spec.kind.default_base_url())
        .unwrap_or("(no base_url)");
    let mut out = format!(
        "  {} ({}):\n    model API at {}\n",
        printable_line(&spec.name),
        printable_line(&details.join(", ")),
        printable_line(base)
    );
    if let Some(b) = packed {
        out.push_str(&format!(
            "    packed prompt: {} of {} tokens (context {} less {} for the answer){}\n",
            b.estimated_tokens,
            spec.prompt_budget(),
            spec.context_window(),
            spec.max_output_tokens(),
            left_out(&b.omitted, true)
        ));
    }
    out
}

fn timeout_detail(spec: &AgentSpec) -> String {
    format!("timeout {}", crate::text::duration_short(spec.timeout))
}

/// An agent CLI's block: its command line, its network, and whether it is installed.
fn cli_agent_block(
    p: &Plan,
    spec: &AgentSpec,
    worktree: &Path,
    bundle: &Path,
    sandbox: &dispatch::sandbox::Plan,
) -> String {
    let command = command_for(spec, worktree, bundle);
    let mut details = vec![spec.display.clone()];
    if let Some(m) = &spec.model {
        details.push(format!("model {m}"));
    }
    if let Some(e) = &spec.effort {
        details.push(format!("effort {e}"));
    }
    details.push(timeout_detail(spec));
    details.push(format!(
        "brief {} of {} tokens",
        p.brief.estimated_tokens,
        spec.brief_budget()
    ));
    let mut out = format!(
        "  {} ({}):\n    {}\n    network: {}\n",
        printable_line(&spec.name),
        printable_line(&details.join(", ")),
        command.display(),
        printable_line(&dispatch::sandbox::describe_network(spec, sandbox))
    );
    out.extend(not_installed_line(p, spec));
    out
}

/// Says so when the agent's program is not on PATH, and what a run would do about it.
fn not_installed_line(p: &Plan, spec: &AgentSpec) -> Option<String> {
    if dispatch::backend::commands::find_program(&spec.command).is_some() {
        return None;
    }
    let what = if p.agents.iter().any(|a| a.name == spec.name) {
        "a run would fail it"
    } else {
        "a run leaves it out unless --agents names it"
    };
    Some(format!(
        "    not installed: `{}` is not on PATH; {what}\n",
        printable_line(&spec.command)
    ))
}

/// The footer: the total cost, the synthesis, where the report and bundle would go, and why
/// the run would stop before any agent, if it would.
fn footer_lines(p: &Plan, id: &str, bundle: &Path, estimates: &[Estimate]) -> Vec<String> {
    let synthesis = p.synthesizer.as_ref().map(|s| {
        format!(
            "Synthesis: {} ({}) writes the summary after consolidation; its proposals are checked by code\n",
            printable_line(&s.name),
            printable_line(&s.display)
        )
    });
    let stop = p.would_stop().map(|why| {
        format!(
            "Stop:    the run would stop here, before any agent runs: {}\n",
            printable_line(&why)
        )
    });
    [
        Some(total_cost_line(estimates)),
        synthesis,
        Some(format!(
            "Report:  {}\nBundle:  {}\n",
            p.store.report_path(id, "md").display(),
            bundle.display()
        )),
        stop,
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The sum of the estimates, and whether every agent had a price.
fn total_cost_line(estimates: &[Estimate]) -> String {
    // A fold from 0.0, as `sum` of no item would be -0.0 ("$-0.0000").
    let total = estimates
        .iter()
        .filter_map(|e| e.usd)
        .fold(0.0, |a, b| a + b);
    let priced_all = estimates.iter().all(|e| e.usd.is_some());
    format!(
        "Cost:    about {} estimated in all{} (the CLIs read more than their brief: their real cost is higher)\n",
        crate::cost::usd(total),
        if priced_all {
            ""
        } else {
            " for the agents with a price"
        }
    )
}
