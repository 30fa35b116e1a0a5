//! From what the agents wrote to a report: parse every run, verify every finding against the
//! code, consolidate. The same path serves a fresh run, saved reviews (`consolidate --raw`) and
//! a saved run (`consolidate --bundle`), so all three give the same report for the same input.

use std::path::Path;

use anyhow::Context;

use crate::bundle;
use crate::consolidate::{ConsolidateOptions, consolidate};
use crate::parse::{MAX_FINDINGS, parse_review};
use crate::rounds::History;
use crate::store::Store;
use crate::types::{
    ParseWarning, RawReview, Report, ReportMeta, Review, Reviewer, RunStatus, Target,
};
use crate::verify::{VerifyContext, VerifyCounts};

/// A report and what was learned making it.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub report: Report,
    /// Findings by verification status; `None` when there was no repository to check against.
    pub verified: Option<VerifyCounts>,
    /// What the user should know (verification that could not run, a bundle's unfinished
    /// agents), one sentence each.
    pub warnings: Vec<String>,
    /// The verified reviews and the options the report was consolidated from: a synthesis
    /// consolidates them again with its decisions ([`crate::synthesize`]).
    pub reviews: Vec<Review>,
    pub options: ConsolidateOptions,
}

/// The report's metadata table for a run of `target` by `reviewers`.
pub fn meta_for(
    target: &Target,
    reviewers: Vec<Reviewer>,
    id: &str,
    date: chrono::NaiveDateTime,
) -> ReportMeta {
    ReportMeta {
        id: id.to_string(),
        date: Some(date),
        repo: Some(target.repo_name.clone()).filter(|r| !r.is_empty()),
        repo_url: target.web_url.clone(),
        head: Some(target.head.clone()),
        base: Some(target.merge_base.clone()),
        round: Some(1),
        round_of: None,
        author: target.author.clone(),
        pr: target.pr.clone(),
        branch: target.branch.clone(),
        commits: target.commits.clone(),
        reviewers,
        wall_clock_s: None,
    }
}

/// The most review text parsed and shown per agent. A review is tens of kilobytes; an agent
/// that writes megabytes is looping or dumping files, and every later stage (parse, verify,
/// consolidate, the appendix of every format) would hold copies of it. The whole output stays
/// in the run bundle.
pub const MAX_REVIEW_BYTES: usize = 2 * 1024 * 1024;

/// Parses every run that produced text; a failed run with no text gives no review (the report
/// names it from the run's status).
pub fn parse_runs(runs: &[RawReview]) -> Vec<Review> {
    runs.iter()
        .filter(|r| !r.text.trim().is_empty())
        .map(|r| {
            let (text, cut) = bounded(&r.text);
            let mut review = parse_review(&r.agent, text);
            if cut {
                review.warnings.push(ParseWarning {
                    line: None,
                    message: format!(
                        "the review is {} bytes long: only the first {} are read and shown (the \
                         whole output is in the run bundle)",
                        r.text.len(),
                        text.len()
                    ),
                });
            }
            if review.display_name.is_none() {
                review.display_name = r.display_name.clone();
            }
            if r.status != RunStatus::Ok {
                review.warnings.push(ParseWarning {
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

/// `text` cut to [`MAX_REVIEW_BYTES`] at a line end, and whether it was cut.
fn bounded(text: &str) -> (&str, bool) {
    if text.len() <= MAX_REVIEW_BYTES {
        return (text, false);
    }
    let mut end = MAX_REVIEW_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let end = text[..end].rfind('\n').map_or(end, |nl| nl + 1);
    (&text[..end], true)
}

/// Parse, verify against `target`, consolidate; `history` holds the change's earlier rounds;
/// `checkout` a checkout of the head deep-review made and no agent could write, which
/// verification may read.
pub fn analyze_runs(
    runs: &[RawReview],
    target: &Target,
    meta: ReportMeta,
    history: History,
    checkout: Option<std::path::PathBuf>,
) -> Analysis {
    let reviews = parse_runs(runs);
    let ctx = VerifyContext {
        repo: target.repo.clone(),
        head: target.head.clone(),
        base: Some(target.merge_base.clone()),
        checkout,
    };
    let changed = Some(
        target
            .changed_files
            .iter()
            .map(|f| f.path.clone())
            .collect(),
    );
    let mut analysis = analyze(
        reviews,
        Some((ctx, Some(target.changed_files.clone()))),
        changed,
        runs,
        meta,
        history,
    );
    analysis.report.unresolved_feedback = target.review_threads.clone();
    analysis
}

/// Verify saved reviews (against `verify` when given) and consolidate them, as a later round
/// of `history` when it has earlier rounds.
pub fn analyze_reviews(
    reviews: Vec<Review>,
    verify: Option<VerifyContext>,
    meta: ReportMeta,
    history: History,
) -> Analysis {
    analyze(
        reviews,
        verify.map(|ctx| (ctx, None)),
        None,
        &[],
        meta,
        history,
    )
}

fn analyze(
    mut reviews: Vec<Review>,
    verify: Option<(VerifyContext, Option<Vec<crate::types::ChangedFile>>)>,
    mut changed_files: Option<Vec<String>>,
    runs: &[RawReview],
    mut meta: ReportMeta,
    mut history: History,
) -> Analysis {
    let mut warnings = std::mem::take(&mut history.warnings);
    let mut runs = runs.to_vec();
    set_aside_non_reviews(&mut reviews, &mut runs, &mut warnings);
    cap_findings(&mut reviews, &mut warnings);
    let mut verified = None;
    if history.key.is_some() || !history.is_first() {
        history.stamp(&mut meta);
    }
    if !history.is_first()
        && let Some((ctx, _)) = &verify
    {
        warnings.extend(crate::rounds::code::mark_changes(
            &mut history,
            &ctx.repo,
            &ctx.head,
        ));
    }
    if let Some((ctx, changed)) = verify {
        let outcome = match changed {
            Some(changed) => {
                crate::verify::verify_reviews_with_changes(&ctx, changed, &mut reviews)
            }
            None => crate::verify::verify_reviews(&ctx, &mut reviews),
        };
        match outcome {
            Ok(outcome) => {
                verified = Some(outcome.counts);
                if changed_files.is_none() && ctx.base.is_some() {
                    changed_files = Some(outcome.changed_paths());
                }
            }
            Err(err) => {
                let why = format!("verification failed: {err:#}");
                warnings.push(why.clone());
                crate::verify::mark_unchecked(&mut reviews, &why);
            }
        }
    }
    let opts = ConsolidateOptions {
        meta,
        changed_files,
        runs,
        overrides: Default::default(),
        history,
        reliability: None,
    };
    Analysis {
        report: consolidate(&reviews, &opts),
        verified,
        warnings,
        reviews,
        options: opts,
    }
}

/// An agent whose text holds nothing of the review layout ([`crate::parse::NOT_A_REVIEW`]: a
/// config file given as `--raw`, an error page an agent printed) failed: its text is no review
/// (never one that found nothing, which would let a `--fail-on` gate pass on nothing), and the
/// report names it among the failed agents with the reason. Its run, or one made for a saved
/// review that had none, says so.
fn set_aside_non_reviews(
    reviews: &mut Vec<Review>,
    runs: &mut Vec<RawReview>,
    warnings: &mut Vec<String>,
) {
    reviews.retain(|review| {
        let Some(reason) = &review.not_a_review else {
            return true;
        };
        warnings.push(format!(
            "{}: {reason}",
            crate::text::printable_line(review.display())
        ));
        let failure = crate::types::Failure::NotAReview {
            cause: reason.clone(),
        };
        match runs.iter_mut().find(|r| r.agent == review.agent) {
            Some(run) if run.status == RunStatus::Ok => {
                run.status = RunStatus::Failed;
                run.error = Some(failure.sentence());
                run.failure = Some(failure);
            }
            Some(_) => {}
            None => runs.push(RawReview::failed(
                &review.agent,
                review.display_name.clone(),
                Some(failure),
            )),
        }
        false
    });
}

/// Cuts each review to its first [`MAX_FINDINGS`] findings ([`crate::parse::cap_findings`]),
/// saying so to the user too. The parser already reads no more than that; this holds for
/// reviews that come another way (a JSON report's reviews, a bundle), so the time and memory of
/// verification and consolidation stay bounded whatever a review holds.
fn cap_findings(reviews: &mut [Review], warnings: &mut Vec<String>) {
    for review in reviews {
        if let Some(message) = crate::parse::cap_findings(review, MAX_FINDINGS) {
            warnings.push(format!(
                "{}: {message}",
                crate::text::printable_line(&review.agent)
            ));
        }
    }
}

/// A saved run consolidated again from its bundle, with no agent: the same findings,
/// attributions and verdict as the run gave (verified again when its repository is here).
pub fn from_bundle(dir: &Path) -> anyhow::Result<Analysis> {
    let saved = bundle::read(dir)
        .with_context(|| format!("cannot consolidate the run bundle {}", dir.display()))?;
    let id = saved
        .record
        .as_ref()
        .map(|r| r.id.clone())
        .or_else(|| dir.file_name().and_then(|n| n.to_str()).map(str::to_string))
        .unwrap_or_default();
    let date = saved
        .record
        .as_ref()
        .map(|r| r.started_at.naive_local())
        .unwrap_or_else(|| chrono::Local::now().naive_local());
    let reviewers = match &saved.record {
        Some(r) => r
            .reviewers
            .iter()
            .map(|rv| Reviewer {
                name: rv.name.clone(),
                display: rv.display.clone(),
                model: rv.model.clone(),
                effort: rv.effort.clone(),
            })
            .collect(),
        None => saved
            .runs
            .iter()
            .map(|r| Reviewer {
                name: r.agent.clone(),
                display: r
                    .display_name
                    .clone()
                    .unwrap_or_else(|| crate::types::default_display(&r.agent)),
                model: r.model.clone(),
                effort: r.effort.clone(),
            })
            .collect(),
    };
    let meta = meta_for(&saved.target, reviewers, &id, date);
    // The run's earlier rounds are the reports of its store older than it.
    let history = store_of_bundle(dir)
        .map(|store| crate::rounds::history::in_store(&store, &saved.target, Some(&id)))
        .unwrap_or_default();
    let mut analysis = if crate::git::resolve_commit(&saved.target.repo, &saved.target.head).is_ok()
    {
        analyze_runs(&saved.runs, &saved.target, meta, history, None)
    } else {
        let mut a = analyze(
            parse_runs(&saved.runs),
            None,
            None,
            &saved.runs,
            meta,
            history,
        );
        a.report.unresolved_feedback = saved.target.review_threads.clone();
        a.warnings.push(format!(
            "the repository of this run ({}) is not here at {}: findings are not verified",
            saved.target.repo.display(),
            saved.target.head
        ));
        a
    };
    analysis.report.meta.wall_clock_s = saved.record.as_ref().and_then(|r| r.wall_clock_s);
    for r in &saved.unfinished {
        analysis.warnings.push(format!(
            "{} did not finish in this bundle: `deep-review run --resume {id}` runs it again",
            r.display
        ));
    }
    Ok(analysis)
}

/// The store a bundle directory belongs to (`<store>/runs/<id>`), when it sits in one.
fn store_of_bundle(dir: &Path) -> Option<Store> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let runs = dir.parent()?;
    let store = runs.parent()?;
    (runs.file_name()? == crate::store::RUNS_DIR).then(|| Store::new(store))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Finding;

    #[test]
    fn a_review_that_comes_with_more_findings_than_the_cap_is_cut_and_says_so() {
        let flooded = Review {
            agent: "looping".into(),
            findings: (0..MAX_FINDINGS + 3)
                .map(|i| Finding::new(format!("I{i}"), format!("Finding {i}")))
                .collect(),
            ..Review::default()
        };
        let fine = Review {
            agent: "careful".into(),
            findings: vec![Finding::new("I1", "One finding")],
            ..Review::default()
        };
        let mut reviews = vec![flooded, fine];
        let mut warnings = Vec::new();
        cap_findings(&mut reviews, &mut warnings);
        assert_eq!(reviews[0].findings.len(), MAX_FINDINGS);
        assert_eq!(
            reviews[0].findings.last().unwrap().id,
            format!("I{}", MAX_FINDINGS - 1)
        );
        assert_eq!(reviews[1].findings.len(), 1);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with("looping: the review holds 5003 findings"),
            "{warnings:?}"
        );
        assert!(reviews[1].warnings.is_empty());
        assert_eq!(reviews[0].warnings.len(), 1);
    }
}
