//! `deep-review run`: review a change with every enabled agent at once and write the report.
//!
//! The stages, each a call into its module:
//!
//! ```text
//! prepare:  target::resolve → config::load → brief::build          (nothing runs, nothing written)
//! pipeline: store (bundle, brief) → dispatch → parse → verify → consolidate → report → store
//! ```
//!
//! `--dry-run` stops after `prepare` and prints the brief and each agent's command line.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use chrono::{DateTime, Local};
use clap::Args;

use crate::brief::{self, BriefOptions};
use crate::config::{self, Config};
use crate::consolidate::{ConsolidateOptions, consolidate};
use crate::dispatch::{self, AgentSpec, ProgressMode, agents::safe_name, command_for};
use crate::parse::parse_review;
use crate::report::{self, Format};
use crate::store::{RunBundle, Store, run_id};
use crate::target::{self, TargetSpec};
use crate::text::plural;
use crate::types::Brief;
use crate::types::Target;
use crate::types::{RawReview, Report, ReportMeta, Review, Reviewer, RunStatus};

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// What to review: a branch, `BASE..HEAD`, or nothing for the current branch against its
    /// upstream's merge-base (else the default branch's).
    #[arg(value_name = "TARGET")]
    pub target: Option<String>,

    /// The base to compare against, overriding what TARGET implies.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,

    /// The commit to review, overriding what TARGET implies.
    #[arg(long, value_name = "REV")]
    pub head: Option<String>,

    /// The agents to run, comma-separated (`claude,codex`); default: every enabled agent.
    #[arg(long, value_name = "LIST")]
    pub agents: Option<String>,

    /// A minijinja template for the brief instead of the built-in one.
    #[arg(long, value_name = "FILE")]
    pub brief_template: Option<PathBuf>,

    /// Put `.reviews/` under DIR instead of the repository root.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Report format: `.reviews/<id>.md` is always written; `json`, `html` or `sarif` writes
    /// `.reviews/<id>.json`, `.html` or `.sarif` beside it.
    #[arg(long, value_enum, default_value = "md")]
    pub format: Format,

    /// Print the brief, its size and each agent's command line; run nothing, write nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// One plain line per event instead of live progress.
    #[arg(long, short)]
    pub quiet: bool,

    /// The repository (any directory inside it).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
}

/// Everything a run needs, resolved before anything runs or is written.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub target: Target,
    pub config: Config,
    pub agents: Vec<AgentSpec>,
    pub brief: Brief,
    pub store: Store,
    /// When the run started: names the run id and the report's date.
    pub started_at: DateTime<Local>,
}

impl Prepared {
    /// `YYYYMMDD-HHMMSS-<label>` (the store adds `-2` if that bundle exists already).
    pub fn id(&self) -> String {
        run_id(self.started_at, &self.target.label)
    }
}

pub fn execute(args: RunArgs) -> anyhow::Result<ExitCode> {
    let prepared = prepare(&args)?;
    if args.dry_run {
        super::print_out(&dry_run_text(&prepared))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut prepared = prepared;
    if args.agents.is_none() {
        prepared.agents = installed_agents(std::mem::take(&mut prepared.agents))?;
    }
    let progress = if args.quiet {
        ProgressMode::Plain
    } else {
        ProgressMode::Auto
    };
    let outcome = run_pipeline(&prepared, args.format, progress)?;
    Ok(outcome.exit_code())
}

/// With no `--agents`, the default set is whatever is installed: an agent whose CLI is not on
/// PATH is left out with a note rather than reported as a failure. An agent named with
/// `--agents` always runs, so a missing one fails loudly. No agent at all is an error that says
/// what to install.
fn installed_agents(agents: Vec<AgentSpec>) -> anyhow::Result<Vec<AgentSpec>> {
    let (found, missing): (Vec<AgentSpec>, Vec<AgentSpec>) = agents
        .into_iter()
        .partition(|a| dispatch::agents::find_program(&a.command).is_some());
    let install = |a: &AgentSpec| match a.kind.npm_package() {
        Some(pkg) => format!("`{}` (npm install -g {pkg})", a.command),
        None => format!("`{}`", a.command),
    };
    if found.is_empty() {
        let list: Vec<String> = missing.iter().map(install).collect();
        anyhow::bail!(
            "no agent CLI is installed: install at least one of {} (`deep-review agents` shows what is found)",
            list.join(", ")
        );
    }
    for a in &missing {
        eprintln!(
            "deep-review: {} is not installed, reviewing without it: {} is not on PATH",
            a.display,
            install(a)
        );
    }
    Ok(found)
}

/// Whether the change under review adds, edits, renames or deletes `.deep-review.toml`.
fn changes_repo_config(target: &Target) -> bool {
    target.changed_files.iter().any(|f| {
        f.path == config::REPO_CONFIG_FILE
            || f.old_path.as_deref() == Some(config::REPO_CONFIG_FILE)
    })
}

/// Resolves the target, loads config, picks the agents and builds the brief.
pub fn prepare(args: &RunArgs) -> anyhow::Result<Prepared> {
    let spec = TargetSpec {
        target: args.target.clone(),
        base: args.base.clone(),
        head: args.head.clone(),
        pr: None,
        description: None,
    };
    let target = target::resolve(&args.repo, &spec)?;
    let config = if changes_repo_config(&target) {
        let (config, ignored) = config::load_untrusted_repo(&target.repo)?;
        for note in ignored {
            eprintln!("deep-review: warning: {note}");
        }
        config
    } else {
        config::load(&target.repo)?
    };
    let agents = config.agent_specs(args.agents.as_deref())?;
    let template = brief::template_path(
        args.brief_template.as_deref(),
        config.brief_template.as_deref(),
    );
    let brief = brief::build(
        &target,
        &BriefOptions {
            template,
            ..BriefOptions::default()
        },
    )?;
    let out_root = args.out.clone().unwrap_or_else(|| target.repo.clone());
    Ok(Prepared {
        store: Store::new(&out_root),
        target,
        config,
        agents,
        brief,
        started_at: Local::now(),
    })
}

/// What `--dry-run` prints: the brief, then a summary with each agent's command line. The
/// command lines are the ones dispatch would run, with a placeholder for the temporary
/// worktree and secrets redacted.
pub fn dry_run_text(p: &Prepared) -> String {
    let t = &p.target;
    let id = p.id();
    let bundle = p.store.bundle_dir(&id);
    let work_root = std::env::temp_dir().join("deep-review-XXXXXX");
    let mut out = String::new();
    out.push_str(&p.brief.text);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("\n---\n\n");
    out.push_str("deep-review run --dry-run: nothing was run and nothing was written.\n\n");
    out.push_str(&format!(
        "Target:  {} — {}, {} changed ({})\n",
        t.label,
        plural(t.commits.len(), "commit", "commits"),
        plural(t.changed_files.len(), "file", "files"),
        t.diff_command()
    ));
    let template = match &p.brief.template {
        Some(path) => path.display().to_string(),
        None => "built-in".to_string(),
    };
    let context = p.brief.context_file.as_deref().unwrap_or("none");
    out.push_str(&format!(
        "Brief:   {} bytes, about {} tokens (template: {template}; context file: {context})\n",
        p.brief.bytes, p.brief.estimated_tokens
    ));
    if !p.config.files.is_empty() {
        let files: Vec<String> = p
            .config
            .files
            .iter()
            .map(|f| f.display().to_string())
            .collect();
        out.push_str(&format!("Config:  {}\n", files.join(", ")));
    }
    out.push_str(&format!("Agents:  {}\n", p.agents.len()));
    for spec in &p.agents {
        let worktree = work_root.join(safe_name(&spec.name));
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
        out.push_str(&format!(
            "  {} ({}):\n    {}\n",
            spec.name,
            details.join(", "),
            command.display()
        ));
        if dispatch::agents::find_program(&spec.command).is_none() {
            out.push_str(&format!(
                "    not installed: `{}` is not on PATH; a run leaves it out unless --agents names it\n",
                spec.command
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

/// How a run ended.
#[derive(Debug, Clone)]
pub struct PipelineOutcome {
    pub id: String,
    pub bundle_dir: PathBuf,
    /// The report files written (`.md`, and the `--format` file beside it); empty when cancelled.
    pub written: Vec<PathBuf>,
    pub report: Option<Report>,
    pub runs: Vec<RawReview>,
    pub cancelled: bool,
}

impl PipelineOutcome {
    /// 130 when cancelled (Ctrl-C / SIGTERM), 1 when no agent produced a review (the verdict
    /// is "No review"), else 0.
    pub fn exit_code(&self) -> ExitCode {
        if self.cancelled {
            ExitCode::from(130)
        } else if self
            .report
            .as_ref()
            .is_none_or(|r| r.verdict == crate::types::Verdict::NoReview)
        {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }
}

/// The whole run: bundle → dispatch → parse → verify → consolidate → report → store.
/// Prints the report paths on stdout; progress goes to stderr.
pub fn run_pipeline(
    p: &Prepared,
    format: Format,
    progress: ProgressMode,
) -> anyhow::Result<PipelineOutcome> {
    let clock = Instant::now();
    let bundle = p.store.create_run(&p.target.label, p.started_at)?;
    save_inputs(&bundle, p)?;

    let dispatched = dispatch::dispatch_blocking(
        &p.target.repo,
        &p.target.head,
        &p.brief.text,
        &p.agents,
        &bundle.dir,
        progress,
    )?;
    // Dispatch caught Ctrl-C and SIGTERM to stop the agents; they are gone now, and what is left
    // takes milliseconds and leaves nothing to clean up, so a signal may end the process again.
    // SAFETY: restores the default disposition of two signals; no handler runs concurrently
    // that depends on them (dispatch's runtime has been dropped).
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
    }
    if dispatched.cancelled {
        eprintln!(
            "deep-review: cancelled; what the agents wrote so far is kept in {}",
            bundle.dir.display()
        );
        return Ok(PipelineOutcome {
            id: bundle.id,
            bundle_dir: bundle.dir,
            written: Vec::new(),
            report: None,
            runs: dispatched.reviews,
            cancelled: true,
        });
    }

    let reviews = parse_runs(&dispatched.reviews, &p.agents);
    let reviews = verify(reviews, &p.target);

    let mut meta = report_meta(p, &bundle.id);
    meta.wall_clock_s = Some(clock.elapsed().as_secs_f64());
    let opts = ConsolidateOptions {
        meta,
        changed_files: Some(
            p.target
                .changed_files
                .iter()
                .map(|f| f.path.clone())
                .collect(),
        ),
        runs: dispatched.reviews.clone(),
    };
    let mut report = consolidate(&reviews, &opts);
    // The wall clock of the whole run, consolidation included.
    report.meta.wall_clock_s = Some(clock.elapsed().as_secs_f64());

    let mut written =
        vec![
            p.store
                .write_report(&bundle.id, "md", &report::render(&report, Format::Md))?,
        ];
    // The Markdown report is always written; another format is written beside it.
    if format != Format::Md {
        written.push(p.store.write_report(
            &bundle.id,
            format.extension(),
            &report::render(&report, format),
        )?);
    }
    for path in &written {
        super::print_out(&format!("{}\n", path.display()))?;
    }
    Ok(PipelineOutcome {
        id: bundle.id,
        bundle_dir: bundle.dir,
        written,
        report: Some(report),
        runs: dispatched.reviews,
        cancelled: false,
    })
}

/// The bundle's inputs, saved before any agent starts: the brief exactly as sent, and the
/// resolved target (so a run can be consolidated again from its bundle).
fn save_inputs(bundle: &RunBundle, p: &Prepared) -> anyhow::Result<()> {
    bundle.save_brief(&p.brief)?;
    bundle
        .save_json("target.json", &p.target)
        .context("cannot save the target in the run bundle")?;
    Ok(())
}

/// Parses every run that produced text; a failed run with no text gives no review (the report
/// names it from the run's status).
fn parse_runs(runs: &[RawReview], agents: &[AgentSpec]) -> Vec<Review> {
    runs.iter()
        .filter(|r| !r.text.trim().is_empty())
        .map(|r| {
            let mut review = parse_review(&r.agent, &r.text);
            if review.display_name.is_none() {
                review.display_name = agents
                    .iter()
                    .find(|a| a.name == r.agent)
                    .map(|a| a.display.clone())
                    .or_else(|| r.display_name.clone());
            }
            if r.status != RunStatus::Ok {
                review.warnings.push(crate::types::ParseWarning {
                    line: None,
                    message: format!(
                        "the run {}: this review may be incomplete",
                        match r.status {
                            RunStatus::TimedOut => "timed out",
                            RunStatus::Cancelled => "was cancelled",
                            _ => "failed",
                        }
                    ),
                });
            }
            review
        })
        .collect()
}

/// The verify stage: every finding checked against the code at head and at the merge-base.
/// A repository that cannot be read leaves the findings unchecked, with the reason, rather than
/// losing the review.
fn verify(mut reviews: Vec<Review>, target: &Target) -> Vec<Review> {
    let ctx = crate::verify::VerifyContext {
        repo: target.repo.clone(),
        head: target.head.clone(),
        base: Some(target.merge_base.clone()),
    };
    match crate::verify::verify_reviews_with_changes(
        &ctx,
        target.changed_files.clone(),
        &mut reviews,
    ) {
        Ok(outcome) => eprintln!("deep-review: verified findings: {}", outcome.counts),
        Err(err) => {
            let why = format!("verification failed: {err:#}");
            eprintln!("deep-review: warning: {why}");
            crate::verify::mark_unchecked(&mut reviews, &why);
        }
    }
    reviews
}

/// The report's metadata table from the target and the agents.
fn report_meta(p: &Prepared, id: &str) -> ReportMeta {
    let t = &p.target;
    ReportMeta {
        id: id.to_string(),
        date: Some(p.started_at.naive_local()),
        repo: Some(t.repo_name.clone()).filter(|r| !r.is_empty()),
        repo_url: t.web_url.clone(),
        head: Some(t.head.clone()),
        base: Some(t.merge_base.clone()),
        round: Some(1),
        author: t.author.clone(),
        pr: t.pr.clone(),
        branch: t.branch.clone(),
        commits: t.commits.clone(),
        reviewers: p
            .agents
            .iter()
            .map(|a| Reviewer {
                name: a.name.clone(),
                display: a.display.clone(),
                model: a.model.clone(),
                effort: a.effort.clone(),
            })
            .collect(),
        wall_clock_s: None,
    }
}
