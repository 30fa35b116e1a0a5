//! `deep-review run`: review a change with every enabled agent at once and write the report.
//! Arguments become a [`PlanRequest`]; the pipeline does the rest; this file prints.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::output::{self, FailOn};
use crate::dispatch::{self, ProgressMode};
use crate::pipeline::{self, PlanRequest, RunOptions, RunOutcome};
use crate::report::{self, Format};
use crate::target::TargetSpec;
use crate::text::printable_line;

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// What to review: a branch, `BASE..HEAD`, a GitHub pull request (`236`, `#236` or its URL;
    /// needs GITHUB_TOKEN), a GitLab merge request (`!42` or its URL, or a number in GitLab CI;
    /// needs GITLAB_TOKEN), a Bitbucket Cloud pull request (its URL, or a number in a
    /// bitbucket.org clone or in Bitbucket Pipelines; needs BITBUCKET_ACCESS_TOKEN), or nothing
    /// for the current branch against its upstream's merge-base (else the default branch's).
    #[arg(value_name = "TARGET")]
    pub target: Option<String>,

    /// The base to compare against, overriding what TARGET implies.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,

    /// The commit to review, overriding what TARGET implies.
    #[arg(long, value_name = "REV")]
    pub head: Option<String>,

    /// The agents to run, comma-separated (`claude,codex`); default: every enabled agent that
    /// is installed.
    #[arg(long, value_name = "LIST")]
    pub agents: Option<String>,

    /// A minijinja template for the brief instead of the built-in one.
    #[arg(long, value_name = "FILE")]
    pub brief_template: Option<PathBuf>,

    /// The store folder, where the report and the run bundle go (default: `deep-review/` in
    /// the repository's git directory, shared by its worktrees, never committed).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,

    /// Formats written to the store besides Markdown, JSON and HTML (always written):
    /// `sarif`, `codequality` (GitLab's Code Quality report). Several at once:
    /// `--format json,sarif`. The first also goes to `--out`.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub format: Vec<Format>,

    /// Also write the report (in the first `--format`, else Markdown) to FILE; `-` for
    /// standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Exit 1 when a shown finding at this level or above stands (a CI gate).
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub fail_on: Option<FailOn>,

    /// Review the working tree's changes (staged, unstaged and untracked files that are not
    /// ignored) against HEAD, before committing. The index, the working tree and the stash are
    /// not touched: the changes go through a temporary commit object.
    #[arg(long, conflicts_with = "head")]
    pub uncommitted: bool,

    /// Print the brief, its size and each agent's command line; run nothing, write nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Finish run ID (`latest` for the newest): run again only the agents that did not produce
    /// a review, reuse the others' saved output, and write the run's report.
    #[arg(long, value_name = "ID", conflicts_with_all = ["target", "base", "head", "dry_run", "brief_template", "uncommitted"])]
    pub resume: Option<String>,

    /// Post the report on the pull request or merge request under review (see `deep-review
    /// post`).
    #[arg(long, conflicts_with = "dry_run")]
    pub post: bool,

    /// With `--post`: where the full report can be read, linked from the summary comment.
    #[arg(long, value_name = "URL", requires = "post", value_parser = super::post::report_url)]
    pub report_url: Option<String>,

    /// One plain line per event instead of live progress.
    #[arg(long, short)]
    pub quiet: bool,

    /// Stop starting new work once the estimated cost would pass N US dollars, and stop
    /// running model-API reviewers when it is spent; the report holds what was done.
    // `allow_negative_numbers`: `-1` reaches the parser, which says what a budget is, instead
    // of clap taking it for an unknown flag.
    #[arg(long, value_name = "N", value_parser = parse_budget, allow_negative_numbers = true)]
    pub budget_usd: Option<f64>,

    /// After consolidation, let AGENT (any configured agent, CLI or model API) write the
    /// summary and propose merges, splits, drops and demotions, which code checks.
    #[arg(long, value_name = "AGENT")]
    pub synthesize: Option<String>,

    /// The longest the whole run may take, reading and consolidating the reviews included
    /// (`90m`, `1h30m`); the agents are stopped a little before it. Default: the slowest
    /// agent's timeout and 5 minutes more. An agent the deadline stops is named in the report
    /// as stopped by it, and the run ends as usual (exit 0, 1 or 3) with the others' reviews;
    /// it exits 124 only when reading and consolidating pass the deadline too.
    #[arg(long, value_name = "DURATION", value_parser = parse_run_timeout)]
    pub timeout: Option<std::time::Duration>,

    /// The repository (any directory inside it).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
}

impl RunArgs {
    fn request(&self) -> PlanRequest {
        PlanRequest {
            repo: self.repo.clone(),
            target: TargetSpec {
                target: self.target.clone(),
                base: self.base.clone(),
                head: self.head.clone(),
                pr: None,
                description: None,
                uncommitted: self.uncommitted,
            },
            agents: self.agents.clone(),
            brief_template: self.brief_template.clone(),
            store: self.store.clone(),
            synthesize: self.synthesize.clone(),
        }
    }

    fn options(&self) -> anyhow::Result<RunOptions> {
        let mut options = RunOptions {
            progress: if self.quiet {
                ProgressMode::Plain
            } else {
                ProgressMode::Auto
            },
            formats: self.format.clone(),
            budget_usd: self.budget_usd,
            ..RunOptions::default()
        };
        options.dispatch.sandbox =
            dispatch::sandbox::Mode::from_env().map_err(anyhow::Error::msg)?;
        Ok(options)
    }
}

/// `--timeout DURATION`: a duration longer than zero (`90m`, `1h30m`).
fn parse_run_timeout(text: &str) -> Result<std::time::Duration, String> {
    let d = crate::text::parse_duration(text)?;
    if d.is_zero() {
        return Err(format!(
            "`{text}` is zero: give the run some time, e.g. 45m"
        ));
    }
    Ok(d)
}

/// `--budget-usd N`: a number of dollars, 0 or more.
fn parse_budget(text: &str) -> Result<f64, String> {
    let n: f64 = text
        .trim()
        .trim_start_matches('$')
        .parse()
        .map_err(|_| format!("`{text}` is not an amount: write US dollars, e.g. 2.50"))?;
    if !n.is_finite() || n < 0.0 {
        return Err(format!(
            "`{text}` is not a budget: the budget must be a positive number of US dollars \
             (0 or more), e.g. 2.50"
        ));
    }
    Ok(n)
}

pub fn execute(args: RunArgs) -> anyhow::Result<ExitCode> {
    // From here a signal stops the run at whatever stage it is in.
    let started = std::time::Instant::now();
    let signals_watched = pipeline::interrupt::install();
    // A deadline the user gave holds from the start; the default one needs the agents' timeouts.
    if let Some(timeout) = args.timeout
        && let Some(deadline) = started.checked_add(timeout)
    {
        pipeline::interrupt::watch_deadline(
            deadline,
            format!("--timeout {}", crate::text::duration_short(timeout)),
        );
    }
    // Where the report goes is checked before any agent runs, not after they all did.
    output::check_out_path(args.out.as_deref())?;
    if let Some(id) = &args.resume {
        return resume(&args, id, started, signals_watched);
    }
    let plan = pipeline::plan(&args.request())?;
    for note in &plan.notes {
        crate::say!("deep-review: {}", printable_line(note));
    }
    if args.dry_run {
        super::print_out(&super::dry_run::dry_run_text(&plan))?;
        if let Some(why) = plan.would_stop() {
            crate::say!(
                "deep-review: a run would stop here, before any agent runs: {}",
                printable_line(&why)
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.post && plan.target.pr.is_none() {
        anyhow::bail!(
            "`--post` posts on a pull request or merge request, and {} is not one: review one by number or URL (`deep-review run 236 --post`, `deep-review run !42 --post`)",
            printable_line(&plan.target.label)
        );
    }
    let mut options = args.options()?;
    options.synthesizer = plan.synthesizer.clone();
    bound_the_run(&mut options, &args, &plan.agents, started, signals_watched);
    let outcome = pipeline::execute(&plan, &options)?;
    let code = finish(&outcome, &args)?;
    post_outcome(&args, &plan.target, &outcome)?;
    Ok(code)
}

/// `run --post`: the report just written, posted on its pull request.
fn post_outcome(
    args: &RunArgs,
    target: &crate::types::Target,
    outcome: &RunOutcome,
) -> anyhow::Result<()> {
    let Some(analysis) = outcome.analysis.as_ref().filter(|_| args.post) else {
        return Ok(());
    };
    let posted = crate::forge::post::post_report(
        &analysis.report,
        target,
        &crate::forge::post::PostOptions {
            dry_run: false,
            report_url: args.report_url.clone(),
        },
    )?;
    super::post::print(&posted, false)
}

/// `run --resume ID`: the agents come from today's config, by the names the run recorded.
fn resume(
    args: &RunArgs,
    id: &str,
    started: std::time::Instant,
    signals_watched: bool,
) -> anyhow::Result<ExitCode> {
    let root = crate::git::git_text(&args.repo, &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .map_err(|_| {
            anyhow::anyhow!(
                "{} is not inside a git repository: run `--resume` where the run was made, or pass `--repo DIR`",
                args.repo.display()
            )
        })?;
    let store = crate::store::Store::locate(&root, args.store.as_deref())?;
    // The run's own target decides which config applies, as it did for the run.
    let bundle = store.open_run(id)?;
    let saved = crate::bundle::read(&bundle.dir)?;
    let names: Vec<String> = match &saved.record {
        Some(record) => record.reviewers.iter().map(|r| r.name.clone()).collect(),
        None => saved.runs.iter().map(|r| r.agent.clone()).collect(),
    };
    let (config, agents, notes) =
        pipeline::plan::agents_for(&saved.target, Some(&names.join(",")))?;
    for note in &notes {
        crate::say!("deep-review: {}", printable_line(note));
    }
    let mut options = args.options()?;
    options.brief_template = crate::brief::template_path(None, config.brief_template.as_deref());
    options.dispatch.prices =
        std::sync::Arc::new(crate::cost::PriceTable::new(config.prices.clone()));
    if let Some(name) = &args.synthesize {
        options.synthesizer = Some(pipeline::plan::synthesizer_spec(&config, name)?);
    }
    bound_the_run(&mut options, args, &agents, started, signals_watched);
    let outcome = pipeline::resume(&store, &bundle.id, &agents, &options)?;
    let code = finish(&outcome, args)?;
    post_outcome(args, &saved.target, &outcome)?;
    Ok(code)
}

/// Extra time the default deadline gives a run beyond its slowest agent's timeout: checkouts,
/// reading, verifying and consolidating the reviews.
const DEADLINE_MARGIN: std::time::Duration = std::time::Duration::from_secs(5 * 60);

/// Puts the run under its deadline (`--timeout`, watched from the start, else the slowest
/// agent's timeout and [`DEADLINE_MARGIN`]): the agents stop a little before it, any later
/// stage at it.
fn bound_the_run(
    options: &mut RunOptions,
    args: &RunArgs,
    agents: &[dispatch::AgentSpec],
    started: std::time::Instant,
    signals_watched: bool,
) {
    options.dispatch.handle_signals = !signals_watched;
    let total = args.timeout.unwrap_or_else(|| {
        let slowest = agents.iter().map(|a| a.timeout).max().unwrap_or_default();
        slowest.saturating_add(DEADLINE_MARGIN)
    });
    // A deadline past what the clock can hold is no deadline.
    let (Some(deadline), Some(agents_deadline)) = (
        started.checked_add(total),
        started.checked_add(pipeline::interrupt::agents_share(total)),
    ) else {
        return;
    };
    options.dispatch.deadline = Some(agents_deadline);
    if args.timeout.is_none() {
        let what = format!(
            "{}: the slowest agent's timeout and 5 minutes",
            crate::text::duration_short(total)
        );
        pipeline::interrupt::watch_deadline(deadline, what);
    }
}

/// Prints where the report went and what it says, and ends with the exit code.
fn finish(outcome: &RunOutcome, args: &RunArgs) -> anyhow::Result<ExitCode> {
    if outcome.cancelled && pipeline::interrupt::deadline_passed() {
        crate::say!(
            "deep-review: the run passed its deadline; what the agents wrote is kept in {} (`deep-review run --resume {}` finishes it)",
            outcome.bundle_dir.display(),
            outcome.id
        );
        return Ok(ExitCode::from(output::EXIT_DEADLINE));
    }
    if outcome.cancelled {
        crate::say!(
            "deep-review: cancelled; what the agents wrote so far is kept in {} (`deep-review run --resume {}` finishes it)",
            outcome.bundle_dir.display(),
            outcome.id
        );
        return Ok(ExitCode::from(output::EXIT_INTERRUPTED));
    }
    let Some(analysis) = &outcome.analysis else {
        return Ok(ExitCode::from(output::EXIT_NO_REVIEW));
    };
    for warning in &analysis.warnings {
        crate::say!("deep-review: warning: {}", printable_line(warning));
    }
    if let Some(counts) = analysis.verified {
        crate::say!("deep-review: verified findings: {counts}");
    }
    let page = outcome
        .written
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "html"))
        .or(outcome.written.first());
    crate::text::say(
        output::run_summary(&analysis.report, page.map(|p| p.as_path())).trim_end_matches('\n'),
    );
    for line in cost_lines(&analysis.report) {
        crate::text::say(&printable_line(&format!("deep-review: {line}")));
    }
    let code = output::exit_code(&analysis.report, args.fail_on);
    match &args.out {
        Some(out) => {
            let format = args.format.first().copied().unwrap_or(Format::Md);
            let written = output::write_to(Some(out), &report::render(&analysis.report, format));
            // The gate's answer stands when the copy could not be written: the report is in
            // the store either way, and a CI job must not pass because a folder was missing.
            if let Err(err) = written {
                if code == ExitCode::SUCCESS {
                    return Err(err);
                }
                crate::say!("deep-review: error: {err:#}");
            }
        }
        None => {
            for path in &outcome.written {
                super::print_out(&format!("{}\n", path.display()))?;
            }
        }
    }
    Ok(code)
}

/// The terminal's summary of what the run cost: one line per agent with its tokens and cost,
/// the synthesis, the total and the budget.
pub fn cost_lines(report: &crate::types::Report) -> Vec<String> {
    use crate::cost::usd;
    let tokens = |t: &crate::types::TokenUsage| {
        format!(
            "{}{} in, {} out",
            if t.estimated { "~" } else { "" },
            t.input,
            t.output
        )
    };
    let mut lines = Vec::new();
    let mut total = 0.0;
    let mut any_cost = false;
    // A total is an estimate when a cost in it is: priced from estimated tokens, or from none.
    let mut any_estimated = false;
    for a in &report.agents {
        let t = a
            .tokens
            .as_ref()
            .map(tokens)
            .unwrap_or_else(|| "no tokens reported".into());
        let c = match a.cost_usd {
            Some(c) => {
                total += c;
                any_cost = true;
                any_estimated |= a.tokens.as_ref().is_none_or(|t| t.estimated);
                usd(c)
            }
            None => "cost unknown".into(),
        };
        lines.push(format!("cost: {}: {t}, {c}", a.display));
    }
    let s = &report.synthesis;
    if s.status != crate::types::SynthesisStatus::Off {
        let t = s
            .tokens
            .as_ref()
            .map(tokens)
            .unwrap_or_else(|| "no tokens".into());
        let c = s.cost_usd.map(usd).unwrap_or_else(|| "cost unknown".into());
        total += s.cost_usd.unwrap_or(0.0);
        any_cost |= s.cost_usd.is_some();
        any_estimated |= s.cost_usd.is_some() && s.tokens.as_ref().is_none_or(|t| t.estimated);
        lines.push(format!("cost: synthesis ({}): {t}, {c}", s.status.as_str()));
    }
    if any_cost {
        let budget = report
            .budget
            .as_ref()
            .map(|b| format!(" of a {} budget", usd(b.limit_usd)))
            .unwrap_or_default();
        lines.push(if any_estimated {
            format!("cost: about {} in all{budget} (estimated)", usd(total))
        } else {
            format!("cost: {} in all{budget}", usd(total))
        });
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{AgentRetro, Report, TokenUsage};

    fn priced_agent(name: &str, estimated: bool) -> AgentRetro {
        AgentRetro {
            name: name.into(),
            display: name.into(),
            tokens: Some(TokenUsage {
                input: 1_000,
                output: 100,
                cached: 0,
                estimated,
            }),
            cost_usd: Some(0.5),
            ..AgentRetro::default()
        }
    }

    #[test]
    fn the_total_is_called_estimated_only_when_a_cost_in_it_is() {
        let mut report = Report {
            agents: vec![priced_agent("a", false), priced_agent("b", false)],
            ..Report::default()
        };
        let lines = cost_lines(&report);
        assert_eq!(lines.last().unwrap(), "cost: $1.00 in all", "{lines:?}");
        report.agents[1] = priced_agent("b", true);
        let lines = cost_lines(&report);
        assert_eq!(
            lines.last().unwrap(),
            "cost: about $1.00 in all (estimated)",
            "{lines:?}"
        );
    }
}
