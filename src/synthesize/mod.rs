//! The synthesizer (`run --synthesize AGENT`): one configured agent, CLI or model API, reads the
//! consolidated report and writes the executive summary, the verdict rationale and a short retro
//! paragraph per agent, and proposes to merge, split, drop or demote findings.
//!
//! A model judges; code keeps it honest. The reply is JSON that code checks ([`reply`]): every
//! cited id must be a source finding of the report, every source id ends in one place at most,
//! a finding moves whole, a severity only goes down and only with a reason. A reply that fails
//! is sent back once with the reasons; a second failure leaves consolidation's own report
//! standing and the report says why. An accepted reply is applied by consolidation itself
//! ([`crate::consolidate::overrides`]): the new grouping gets the same representative,
//! calibration, confidence, tier and verdict rules, and attribution stays the list of source
//! ids. The synthesizer's own run is saved in the bundle under `synthesis/` (and
//! `synthesis-2/` for the second try), with the prompt it got.

pub mod input;
pub mod reply;

use std::collections::BTreeMap;
use std::path::Path;

use crate::consolidate::{ConsolidateOptions, consolidate};
use crate::dispatch::{self, DispatchOptions, ProgressMode};
use crate::types::{
    AgentSpec, RawReview, Report, Review, SynthesisInfo, SynthesisStatus, Target, TokenUsage,
    Verdict,
};

/// What consolidation made a report from: a synthesis consolidates them again with its
/// decisions, so attribution and every rule stay consolidation's.
pub struct Consolidated<'a> {
    pub reviews: &'a [Review],
    pub options: &'a ConsolidateOptions,
}

/// What a synthesis needs besides the analysis.
pub struct SynthesisRequest<'a> {
    pub spec: &'a AgentSpec,
    pub target: &'a Target,
    /// The run bundle: the synthesizer's files go under `synthesis/`.
    pub bundle_dir: &'a Path,
    pub progress: ProgressMode,
    /// The run's dispatch options (its cost meter and prices are shared).
    pub dispatch: &'a DispatchOptions,
}

/// Runs the synthesizer on `report` (consolidated from `from`) and applies its reply when it
/// passes the checks. Never fails the run: whatever happens ends in `report.synthesis` with
/// its reason.
pub fn synthesize(report: &mut Report, from: Consolidated<'_>, request: &SynthesisRequest<'_>) {
    let spec = request.spec;
    let mut info = SynthesisInfo {
        agent: Some(spec.name.clone()),
        status: SynthesisStatus::Rejected,
        ..SynthesisInfo::default()
    };
    let outcome = attempt_both(report, request, &mut info);
    match outcome {
        Ok(accepted) => {
            let by = by(spec);
            let mut options = from.options.clone();
            options.overrides = accepted.overrides;
            let mut again = consolidate(from.reviews, &options);
            again.summary = accepted.summary;
            if let Some(r) = accepted.verdict_rationale {
                again.verdict_rationale = r;
            }
            for a in &mut again.agents {
                a.synthesis_note = accepted.agents.get(&a.name).cloned();
            }
            again.warnings.push(format!(
                "The executive summary and verdict rationale were written by {by} and its \
                 proposals checked by code ({}); attributions come from the source findings' ids.",
                accepted.changes
            ));
            info.status = SynthesisStatus::Accepted;
            info.reason = Some(format!("accepted: {}", accepted.changes));
            *report = again;
        }
        Err(reason) => {
            report.warnings.push(format!(
                "The synthesis by {} was rejected: {reason}. This report is consolidation's own.",
                spec.display
            ));
            info.reason = Some(reason);
        }
    }
    report.synthesis = info;
}

fn by(spec: &AgentSpec) -> String {
    format!("the synthesizer ({})", spec.display)
}

/// The first try and, when its reply fails the checks, the second: the accepted reply, or why
/// none was.
fn attempt_both(
    report: &Report,
    request: &SynthesisRequest<'_>,
    info: &mut SynthesisInfo,
) -> Result<reply::Accepted, String> {
    if report.verdict == Verdict::NoReview {
        return Err("there was no review to synthesize".into());
    }
    // It is asked for JSON in words: the raw-review schema would be the wrong one.
    let mut spec = request.spec.clone();
    spec.http.structured_output = Some(false);
    let budget = if spec.kind.is_http() {
        spec.prompt_budget()
    } else {
        spec.context_window() / 2
    };
    let by = by(&spec);
    let first = input::prompt(report, budget);
    let text = run_once(&spec, &first, "synthesis", request, info)?;
    let errors = match reply::check(&text, report, &by) {
        Ok(accepted) => return Ok(accepted),
        Err(errors) => errors,
    };
    let second = input::retry_prompt(&first, &text, &errors);
    let text = run_once(&spec, &second, "synthesis-2", request, info)?;
    reply::check(&text, report, &by).map_err(|errors| {
        format!(
            "its reply failed the checks twice ({})",
            errors.join("; ").trim_end_matches('.')
        )
    })
}

/// One run of the synthesizer through dispatch (deadline, retries, budget, bundle): its text,
/// or why it gave none.
fn run_once(
    spec: &AgentSpec,
    prompt: &str,
    dir: &str,
    request: &SynthesisRequest<'_>,
    info: &mut SynthesisInfo,
) -> Result<String, String> {
    let bundle = request.bundle_dir.join(dir);
    std::fs::create_dir_all(&bundle)
        .and_then(|()| {
            std::fs::write(
                bundle.join(crate::bundle::BRIEF_FILE),
                crate::redact::redact(prompt).as_bytes(),
            )
        })
        .map_err(|e| {
            format!(
                "its bundle directory {} could not be written: {e}",
                bundle.display()
            )
        })?;
    let mut options = request.dispatch.clone();
    options.prompts = BTreeMap::new();
    options.meter_scope = format!("{dir}:");
    let outcome = dispatch::dispatch_blocking(
        &request.target.repo,
        &request.target.head,
        prompt,
        std::slice::from_ref(spec),
        &bundle,
        request.progress,
        options,
    )
    .map_err(|e| format!("it could not run: {e:#}"))?;
    let run: Option<RawReview> = outcome.reviews.into_iter().next();
    let Some(run) = run else {
        return Err("it did not run".into());
    };
    add_usage(info, &run);
    if outcome.cancelled {
        return Err("the run was cancelled".into());
    }
    match (&run.failure, run.text.trim().is_empty()) {
        (None, false) => Ok(run.text),
        (Some(f), _) => Err(format!("it did not answer: {}", f.sentence())),
        (None, true) => Err("it answered with nothing".into()),
    }
}

/// Adds a synthesizer run's tokens and cost to what the report shows for the synthesis.
fn add_usage(info: &mut SynthesisInfo, run: &RawReview) {
    if let Some(t) = &run.tokens {
        let sum = info.tokens.get_or_insert_with(TokenUsage::default);
        sum.input += t.input;
        sum.output += t.output;
        sum.cached += t.cached;
        sum.estimated |= t.estimated;
    }
    if let Some(c) = run.cost_usd {
        *info.cost_usd.get_or_insert(0.0) += c;
    }
}
