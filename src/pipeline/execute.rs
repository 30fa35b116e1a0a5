//! Executing a plan: the run bundle first (nothing is lost), then dispatch, analysis, and the
//! report written to the store in every format asked for. `resume` finishes a run that was
//! killed or whose agents failed, reusing what the others wrote.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;

use super::analyze::{self, Analysis};
use super::plan::Plan;
use crate::bundle::{self, RunRecord, RunReviewer};
use crate::dispatch::{self, DispatchOptions, ProgressMode};
use crate::report::{self, Format};
use crate::rounds::History;
use crate::store::{RunBundle, Store};
use crate::types::{AgentSpec, RawReview, Reviewer, RunStatus, Target};

/// How to run.
#[derive(Clone)]
pub struct RunOptions {
    pub progress: ProgressMode,
    pub dispatch: DispatchOptions,
    /// Formats written to the store besides Markdown, JSON and HTML, which are always written
    /// (the JSON report is the record that `list`, `show` and later rounds read; the HTML page is
    /// what people open).
    pub formats: Vec<Format>,
    /// `--budget-usd`: stop starting work once the estimated cost would pass this, and stop
    /// running model APIs when it is spent.
    pub budget_usd: Option<f64>,
    /// `--synthesize AGENT`: the agent that writes the summary and proposes merges, checked by
    /// code ([`crate::synthesize`]).
    pub synthesizer: Option<AgentSpec>,
    /// The brief template a resumed run's model APIs pack their prompts with (the config's
    /// `brief_template`); a new run's plan has packed them already.
    pub brief_template: Option<PathBuf>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            progress: ProgressMode::Auto,
            dispatch: DispatchOptions::default(),
            formats: Vec::new(),
            budget_usd: None,
            synthesizer: None,
            brief_template: None,
        }
    }
}

impl RunOptions {
    /// The dispatch options of a run: the cost meter of its budget, once for the whole run.
    fn run_dispatch(&self) -> DispatchOptions {
        let mut d = self.dispatch.clone();
        if let Some(limit) = self.budget_usd {
            d.meter = crate::dispatch::budget::CostMeter::with_limit(limit);
        }
        d
    }
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub id: String,
    pub bundle_dir: PathBuf,
    /// The report files written; empty when cancelled.
    pub written: Vec<PathBuf>,
    /// The report and how it was made; `None` when cancelled.
    pub analysis: Option<Analysis>,
    pub runs: Vec<RawReview>,
    pub cancelled: bool,
}

/// Runs `plan`: bundle → dispatch → parse → verify → consolidate → report → store.
pub fn execute(plan: &Plan, options: &RunOptions) -> anyhow::Result<RunOutcome> {
    if let Some(why) = plan.would_stop() {
        anyhow::bail!(why);
    }
    let clock = Instant::now();
    // Before the first file of the run is written.
    dispatch::learn_secrets(&plan.agents);
    let bundle = plan.store.create_run(&plan.target.label, plan.started_at)?;
    bundle.save_brief(&plan.brief)?;
    bundle
        .save_json(bundle::TARGET_FILE, &plan.target)
        .context("cannot save the target in the run bundle")?;
    let record = RunRecord {
        id: bundle.id.clone(),
        started_at: plan.started_at.fixed_offset(),
        reviewers: plan.agents.iter().map(reviewer_record).collect(),
        wall_clock_s: None,
    };
    bundle.save_json(bundle::RUN_FILE, &record)?;

    let mut run_dispatch = options.run_dispatch();
    run_dispatch.keep_checkout = true;
    run_dispatch.prompts = plan
        .prompts
        .iter()
        .map(|(name, b)| (name.clone(), Arc::new(b.text.clone())))
        .collect();
    run_dispatch.prices = Arc::new(plan.prices.clone());
    super::interrupt::set_resume_hint(format!(
        "what the agents wrote is kept in {} (`deep-review run --resume {}` finishes it)",
        bundle.dir.display(),
        bundle.id
    ));
    let before = super::checkout::snapshot(&plan.target.repo, plan.store.dir());
    let phase = super::interrupt::dispatching(&run_dispatch.cancel);
    let dispatched = dispatch::dispatch_blocking(
        &plan.target.repo,
        &plan.target.head,
        &plan.brief.text,
        &plan.agents,
        &bundle.dir,
        options.progress,
        run_dispatch.clone(),
    )?;
    drop(phase);
    let checkout = super::checkout::compare(
        &before,
        &super::checkout::snapshot(&plan.target.repo, plan.store.dir()),
    );
    let mut outcome = finish(
        &plan.store,
        bundle,
        record,
        &plan.target,
        Dispatched {
            runs: dispatched.reviews,
            cancelled: dispatched.cancelled,
            users_checkout: Some(checkout),
            agents_checkout: dispatched.checkout,
        },
        clock,
        options,
        &run_dispatch,
        plan.history.clone(),
        &plan.notes,
    )?;
    outcome.written.retain(|p| p.is_file());
    Ok(outcome)
}

/// Runs again the agents of run `id` that did not finish with a review, reusing the saved
/// output of the others, and writes the run's report (same id). `agents` gives the current
/// specs by name (config may have changed since: a fixed command, a longer timeout).
pub fn resume(
    store: &Store,
    id: &str,
    agents: &[AgentSpec],
    options: &RunOptions,
) -> anyhow::Result<RunOutcome> {
    let clock = Instant::now();
    dispatch::learn_secrets(agents);
    let bundle = store.open_run(id)?;
    let saved = bundle::read(&bundle.dir)?;
    let Some(record) = saved.record.clone() else {
        anyhow::bail!(
            "{} has no run.json (it was made by an older deep-review): `deep-review consolidate --bundle {}` reads what it holds",
            bundle.dir.display(),
            bundle.dir.display()
        );
    };
    let again = agents_to_run_again(&bundle, &saved, &record, id, agents)?;
    // Its earlier rounds: the reports of the change older than this run.
    let history = crate::rounds::history::in_store(store, &saved.target, Some(&bundle.id));
    let run_dispatch = resume_dispatch(options, &saved.target, &again, &history)?;
    let before = super::checkout::snapshot(&saved.target.repo, store.dir());
    let rerun = run_again(&bundle, &saved, &again, options, &run_dispatch)?;
    let runs = runs_in_order(&record, &rerun.reviews, &saved.runs);
    let checkout = (!again.is_empty()).then(|| {
        super::checkout::compare(
            &before,
            &super::checkout::snapshot(&saved.target.repo, store.dir()),
        )
    });
    finish(
        store,
        bundle,
        record,
        &saved.target,
        Dispatched {
            runs,
            cancelled: rerun.cancelled,
            users_checkout: checkout,
            agents_checkout: rerun.checkout,
        },
        clock,
        options,
        &run_dispatch,
        history,
        &[],
    )
}

/// The current specs of the run's reviewers that did not finish with a review, in the run's
/// order; each one's earlier output is set aside. A reviewer no longer in the config is an error.
fn agents_to_run_again(
    bundle: &RunBundle,
    saved: &bundle::SavedRun,
    record: &RunRecord,
    id: &str,
    agents: &[AgentSpec],
) -> anyhow::Result<Vec<AgentSpec>> {
    let done: Vec<&RawReview> = saved
        .runs
        .iter()
        .filter(|r| r.status == RunStatus::Ok && !r.text.trim().is_empty())
        .collect();
    let mut again: Vec<AgentSpec> = Vec::new();
    for rv in &record.reviewers {
        if done.iter().any(|r| r.agent == rv.name) {
            continue;
        }
        let spec = agents
            .iter()
            .find(|a| a.name == rv.name)
            .cloned()
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "agent `{}` of run {id} is not in the config any more: add it back to resume",
                    rv.name
                )
            })?;
        bundle::set_aside(&bundle.dir.join(&rv.dir))?;
        again.push(spec);
    }
    Ok(again)
}

/// The dispatch options of a resumed run: the checkout kept for verification, and the model
/// APIs that run again get their packed prompts again, from the run's own target.
fn resume_dispatch(
    options: &RunOptions,
    target: &Target,
    again: &[AgentSpec],
    history: &History,
) -> anyhow::Result<DispatchOptions> {
    let mut run_dispatch = options.run_dispatch();
    run_dispatch.keep_checkout = true;
    run_dispatch.prompts = super::plan::packed_prompts(
        target,
        again,
        options.brief_template.as_deref(),
        crate::rounds::brief::material(history, target),
    )?
    .into_iter()
    .map(|(name, b)| (name, Arc::new(b.text)))
    .collect();
    Ok(run_dispatch)
}

/// Dispatches the agents that run again (nothing when there are none).
fn run_again(
    bundle: &RunBundle,
    saved: &bundle::SavedRun,
    again: &[AgentSpec],
    options: &RunOptions,
    run_dispatch: &DispatchOptions,
) -> anyhow::Result<dispatch::DispatchOutcome> {
    if again.is_empty() {
        return Ok(dispatch::DispatchOutcome {
            reviews: Vec::new(),
            cancelled: false,
            wall_clock_s: 0.0,
            checkout: None,
        });
    }
    super::interrupt::set_resume_hint(format!(
        "what the agents wrote is kept in {} (`deep-review run --resume {}` finishes it)",
        bundle.dir.display(),
        bundle.id
    ));
    let _phase = super::interrupt::dispatching(&run_dispatch.cancel);
    dispatch::dispatch_blocking(
        &saved.target.repo,
        &saved.target.head,
        &saved.brief,
        again,
        &bundle.dir,
        options.progress,
        run_dispatch.clone(),
    )
}

/// Every reviewer in the run's order: the new runs, else the reused ones.
fn runs_in_order(record: &RunRecord, rerun: &[RawReview], saved: &[RawReview]) -> Vec<RawReview> {
    record
        .reviewers
        .iter()
        .filter_map(|rv| {
            rerun
                .iter()
                .find(|r| r.agent == rv.name)
                .or_else(|| saved.iter().find(|r| r.agent == rv.name))
                .cloned()
        })
        .collect()
}

/// What the agents' stage leaves for the rest of the run.
struct Dispatched {
    /// Every reviewer's run, in the run's order.
    runs: Vec<RawReview>,
    cancelled: bool,
    /// What the check of the user's checkout found.
    users_checkout: Option<crate::types::CheckoutCheck>,
    /// The agents' own checkout of the head, which verification reads (dropped after it).
    agents_checkout: Option<dispatch::KeptCheckout>,
}

/// Analysis and the report files, after dispatch.
#[allow(clippy::too_many_arguments)]
fn finish(
    store: &Store,
    bundle: RunBundle,
    mut record: RunRecord,
    target: &Target,
    dispatched: Dispatched,
    clock: Instant,
    options: &RunOptions,
    run_dispatch: &DispatchOptions,
    history: History,
    notes: &[String],
) -> anyhow::Result<RunOutcome> {
    let Dispatched {
        runs,
        cancelled,
        users_checkout: checkout,
        agents_checkout,
    } = dispatched;
    let formats = &options.formats;
    if cancelled {
        return Ok(RunOutcome {
            id: bundle.id,
            bundle_dir: bundle.dir,
            written: Vec::new(),
            analysis: None,
            runs,
            cancelled: true,
        });
    }
    let meta = analyze::meta_for(
        target,
        reviewers_of(&record),
        &bundle.id,
        record.started_at.naive_local(),
    );
    let mut analysis = analyze::analyze_runs(
        &runs,
        target,
        meta,
        history,
        agents_checkout.as_ref().map(|c| c.path().to_path_buf()),
    );
    // Verification was its last reader.
    drop(agents_checkout);
    if let Some(spec) = &options.synthesizer {
        crate::synthesize::synthesize(
            &mut analysis.report,
            crate::synthesize::Consolidated {
                reviews: &analysis.reviews,
                options: &analysis.options,
            },
            &crate::synthesize::SynthesisRequest {
                spec,
                target,
                bundle_dir: &bundle.dir,
                progress: options.progress,
                dispatch: run_dispatch,
            },
        );
    }
    // The synthesis was the last use of the parsed reviews and the consolidation options (which
    // hold every raw output): freed before the report is rendered, so a flood is held once.
    analysis.reviews = Vec::new();
    analysis.options = Default::default();
    analysis.report.budget = run_dispatch.meter.report();
    if let Some(budget) = &analysis.report.budget {
        analysis
            .report
            .warnings
            .extend(budget_notes(budget, &analysis.report));
    }
    analysis
        .report
        .warnings
        .extend(crate::dispatch::network::notes(&runs, &bundle.id));
    analysis.report.checkout = checkout;
    // What the plan noticed (ignored config keys, the context file read at the base, a brief cut
    // to its budget) is part of how the review was made: the report says it.
    analysis.report.warnings.extend(notes.iter().cloned());
    // The wall clock of the whole run, consolidation included.
    let wall = clock.elapsed().as_secs_f64();
    analysis.report.meta.wall_clock_s = Some(wall);
    record.wall_clock_s = Some(wall);
    bundle.save_json(bundle::RUN_FILE, &record)?;

    let written = write_reports(store, &bundle.id, &mut analysis, formats)?;
    Ok(RunOutcome {
        id: bundle.id,
        bundle_dir: bundle.dir,
        written,
        analysis: Some(analysis),
        runs,
        cancelled: false,
    })
}

/// The report's reviewers, as the run recorded them.
fn reviewers_of(record: &RunRecord) -> Vec<Reviewer> {
    record
        .reviewers
        .iter()
        .map(|rv| Reviewer {
            name: rv.name.clone(),
            display: rv.display.clone(),
            model: rv.model.clone(),
            effort: rv.effort.clone(),
        })
        .collect()
}

/// The report in the store, as Markdown, JSON and HTML and each format asked for, then the
/// store's stats and index pages (best effort: a report that cannot be listed never fails the
/// run that wrote it; the analysis says so instead).
fn write_reports(
    store: &Store,
    id: &str,
    analysis: &mut Analysis,
    formats: &[Format],
) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let mut written = Vec::new();
    let mut all = vec![Format::Md, Format::Json, Format::Html];
    for f in formats {
        if !all.contains(f) {
            all.push(*f);
        }
    }
    for format in all {
        written.push(store.write_report(
            id,
            format.extension(),
            &report::render(&analysis.report, format),
        )?);
    }
    if let Err(err) = crate::outcomes::stats::write_page(store) {
        analysis
            .warnings
            .push(format!("the store's stats.html was not updated: {err:#}"));
    }
    if let Err(err) = store.write_index() {
        analysis
            .warnings
            .push(format!("the store's index.html was not updated: {err:#}"));
    }
    Ok(written)
}

/// What the report says about the budget: what it stopped and what it could not count.
pub fn budget_notes(
    budget: &crate::types::BudgetReport,
    report: &crate::types::Report,
) -> Vec<String> {
    let mut notes = Vec::new();
    let name = |key: &str| -> String {
        match key.split_once(':') {
            Some((scope, agent)) => format!("the {scope} by {}", report.display_of(agent)),
            None => report.display_of(key).to_string(),
        }
    };
    let spent = crate::cost::usd(budget.spent_usd);
    let limit = crate::cost::usd(budget.limit_usd);
    if budget.stopped.is_empty() {
        notes.push(format!(
            "Budget: about {spent} of {limit} spent (estimated); it stopped nothing."
        ));
    } else {
        let stopped: Vec<String> = budget.stopped.iter().map(|k| name(k)).collect();
        notes.push(format!(
            "Budget: about {spent} of {limit} spent (estimated); the budget stopped {}: this \
             report holds what was done before the limit.",
            stopped.join(", ")
        ));
    }
    if !budget.unpriced.is_empty() {
        let unpriced: Vec<String> = budget.unpriced.iter().map(|k| name(k)).collect();
        notes.push(format!(
            "Budget: {} could not be counted: no price for {} model (set `[prices.\"MODEL\"]` \
             in your config)",
            unpriced.join(", "),
            if unpriced.len() == 1 { "its" } else { "their" }
        ));
    }
    notes
}

fn reviewer_record(a: &AgentSpec) -> RunReviewer {
    RunReviewer {
        name: a.name.clone(),
        display: a.display.clone(),
        dir: crate::dispatch::backend::commands::safe_name(&a.name),
        model: a.model.clone(),
        effort: a.effort.clone(),
    }
}
