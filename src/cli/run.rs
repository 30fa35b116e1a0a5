//! `deep-review run`: review a change with every enabled agent at once and write the report.
//! Arguments become a [`PlanRequest`]; the pipeline does the rest; this file prints.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::output::{self, FailOn};
use crate::dispatch::{self, ProgressMode, command_for};
use crate::pipeline::{self, Plan, PlanRequest, RunOptions, RunOutcome};
use crate::report::{self, Format};
use crate::target::TargetSpec;
use crate::text::{plural, printable_line};

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// What to review: a branch, `BASE..HEAD`, a pull request (`236`, `#236` or its URL; needs
    /// GITHUB_TOKEN), or nothing for the current branch against its upstream's merge-base (else
    /// the default branch's).
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

    /// Put the store (`.reviews/`) under DIR instead of the repository root.
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,

    /// Formats written to the store besides Markdown, JSON and HTML (always written):
    /// `sarif`. Several at once: `--format json,sarif`. The first also goes to `--out`.
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

    /// Post the report on the pull request under review (see `deep-review post`).
    #[arg(long, conflicts_with = "dry_run")]
    pub post: bool,

    /// With `--post`: where the full report can be read, linked from the summary comment.
    #[arg(long, value_name = "URL", requires = "post", value_parser = super::post::report_url)]
    pub report_url: Option<String>,

    /// One plain line per event instead of live progress.
    #[arg(long, short)]
    pub quiet: bool,

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
            out: self.store.clone(),
        }
    }

    fn options(&self) -> RunOptions {
        RunOptions {
            progress: if self.quiet {
                ProgressMode::Plain
            } else {
                ProgressMode::Auto
            },
            formats: self.format.clone(),
            ..RunOptions::default()
        }
    }
}

pub fn execute(args: RunArgs) -> anyhow::Result<ExitCode> {
    if let Some(id) = &args.resume {
        return resume(&args, id);
    }
    let plan = pipeline::plan(&args.request())?;
    for note in &plan.notes {
        crate::say!("deep-review: {}", printable_line(note));
    }
    if args.dry_run {
        super::print_out(&dry_run_text(&plan))?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.post && plan.target.pr.is_none() {
        anyhow::bail!(
            "`--post` posts on a pull request, and {} is not one: review a pull request by number or URL (`deep-review run 236 --post`)",
            printable_line(&plan.target.label)
        );
    }
    let outcome = pipeline::execute(&plan, &args.options())?;
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
fn resume(args: &RunArgs, id: &str) -> anyhow::Result<ExitCode> {
    let root = crate::git::git_text(&args.repo, &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .map_err(|_| {
            anyhow::anyhow!(
                "{} is not inside a git repository: run `--resume` where the run was made, or pass `--repo DIR`",
                args.repo.display()
            )
        })?;
    let store = crate::store::Store::new(args.store.as_deref().unwrap_or(&root));
    // The run's own target decides which config applies, as it did for the run.
    let bundle = store.open_run(id)?;
    let saved = crate::store::bundle::read(&bundle.dir)?;
    let names: Vec<String> = match &saved.record {
        Some(record) => record.reviewers.iter().map(|r| r.name.clone()).collect(),
        None => saved.runs.iter().map(|r| r.agent.clone()).collect(),
    };
    let (_, agents, notes) = pipeline::plan::agents_for(&saved.target, Some(&names.join(",")))?;
    for note in &notes {
        crate::say!("deep-review: {}", printable_line(note));
    }
    let outcome = pipeline::resume(&store, &bundle.id, &agents, &args.options())?;
    let code = finish(&outcome, args)?;
    post_outcome(args, &saved.target, &outcome)?;
    Ok(code)
}

/// Prints where the report went and what it says, and ends with the exit code.
fn finish(outcome: &RunOutcome, args: &RunArgs) -> anyhow::Result<ExitCode> {
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
    match &args.out {
        Some(out) => {
            let format = args.format.first().copied().unwrap_or(Format::Md);
            output::write_to(Some(out), &report::render(&analysis.report, format))?;
        }
        None => {
            for path in &outcome.written {
                super::print_out(&format!("{}\n", path.display()))?;
            }
        }
    }
    Ok(output::exit_code(&analysis.report, args.fail_on))
}

/// What `--dry-run` prints: the brief, then a summary with each agent's command line. The
/// command lines are the ones dispatch would run, with a placeholder for the temporary
/// checkout and secrets redacted.
pub fn dry_run_text(p: &Plan) -> String {
    let t = &p.target;
    let id = p.id();
    let bundle = p.store.bundle_dir(&id);
    let work_root = std::env::temp_dir().join("deep-review-run-XXXXXX");
    let mut out = String::new();
    out.push_str(&p.brief.text);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("\n---\n\n");
    out.push_str("deep-review run --dry-run: nothing was run and nothing was written.\n\n");
    out.push_str(&format!(
        "Target:  {} — {}, {} changed ({})\n",
        printable_line(&t.label),
        plural(t.commits.len(), "commit", "commits"),
        plural(t.changed_files.len(), "file", "files"),
        t.diff_command()
    ));
    if let Some(round) = p.history.key.as_ref().map(|key| {
        let earlier = p.history.rounds.iter().filter(|r| r.reviewed).count();
        format!(
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
        )
    }) {
        out.push_str(&round);
    }
    let template = match &p.brief.template {
        Some(path) => path.display().to_string(),
        None => "built-in".to_string(),
    };
    let context = p.brief.context_file.as_deref().unwrap_or("none");
    out.push_str(&format!(
        "Brief:   {} bytes, about {} tokens (template: {}; context file: {})\n",
        p.brief.bytes,
        p.brief.estimated_tokens,
        printable_line(&template),
        printable_line(context)
    ));
    if let Some(budget) = p.brief.budget_tokens {
        out.push_str(&format!(
            "Budget:  {budget} tokens (a quarter of the smallest agent context); the whole change \
             would take about {}{}\n",
            p.brief.full_tokens,
            if p.brief.omitted.is_empty() {
                String::new()
            } else {
                format!("; left out: {}", p.brief.omitted.join("; "))
            }
        ));
    }
    if !p.config.files.is_empty() {
        let files: Vec<String> = p
            .config
            .files
            .iter()
            .map(|f| printable_line(&f.display().to_string()))
            .collect();
        out.push_str(&format!("Config:  {}\n", files.join(", ")));
    }
    out.push_str(&format!(
        "Agents:  {}\n",
        p.agents.len() + p.not_installed.len()
    ));
    for spec in p.agents.iter().chain(&p.not_installed) {
        let worktree = work_root.join(dispatch::backend::commands::safe_name(&spec.name));
        let command = command_for(spec, &worktree, &bundle);
        let mut details = vec![spec.display.clone()];
        if let Some(m) = &spec.model {
            details.push(format!("model {m}"));
        }
        if let Some(e) = &spec.effort {
            details.push(format!("effort {e}"));
        }
        details.push(format!(
            "timeout {}",
            crate::text::duration_short(spec.timeout)
        ));
        details.push(format!(
            "brief {} of {} tokens",
            p.brief.estimated_tokens,
            spec.brief_budget()
        ));
        out.push_str(&format!(
            "  {} ({}):\n    {}\n",
            printable_line(&spec.name),
            printable_line(&details.join(", ")),
            command.display()
        ));
        if dispatch::backend::commands::find_program(&spec.command).is_none() {
            out.push_str(&format!(
                "    not installed: `{}` is not on PATH; a run leaves it out unless --agents names it\n",
                printable_line(&spec.command)
            ));
        }
    }
    out.push_str(&format!(
        "Report:  {}\nBundle:  {}\n",
        p.store.report_path(&id, "md").display(),
        bundle.display()
    ));
    out
}
