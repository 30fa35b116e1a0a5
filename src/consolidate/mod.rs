//! Consolidate stage: verified reviews → one [`Report`], entirely in code.
//!
//! 1. findings that verification found pre-existing leave the findings for the design
//!    observations (tagged `future, pre-existing`);
//! 2. the rest are clustered across agents ([`cluster`]): one defect, one merged finding, with
//!    every source finding's id kept so that attribution is a fact, not a claim; testing,
//!    documentation and design notes that cite a finding's place and say the same back it, and
//!    file-specific gaps no finding covers become suggestions ([`noted`]);
//! 3. each cluster's severity is calibrated ([`calibrate`]) and its confidence computed
//!    ([`confidence`]);
//! 4. in a later round, each merged finding is matched to the earlier rounds' findings
//!    ([`matching`]): one the author declined and whose code did not change is
//!    set aside under "Declined in prior rounds", the rest are `new`, `persisting` or
//!    `regressed`;
//! 5. the verdict follows from what stands ([`verdict`]); the prose sections are merged
//!    ([`notes`]); the retro counts what each agent did ([`retro`]).

pub mod calibrate;
pub mod cluster;
pub mod confidence;
pub mod fingerprint;
pub mod matching;
pub mod noted;
pub mod notes;
pub mod overrides;
pub mod retro;
pub mod similarity;
pub mod summary;
pub mod verdict;

use std::collections::BTreeMap;

use rayon::prelude::*;

/// A hash map with foldhash's per-process seeded hasher: for consolidation's many small keys
/// (interned words, blocking keys), where SipHash cost a tenth of the time.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

use crate::types::history::History;
use crate::types::{
    AppendixEntry, AttributedNote, Category, Finding, Location, MergedFinding, MergedObservation,
    Observation, ObservationKind, PriorRounds, RawReview, Report, ReportMeta, Review, Reviewer,
    RoundStatus, Severity, SourceRef, Tier, Verdict, Verification, VerificationStatus,
};
use crate::verify::coverage::PathSet;

use calibrate::{CalibrationContext, Vote};
use noted::LocatedNote;
use notes::Note;
use retro::AgentOutcome;
use similarity::{Corpus, FindingProfile};

/// What consolidation needs besides the reviews.
#[derive(Debug, Clone, Default)]
pub struct ConsolidateOptions {
    /// The metadata table. Reviewers missing here are added from the reviews.
    pub meta: ReportMeta,
    /// The files the change touched, when known: coverage is measured against them.
    pub changed_files: Option<Vec<String>>,
    /// How each agent's run went (status, duration, usage), when the reviews come from a run.
    pub runs: Vec<RawReview>,
    /// A validated synthesis's merges, splits, drops and severity changes.
    pub overrides: overrides::Overrides,
    /// The change's earlier rounds: findings are matched to theirs ([`crate::rounds`]).
    pub history: History,
    /// The agents' records ([`crate::outcomes`]): each agent's chances of raising a real defect
    /// and a spurious point, weighed into every finding's confidence
    /// ([`confidence::record_term`]). `None` or empty: no agent has a record.
    pub reliability: Option<crate::types::Reliability>,
}

/// The thresholds consolidation decides by: the defaults everywhere but in the benchmark's
/// leave-one-repository-out check, which chooses them on one repository and scores another
/// ([`consolidate_tuned`]).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Tuning {
    /// Pair score at which two findings name one defect ([`cluster::MERGE_THRESHOLD`]).
    pub merge_threshold: f64,
    /// Log-odds at which a finding is confident enough to be shown (0: confidence 0.5, see
    /// [`confidence`]).
    pub keep_log_odds: f64,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            merge_threshold: cluster::MERGE_THRESHOLD,
            keep_log_odds: 0.0,
        }
    }
}

/// A merged finding, the index of its first source (the order the agents wrote them in; gap
/// findings last) and what it continues of the earlier rounds.
type Kept = (MergedFinding, usize, matching::Fate);

/// A finding of one agent, with where it came from.
struct SourceFinding<'a> {
    agent: usize,
    finding: &'a Finding,
}

/// Consolidates the reviews into one report.
pub fn consolidate(reviews: &[Review], opts: &ConsolidateOptions) -> Report {
    consolidate_tuned(reviews, opts, Tuning::default())
}

/// [`consolidate`] with other thresholds.
pub fn consolidate_tuned(reviews: &[Review], opts: &ConsolidateOptions, tuning: Tuning) -> Report {
    let roster = Roster::new(reviews, opts);
    let reviewed = reviews.iter().any(|r| counts_as_review(r, &opts.runs));
    let mut outcomes: Vec<AgentOutcome> = vec![AgentOutcome::default(); roster.len()];

    // 1. Pre-existing findings become design observations; the rest are clustered.
    let (sources, pre_existing) = split_pre_existing(reviews, &roster);
    // 2. Earlier rounds, before clustering.
    let CurrentFindings {
        sources,
        profiles,
        earlier,
    } = match_earlier_rounds(sources, reviewed, opts, &roster, &mut outcomes);
    // 3. Cluster, and the notes that back each cluster.
    let clustered = Clustered::new(sources, profiles, &roster, opts, tuning);
    let located_notes = located_notes(reviews, &roster);
    let support = clustered.notes_backing(&located_notes);
    // 4. One merged finding per cluster, the gaps notes name, in report order.
    let mut kept = clustered.merge(&support, &earlier.matches, reviews, &roster, opts, tuning);
    let (testing_gaps, documentation, gaps) =
        testing_and_documentation(reviews, &roster, &clustered);
    kept.extend(gaps);
    let (findings, fates) = in_report_order(kept);
    let prior_rounds = if reviewed {
        earlier.prior_rounds(&opts.history, &findings, fates)
    } else {
        PriorRounds::default()
    };
    count_outcomes(&findings, &pre_existing, &roster, &mut outcomes);

    // 5. Verdict, prose sections, retro, summary.
    let verdict = if reviewed {
        verdict::verdict(&findings)
    } else {
        Verdict::NoReview
    };
    let observations = merge_all_observations(reviews, &roster, pre_existing);
    let limitations = notes::merge_notes(
        &collect_notes(reviews, &roster, |r| r.limitations.clone()),
        &roster.names,
    );
    let agents = agent_retros(reviews, opts, &roster, &outcomes);
    let round = opts.meta.round.unwrap_or(1);
    let summary = executive_summary(reviews, opts, verdict, &findings, &agents, &prior_rounds);
    let verdict_rationale = summary::verdict_rationale(verdict, &findings);

    Report {
        schema_version: crate::types::report::REPORT_SCHEMA_VERSION,
        round,
        meta: report_meta(opts, &roster),
        verdict,
        verdict_rationale,
        summary,
        findings,
        observations,
        testing_gaps,
        documentation,
        limitations,
        agents,
        appendix: appendix(reviews, &roster),
        warnings: report_warnings(reviews, opts, &roster),
        synthesis: Default::default(),
        budget: None,
        prior_rounds,
        resolution: None,
        checkout: None,
        unresolved_feedback: Vec::new(),
        reliability: opts
            .reliability
            .as_ref()
            .map(|r| r.of_agents(&roster.names))
            .filter(|r| !r.is_empty()),
    }
}

/// Every agent's findings in review order: those verification found pre-existing become design
/// observations of their agent (the change did not write that code), the rest are this round's
/// sources.
fn split_pre_existing<'a>(
    reviews: &'a [Review],
    roster: &Roster,
) -> (Vec<SourceFinding<'a>>, Vec<(usize, Observation)>) {
    let mut sources: Vec<SourceFinding<'_>> = Vec::new();
    let mut pre_existing: Vec<(usize, Observation)> = Vec::new();
    for review in reviews {
        let agent = roster.index(&review.agent);
        for finding in &review.findings {
            if finding
                .verification
                .as_ref()
                .is_some_and(|v| v.pre_existing)
            {
                pre_existing.push((agent, pre_existing_observation(finding)));
            } else {
                sources.push(SourceFinding { agent, finding });
            }
        }
    }
    (sources, pre_existing)
}

/// This round's findings after the earlier rounds had their say.
struct CurrentFindings<'a> {
    sources: Vec<SourceFinding<'a>>,
    /// One per source.
    profiles: Vec<FindingProfile>,
    earlier: EarlierRounds,
}

/// How this round's findings relate to the earlier rounds' findings.
struct EarlierRounds {
    /// One per source of [`CurrentFindings`]: the earlier finding it continues, if any.
    matches: Vec<Option<matching::Match>>,
    /// Findings set aside: they raise again what an earlier round declined.
    dropped: Vec<matching::Dropped>,
    /// Every earlier finding some finding of this round matched.
    touched: std::collections::HashSet<(u32, String)>,
}

/// Matches each agent's finding to the earlier rounds' findings, before clustering, so that one
/// raising a declined finding again is set aside on its own (recorded in its agent's retro) and
/// never carried in (or carrying) a cluster with other defects.
fn match_earlier_rounds<'a>(
    sources: Vec<SourceFinding<'a>>,
    reviewed: bool,
    opts: &ConsolidateOptions,
    roster: &Roster,
    outcomes: &mut [AgentOutcome],
) -> CurrentFindings<'a> {
    // Profiles are independent of each other, and tokenizing is a fifth of a large run's time.
    let all_profiles: Vec<FindingProfile> = sources
        .par_iter()
        .map(|s| FindingProfile::of(s.finding))
        .collect();
    let matching = if reviewed && !opts.history.is_first() {
        let list: Vec<&Finding> = sources.iter().map(|s| s.finding).collect();
        matching::match_profiled(&list, &all_profiles, &opts.history)
    } else {
        matching::Matching {
            matches: vec![None; sources.len()],
            ..matching::Matching::default()
        }
    };
    let mut current = CurrentFindings {
        sources: Vec::with_capacity(sources.len()),
        profiles: Vec::with_capacity(sources.len()),
        earlier: EarlierRounds {
            matches: Vec::with_capacity(sources.len()),
            dropped: Vec::new(),
            touched: matching.touched,
        },
    };
    for ((src, m), profile) in sources.into_iter().zip(matching.matches).zip(all_profiles) {
        if let Some(matching::Match {
            fate: matching::Fate::Declined { prior },
            ..
        }) = &m
        {
            outcomes[src.agent]
                .calibrations
                .push(set_aside_reason(src.finding, prior));
            current.earlier.dropped.push(matching::Dropped {
                prior: prior.clone(),
                text: format!("{}: {}", roster.displays[src.agent], src.finding.title),
            });
            continue;
        }
        current.sources.push(src);
        current.earlier.matches.push(m);
        current.profiles.push(profile);
    }
    current
}

impl EarlierRounds {
    /// What became of the earlier rounds' findings, given the merged findings of this round
    /// (in report order, numbered) and the fate of each.
    fn prior_rounds(
        &self,
        history: &History,
        findings: &[MergedFinding],
        fates: Vec<matching::Fate>,
    ) -> PriorRounds {
        let fates_of_kept: Vec<(String, matching::Fate)> =
            findings.iter().map(|f| f.id.clone()).zip(fates).collect();
        matching::prior_rounds(
            history,
            findings,
            &fates_of_kept,
            &self.dropped,
            &self.touched,
        )
    }
}

/// The merged testing gaps and documentation notes of every review, without those that become
/// gap findings (the third list, see [`Clustered::uncovered_gaps`]).
fn testing_and_documentation(
    reviews: &[Review],
    roster: &Roster,
    clustered: &Clustered<'_>,
) -> (Vec<AttributedNote>, Vec<AttributedNote>, Vec<Kept>) {
    let total_agents = reviews.iter().filter(|r| !r.findings.is_empty()).count();
    let mut testing_gaps = notes::merge_notes(
        &collect_notes(reviews, roster, |r| r.testing.gaps.clone()),
        &roster.names,
    );
    let mut documentation = notes::merge_notes(
        &collect_notes(reviews, roster, |r| r.documentation.clone()),
        &roster.names,
    );
    let mut gaps = clustered.uncovered_gaps(&mut testing_gaps, "Testing", roster, total_agents);
    gaps.extend(clustered.uncovered_gaps(
        &mut documentation,
        "Documentation",
        roster,
        total_agents,
    ));
    (testing_gaps, documentation, gaps)
}

/// The retro's line for a finding set aside because round `prior.0` declined it.
fn set_aside_reason(finding: &Finding, prior: &(u32, String)) -> String {
    format!(
        "{} set aside: it raises again what round {} declined{}",
        finding.id,
        prior.0,
        if prior.1.is_empty() {
            String::new()
        } else {
            format!(" ({})", prior.1)
        }
    )
}

/// This round's findings grouped into clusters of one defect each.
struct Clustered<'a> {
    sources: Vec<SourceFinding<'a>>,
    /// The sources' findings, in the same order (what [`noted`] compares notes with).
    findings: Vec<&'a Finding>,
    corpus: Corpus,
    /// Indices into `sources`, one list per defect.
    clusters: Vec<Vec<usize>>,
}

impl<'a> Clustered<'a> {
    /// Clusters the sources by their evidence ([`cluster`]), then applies the synthesizer's
    /// accepted merges and splits, which name findings by their source ids.
    fn new(
        sources: Vec<SourceFinding<'a>>,
        profiles: Vec<FindingProfile>,
        roster: &Roster,
        opts: &ConsolidateOptions,
        tuning: Tuning,
    ) -> Self {
        let agents_of: Vec<usize> = sources.iter().map(|s| s.agent).collect();
        let corpus = Corpus::new(profiles, agents_of);
        let clusters = cluster::cluster_at(&corpus, tuning.merge_threshold);
        let keys: Vec<overrides::SourceKey> = sources
            .iter()
            .map(|s| (roster.names[s.agent].clone(), s.finding.id.clone()))
            .collect();
        let clusters = opts.overrides.regroup(clusters, &keys);
        let findings = sources.iter().map(|s| s.finding).collect();
        Clustered {
            sources,
            findings,
            corpus,
            clusters,
        }
    }

    /// Per cluster, the notes that cite the places of its findings and say the same.
    fn notes_backing<'n>(&self, notes: &'n [LocatedNote]) -> Vec<Vec<&'n LocatedNote>> {
        let mut support: Vec<Vec<&LocatedNote>> = vec![Vec::new(); self.clusters.len()];
        for (note, backs) in notes.iter().zip(self.backing(notes)) {
            if let Some(c) = backs {
                support[c].push(note);
            }
        }
        support
    }

    /// For each note, the cluster it backs, if any.
    fn backing(&self, notes: &[LocatedNote]) -> Vec<Option<usize>> {
        noted::backing(notes, &self.clusters, &self.findings, &self.corpus.agents)
    }

    /// One merged finding per cluster, with the fate of its best-matched member in the earlier
    /// rounds and the index of its first member (the order the agents wrote them in). A finding
    /// that continues an earlier one keeps that one's fingerprint, whatever its wording now: the
    /// pull request's thread of it continues instead of a second comment. Clusters are merged
    /// independently of each other, on every core.
    fn merge(
        &self,
        support: &[Vec<&LocatedNote>],
        matches: &[Option<matching::Match>],
        reviews: &[Review],
        roster: &Roster,
        opts: &ConsolidateOptions,
        tuning: Tuning,
    ) -> Vec<Kept> {
        let prior_prints: std::collections::HashMap<(u32, String), &str> = opts
            .history
            .findings()
            .filter(|p| !p.fingerprint.is_empty())
            .map(|p| (p.key(), p.fingerprint.as_str()))
            .collect();
        let inputs = MergeInputs::new(
            &self.sources,
            roster,
            reviews,
            &self.corpus,
            tuning,
            opts.reliability.as_ref(),
        );
        self.clusters
            .par_iter()
            .zip(support)
            .map(|(members, support)| {
                let mut f = inputs.merge_cluster(members, support);
                opts.overrides.apply(&mut f);
                let fate = members
                    .iter()
                    .filter_map(|&i| matches[i].as_ref())
                    .max_by(|a, b| a.score.total_cmp(&b.score))
                    .map_or(matching::Fate::New, |m| m.fate.clone());
                matching::apply(&mut f, &fate);
                if let matching::Fate::Persisting { prior, .. }
                | matching::Fate::Regressed { prior } = &fate
                    && let Some(print) = prior_prints.get(prior)
                {
                    f.fingerprint = (*print).to_string();
                }
                (f, members[0], fate)
            })
            .collect()
    }

    /// The testing or documentation notes of `section` that cite a place no finding covers and
    /// say something is missing or wrong there: each becomes a suggestion of its agents (a gap
    /// of that file) and leaves `notes`.
    fn uncovered_gaps(
        &self,
        notes: &mut Vec<AttributedNote>,
        section: &'static str,
        roster: &Roster,
        total_agents: usize,
    ) -> Vec<Kept> {
        let mut gaps = Vec::new();
        notes.retain(|note| {
            let locations = noted::cited_locations(&note.text);
            if locations.is_empty() || !noted::reads_as_gap(&note.text) {
                return true;
            }
            let probe = LocatedNote {
                agent: roster.index(&note.agents[0]),
                section,
                position: 0,
                text: note.text.clone(),
                locations: locations.clone(),
            };
            let covered = self.backing(std::slice::from_ref(&probe))[0].is_some();
            if !covered {
                gaps.push((
                    gap_finding(note, section, locations, total_agents),
                    usize::MAX,
                    matching::Fate::New,
                ));
            }
            covered
        });
        gaps
    }
}

/// The merged findings in report order (shown first, then severity, then support, then the
/// order the agents wrote them in), numbered, with their fates in the same order.
fn in_report_order(mut kept: Vec<Kept>) -> (Vec<MergedFinding>, Vec<matching::Fate>) {
    kept.sort_by(|(a, ia, _), (b, ib, _)| {
        b.is_shown()
            .cmp(&a.is_shown())
            .then(b.severity.cmp(&a.severity))
            .then(b.agents.len().cmp(&a.agents.len()))
            .then(ia.cmp(ib))
    });
    let mut findings: Vec<MergedFinding> = Vec::with_capacity(kept.len());
    let mut fates: Vec<matching::Fate> = Vec::with_capacity(kept.len());
    for (f, _, fate) in kept {
        findings.push(f);
        fates.push(fate);
    }
    assign_ids(&mut findings);
    (findings, fates)
}

/// What the retro counts for each agent from the merged findings: unique insights (shown
/// findings only it raised), false positives (its unverified findings), each severity
/// calibration of its findings, and its findings moved to the observations as pre-existing.
fn count_outcomes(
    findings: &[MergedFinding],
    pre_existing: &[(usize, Observation)],
    roster: &Roster,
    outcomes: &mut [AgentOutcome],
) {
    for f in findings {
        for src in &f.sources {
            let a = roster.index(&src.agent);
            if f.is_shown() && f.agents.len() == 1 {
                outcomes[a].unique_insights += 1;
            }
            if f.tier == Tier::Unverified {
                outcomes[a].false_positives += 1;
            }
        }
        if let Some(reason) = &f.calibration {
            for src in &f.sources {
                let a = roster.index(&src.agent);
                if src.severity.is_some_and(|s| s != f.severity) {
                    outcomes[a].calibrations.push(format!(
                        "{} {} → {} ({})",
                        src.id,
                        src.severity.map(|s| s.as_str()).unwrap_or("none"),
                        f.severity,
                        reason_tail(reason)
                    ));
                }
            }
        }
    }
    for (agent, obs) in pre_existing {
        outcomes[*agent].calibrations.push(format!(
            "{} moved to design observations (pre-existing)",
            obs.title.as_deref().unwrap_or("a finding")
        ));
    }
}

/// One retro row per agent of the roster, coverage measured against the changed files when
/// known.
fn agent_retros(
    reviews: &[Review],
    opts: &ConsolidateOptions,
    roster: &Roster,
    outcomes: &[AgentOutcome],
) -> Vec<crate::types::AgentRetro> {
    let universe = retro::coverage_universe(reviews, opts.changed_files.as_deref());
    (0..roster.len())
        .map(|a| {
            let name = &roster.names[a];
            retro::agent_retro(
                name,
                &roster.displays[a],
                reviews.iter().find(|r| &r.agent == name),
                opts.runs.iter().find(|r| &r.agent == name),
                &outcomes[a],
                &universe,
            )
        })
        .collect()
}

/// The executive summary ([`summary`]), opened in a later round by what the earlier rounds
/// became.
fn executive_summary(
    reviews: &[Review],
    opts: &ConsolidateOptions,
    verdict: Verdict,
    findings: &[MergedFinding],
    agents: &[crate::types::AgentRetro],
    prior_rounds: &PriorRounds,
) -> String {
    let files = opts.changed_files.as_ref().map_or(0, Vec::len);
    let summary = summary::executive_summary(verdict, findings, agents, reviews, files);
    let round = opts.meta.round.unwrap_or(1);
    match summary::rounds_paragraph(round, opts.meta.round_of.as_deref(), prior_rounds) {
        Some(rounds) => format!("{rounds}\n\n{summary}"),
        None => summary,
    }
}

/// The metadata table: the given one, every agent named as the roster names it, and agents
/// of the reviews and runs it did not list added with their run's model.
fn report_meta(opts: &ConsolidateOptions, roster: &Roster) -> ReportMeta {
    let mut meta = opts.meta.clone();
    for r in &mut meta.reviewers {
        r.display = roster.displays[roster.index(&r.name)].clone();
    }
    for a in 0..roster.len() {
        if !meta.reviewers.iter().any(|r| r.name == roster.names[a]) {
            let run = opts.runs.iter().find(|r| r.agent == roster.names[a]);
            meta.reviewers.push(Reviewer {
                name: roster.names[a].clone(),
                display: roster.displays[a].clone(),
                model: run.and_then(|r| r.model.clone()),
                effort: run.and_then(|r| r.effort.clone()),
            });
        }
    }
    meta
}

/// Every review's raw text, under its agent's display name.
fn appendix(reviews: &[Review], roster: &Roster) -> Vec<AppendixEntry> {
    reviews
        .iter()
        .map(|r| AppendixEntry {
            agent: r.agent.clone(),
            display: roster.displays[roster.index(&r.agent)].clone(),
            text: r.raw.clone(),
        })
        .collect()
}

/// What the reader should know about the input: agents that changed their read-only worktree,
/// and every parse warning of every review, with its line.
fn report_warnings(reviews: &[Review], opts: &ConsolidateOptions, roster: &Roster) -> Vec<String> {
    let mut warnings = Vec::new();
    for run in &opts.runs {
        if !run.worktree_changes.is_empty() {
            let display = &roster.displays[roster.index(&run.agent)];
            warnings.push(format!(
                "{display} changed its read-only worktree ({}); the changes were discarded with \
                 the worktree and your checkout was not touched",
                run.worktree_changes.join(", ")
            ));
        }
        for note in &run.notes {
            let display = &roster.displays[roster.index(&run.agent)];
            warnings.push(format!("{display}: {note}"));
        }
    }
    for r in reviews {
        for w in &r.warnings {
            match w.line {
                Some(line) => warnings.push(format!(
                    "{} review, line {line}: {}",
                    r.display(),
                    w.message
                )),
                None => warnings.push(format!("{} review: {}", r.display(), w.message)),
            }
        }
    }
    warnings
}

/// The agents of the report in reviewer order: the metadata's reviewers first, then the
/// reviews', then runs that produced no review.
struct Roster {
    names: Vec<String>,
    displays: Vec<String>,
}

impl Roster {
    fn new(reviews: &[Review], opts: &ConsolidateOptions) -> Self {
        let mut roster = Roster {
            names: Vec::new(),
            displays: Vec::new(),
        };
        for r in &opts.meta.reviewers {
            roster.add(&r.name, &r.display);
        }
        for r in reviews {
            roster.add(&r.agent, r.display());
        }
        for r in &opts.runs {
            roster.add(&r.agent, r.display_name.as_deref().unwrap_or(&r.agent));
        }
        roster
    }

    fn add(&mut self, name: &str, display: &str) {
        if !self.names.iter().any(|n| n == name) {
            self.names.push(name.to_string());
            // One line whatever a saved report gave: a name is written into headings.
            self.displays.push(if display == name {
                crate::types::default_display(name)
            } else {
                crate::text::one_line_name(display).into_owned()
            });
        }
    }

    fn index(&self, name: &str) -> usize {
        self.names.iter().position(|n| n == name).unwrap_or(0)
    }

    fn len(&self) -> usize {
        self.names.len()
    }
}

/// Whether a review can carry a verdict: it says something (a finding, a summary, an
/// observation, a coverage entry or a verdict of its own), and its run, when known, completed.
/// Partial text from a failed or timed-out run is shown, but judges nothing.
fn counts_as_review(review: &Review, runs: &[RawReview]) -> bool {
    let says_something = !review.findings.is_empty()
        || !review.summary.trim().is_empty()
        || !review.observations.is_empty()
        || !review.coverage.is_empty()
        || review.verdict.is_some();
    let completed = runs
        .iter()
        .find(|r| r.agent == review.agent)
        .is_none_or(|r| r.status == crate::types::RunStatus::Ok);
    says_something && completed
}

/// What merging any cluster reads: this round's findings, the agents, their reviews and what
/// each review's coverage names, prepared once for every cluster.
struct MergeInputs<'a> {
    sources: &'a [SourceFinding<'a>],
    roster: &'a Roster,
    reviews: &'a [Review],
    corpus: &'a Corpus,
    tuning: Tuning,
    reliability: Option<&'a crate::types::Reliability>,
    /// Per review, the paths its coverage summary names ([`others_saw_the_code`]).
    coverage: Vec<PathSet<'a>>,
    /// Agents that reported at least one finding: those that reported nothing may have failed,
    /// so their silence is no evidence against a finding.
    reporting_agents: usize,
}

impl<'a> MergeInputs<'a> {
    fn new(
        sources: &'a [SourceFinding<'a>],
        roster: &'a Roster,
        reviews: &'a [Review],
        corpus: &'a Corpus,
        tuning: Tuning,
        reliability: Option<&'a crate::types::Reliability>,
    ) -> Self {
        MergeInputs {
            sources,
            roster,
            reviews,
            corpus,
            tuning,
            reliability,
            coverage: reviews
                .iter()
                .map(|r| PathSet::new(r.coverage.iter().map(|c| c.path.as_str())))
                .collect(),
            reporting_agents: reviews.iter().filter(|r| !r.findings.is_empty()).count(),
        }
    }

    fn finding(&self, i: usize) -> &'a Finding {
        self.sources[i].finding
    }

    /// Builds the merged finding of one cluster: its severity calibrated, the member the report
    /// shows, who raised or noted it, and how confident the evidence makes it.
    fn merge_cluster(&self, members: &[usize], support: &[&LocatedNote]) -> MergedFinding {
        let calibration = self.calibrate(members);
        let representative =
            choose_representative(members, self.sources, calibration.severity, self.corpus);
        let rep = self.finding(representative);
        // The representative first: it is the source the report shows.
        let mut ordered: Vec<usize> = members.to_vec();
        ordered.sort_by_key(|&i| (i != representative, self.sources[i].agent));
        let (sources_out, agent_idx) = self.attribution(members, &ordered, support);
        let written = members.iter().any(|&i| self.finding(i).severity.is_some());
        let evidence = self.evidence(
            members,
            rep,
            agent_idx.len(),
            written.then_some(calibration.severity),
        );
        let record = self.record(rep, &agent_idx);
        let score = match &record {
            Some(term) => confidence::confidence_with_record(&evidence, term),
            None => confidence::confidence(&evidence),
        };
        let verification = rep.verification.clone();
        let mut merged = MergedFinding {
            id: String::new(),
            title: rep.title.clone(),
            body: rep.explanation.clone(),
            severity: calibration.severity,
            category: rep.category.clone(),
            locations: merged_locations(&ordered, self.sources),
            code: rep.code.clone(),
            fix: rep.fix.clone(),
            fix_diff: rep.fix_diff.clone(),
            agents: agent_idx
                .iter()
                .map(|&a| self.roster.names[a].clone())
                .collect(),
            sources: sources_out,
            calibration: calibration.reason,
            confidence: Some((score * 100.0).round() / 100.0),
            confidence_reason: record.map(|r| r.reason),
            tier: tier(
                confidence::log_odds_of(score) >= self.tuning.keep_log_odds,
                agent_idx.len(),
                verification.as_ref(),
            ),
            verification,
            fingerprint: String::new(),
            round_status: RoundStatus::New,
            prior: None,
        };
        merged.fingerprint = fingerprint::fingerprint(&merged);
        merged
    }

    /// The cluster's severity from its members' votes, lowered when another agent reviewed the
    /// code and did not raise it, when no quote is at head, or when the code marks it as known.
    fn calibrate(&self, members: &[usize]) -> calibrate::Calibration {
        let votes: Vec<Vote<'_>> = members
            .iter()
            .map(|&i| Vote {
                display: &self.roster.displays[self.sources[i].agent],
                severity: self.finding(i).severity,
            })
            .collect();
        let verification = |i: usize| self.finding(i).verification.as_ref();
        let ctx = CalibrationContext {
            others_saw_the_code: self.others_saw_the_code(members),
            quote_missing: members
                .iter()
                .all(|&i| verification(i).is_some_and(|v| v.quote_ok == Some(false))),
            known_issue_comment: members
                .iter()
                .find_map(|&i| verification(i).and_then(|v| v.known_issue_comment.as_deref())),
        };
        calibrate::calibrate(&votes, ctx)
    }

    /// True when an agent outside the cluster says in its coverage that it reviewed a file the
    /// cluster's findings are in.
    fn others_saw_the_code(&self, members: &[usize]) -> bool {
        let paths: Vec<&str> = members
            .iter()
            .flat_map(|&i| self.finding(i).locations.iter().map(|l| l.path.as_str()))
            .collect();
        let inside: Vec<&str> = members
            .iter()
            .map(|&i| self.roster.names[self.sources[i].agent].as_str())
            .collect();
        self.reviews
            .iter()
            .zip(&self.coverage)
            .filter(|(r, _)| !inside.contains(&r.agent.as_str()))
            .any(|(_, covered)| paths.iter().any(|p| covered.matches(p)))
    }

    /// The merged finding's sources, `ordered` (the representative first) and then each agent
    /// whose note backs it, once; and the indices of every agent among them, sorted.
    fn attribution(
        &self,
        members: &[usize],
        ordered: &[usize],
        support: &[&LocatedNote],
    ) -> (Vec<SourceRef>, Vec<usize>) {
        let mut sources_out: Vec<SourceRef> = ordered
            .iter()
            .map(|&i| SourceRef {
                agent: self.roster.names[self.sources[i].agent].clone(),
                id: self.finding(i).id.clone(),
                severity: self.finding(i).severity,
                noted_in: None,
            })
            .collect();
        let mut agent_idx: Vec<usize> = members.iter().map(|&i| self.sources[i].agent).collect();
        // An agent whose note backs the finding supports it, once.
        for note in support {
            if !agent_idx.contains(&note.agent) {
                agent_idx.push(note.agent);
                sources_out.push(SourceRef {
                    agent: self.roster.names[note.agent].clone(),
                    id: note.id(),
                    severity: None,
                    noted_in: Some(note.section.to_string()),
                });
            }
        }
        agent_idx.sort_unstable();
        (sources_out, agent_idx)
    }

    /// What the confidence of a cluster of `agents` agents rests on, `rep` its representative.
    fn evidence(
        &self,
        members: &[usize],
        rep: &Finding,
        agents: usize,
        severity: Option<Severity>,
    ) -> confidence::Evidence {
        let located = members.iter().any(|&i| {
            let f = self.finding(i);
            !f.locations.is_empty() || f.code.is_some()
        });
        let best_verification = members
            .iter()
            .filter_map(|&i| self.finding(i).verification.as_ref().map(|v| v.status))
            .min_by_key(|s| match s {
                VerificationStatus::Grounded => 0,
                VerificationStatus::Relocated => 1,
                VerificationStatus::Unchecked => 2,
                VerificationStatus::Ungrounded => 3,
            });
        confidence::Evidence {
            agents,
            total_agents: self.reporting_agents,
            verification: best_verification,
            located,
            names_identifiers: !similarity::backticked(&rep.explanation).is_empty(),
            severity,
            // Read only when no severity was written ([`confidence::log_odds`]); reading the
            // words of every member was a twentieth of a large consolidation.
            wording: match severity {
                None => confidence::Wording::of_findings(members.iter().map(|&i| self.finding(i))),
                Some(_) => confidence::Wording::Neutral,
            },
        }
    }

    /// The agents' records as a term of the confidence, when the store holds them: those of
    /// `raised` (agent indices) for it, those of the other reporting agents against it.
    fn record(&self, rep: &Finding, raised: &[usize]) -> Option<confidence::RecordTerm> {
        let table = self.reliability?;
        let category = rep.category.as_ref().map(|c| c.as_str());
        let named = |a: usize| confidence::Named {
            name: &self.roster.names[a],
            display: &self.roster.displays[a],
        };
        let raised_by: Vec<_> = raised.iter().map(|&a| named(a)).collect();
        let silent: Vec<_> = self
            .reviews
            .iter()
            .filter(|r| !r.findings.is_empty())
            .map(|r| self.roster.index(&r.agent))
            .filter(|a| !raised.contains(a))
            .map(named)
            .collect();
        confidence::record_term(table, &raised_by, &silent, category)
    }
}

/// Every place the members cite, the representative's first: a location another member cites
/// in the same file at overlapping lines (`app.go:73-84` beside `pkg/app.go:73-86`) is the
/// same place and is left out, so is one already listed.
fn merged_locations(ordered: &[usize], sources: &[SourceFinding<'_>]) -> Vec<Location> {
    let mut out: Vec<Location> = Vec::new();
    for &i in ordered {
        for l in &sources[i].finding.locations {
            let same_place = out.iter().any(|k| {
                similarity::location_relation(std::slice::from_ref(k), std::slice::from_ref(l))
                    == similarity::LocationRelation::Overlap
                    || (k.path == l.path && (k.start.is_none() || l.start.is_none()))
            });
            if !same_place {
                out.push(l.clone());
            }
        }
    }
    out
}

/// The member the report shows: the most checkable and most explained one. Grounded before
/// unverified, then one with a location (a full path before a bare file name), then one whose
/// severity is the calibrated one (an outlier's wording tends to overstate), with a quote before
/// without, then the one most like the other members (it states what they agree on), the longer
/// explanation, and the earlier agent on ties.
fn choose_representative(
    members: &[usize],
    sources: &[SourceFinding<'_>],
    severity: Severity,
    corpus: &Corpus,
) -> usize {
    *members
        .iter()
        .max_by_key(|&&i| {
            let f = sources[i].finding;
            let grounded = f.verification.as_ref().map_or(1, |v| match v.status {
                VerificationStatus::Grounded | VerificationStatus::Relocated => 2,
                VerificationStatus::Unchecked => 1,
                VerificationStatus::Ungrounded => 0,
            });
            (
                grounded,
                !f.locations.is_empty(),
                f.locations.iter().any(|l| l.path.contains('/')),
                f.severity == Some(severity),
                f.code.is_some(),
                similarity::centrality(corpus, i, members),
                f.explanation.len(),
                std::cmp::Reverse(sources[i].agent),
            )
        })
        .unwrap_or(&members[0])
}

/// Numbers the findings within each section: `C1`, `I1`, `S1` for those shown, `U1` for the
/// unverified and `L1` for the low-confidence ones.
fn assign_ids(findings: &mut [MergedFinding]) {
    let mut next: BTreeMap<char, usize> = BTreeMap::new();
    for f in findings.iter_mut() {
        let letter = match f.tier {
            Tier::Unverified => 'U',
            Tier::LowConfidence => 'L',
            Tier::Shown => f.severity.id_prefix(),
        };
        let n = next.entry(letter).or_insert(0);
        *n += 1;
        f.id = format!("{letter}{n}");
    }
}

/// Where a merged finding goes: shown when confident; else unverified when one agent raised it
/// and its quoted code is not at head; else low confidence.
fn tier(confident: bool, agents: usize, verification: Option<&Verification>) -> Tier {
    if confident {
        Tier::Shown
    } else if agents == 1
        && verification.is_some_and(|v| v.status == VerificationStatus::Ungrounded)
    {
        Tier::Unverified
    } else {
        Tier::LowConfidence
    }
}

/// The part of a calibration reason in parentheses, for the retro.
fn reason_tail(reason: &str) -> &str {
    reason
        .rsplit_once(" (")
        .map(|(_, tail)| tail.trim_end_matches(')'))
        .unwrap_or(reason)
}

fn pre_existing_observation(f: &Finding) -> Observation {
    let mut text = f.explanation.clone();
    if let Some(note) = f.verification.as_ref().and_then(|v| v.note.as_ref()) {
        text.push_str(&format!(" _(Verification: {note}.)_"));
    }
    if let Some(loc) = f.locations.first() {
        text = format!("`{loc}`: {text}");
    }
    Observation {
        kind: ObservationKind::Concern,
        title: Some(f.title.clone()),
        text,
        scopes: vec!["future".into(), "pre-existing".into()],
    }
}

fn merge_all_observations(
    reviews: &[Review],
    roster: &Roster,
    pre_existing: Vec<(usize, Observation)>,
) -> Vec<MergedObservation> {
    let mut out = Vec::new();
    for kind in [ObservationKind::Concern, ObservationKind::Strength] {
        let mut of_kind: Vec<(usize, Observation)> = reviews
            .iter()
            .flat_map(|r| {
                let a = roster.index(&r.agent);
                r.observations
                    .iter()
                    .filter(|o| o.kind == kind)
                    .map(move |o| (a, o.clone()))
            })
            .collect();
        if kind == ObservationKind::Concern {
            of_kind.extend(pre_existing.iter().cloned());
        }
        out.extend(notes::merge_observations(&of_kind, &roster.names));
    }
    out
}

/// The testing, documentation and design-concern notes of every review that cite a place.
fn located_notes(reviews: &[Review], roster: &Roster) -> Vec<LocatedNote> {
    let mut out = Vec::new();
    for r in reviews {
        let agent = roster.index(&r.agent);
        let concerns: Vec<String> = r
            .observations
            .iter()
            .filter(|o| o.kind == ObservationKind::Concern)
            .map(|o| match &o.title {
                Some(t) => format!("**{t}** {}", o.text),
                None => o.text.clone(),
            })
            .collect();
        for (section, list) in [
            ("Testing", &r.testing.gaps),
            ("Documentation", &r.documentation),
            ("Design", &concerns),
        ] {
            for (k, text) in list.iter().enumerate() {
                let locations = noted::cited_locations(text);
                if !locations.is_empty() {
                    out.push(LocatedNote {
                        agent,
                        section,
                        position: k + 1,
                        text: text.clone(),
                        locations,
                    });
                }
            }
        }
    }
    out
}

/// A suggestion made of a testing or documentation note that cites a place no finding covers.
fn gap_finding(
    note: &AttributedNote,
    section: &str,
    locations: Vec<Location>,
    total_agents: usize,
) -> MergedFinding {
    let severity = Severity::Suggestion;
    let mut as_finding = Finding::new("", noted::note_title(&note.text));
    as_finding.explanation = note.text.clone();
    let score = confidence::confidence(&confidence::Evidence {
        agents: note.agents.len(),
        total_agents,
        verification: None,
        located: true,
        names_identifiers: !similarity::backticked(&note.text).is_empty(),
        severity: Some(severity),
        // A written severity: the wording is not read ([`confidence::log_odds`]).
        wording: confidence::Wording::Neutral,
    });
    let mut merged = MergedFinding {
        id: String::new(),
        title: as_finding.title.clone(),
        body: note.text.clone(),
        severity,
        category: Some(Category::Gap),
        locations,
        code: None,
        fix: None,
        fix_diff: None,
        agents: note.agents.clone(),
        sources: note
            .agents
            .iter()
            .map(|a| SourceRef {
                agent: a.clone(),
                id: section.to_string(),
                severity: None,
                noted_in: Some(section.to_string()),
            })
            .collect(),
        calibration: None,
        confidence: Some((score * 100.0).round() / 100.0),
        confidence_reason: None,
        tier: tier(confidence::is_confident(score), note.agents.len(), None),
        verification: None,
        fingerprint: String::new(),
        round_status: RoundStatus::default(),
        prior: None,
    };
    merged.fingerprint = fingerprint::fingerprint(&merged);
    merged
}

fn collect_notes(
    reviews: &[Review],
    roster: &Roster,
    pick: impl Fn(&Review) -> Vec<String>,
) -> Vec<Note> {
    reviews
        .iter()
        .flat_map(|r| {
            let agent = roster.index(&r.agent);
            pick(r).into_iter().map(move |text| Note {
                agent,
                title: None,
                text,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{CodeSnippet, CoverageEntry, Location, Verdict};

    fn finding(id: &str, title: &str, sev: Severity, loc: &str, code: &str) -> Finding {
        let mut f = Finding::new(id, title);
        f.severity = Some(sev);
        f.locations = vec![loc.parse::<Location>().unwrap()];
        f.code = Some(CodeSnippet {
            language: Some("go".into()),
            code: code.into(),
        });
        f.explanation = format!("{title}. Details about `{}`.", id);
        f
    }

    fn review(agent: &str, findings: Vec<Finding>, covered: &[&str]) -> Review {
        Review {
            agent: agent.into(),
            findings,
            coverage: covered
                .iter()
                .map(|p| CoverageEntry {
                    path: p.to_string(),
                    status: "Reviewed".into(),
                })
                .collect(),
            ..Review::default()
        }
    }

    #[test]
    fn same_defect_from_two_agents_merges_with_both_attributed() {
        let a = review(
            "claude",
            vec![finding(
                "I1",
                "ObservedGeneration copied from the child",
                Severity::Important,
                "app.go:207",
                "ObservedGeneration: cond.ObservedGeneration,",
            )],
            &["app.go"],
        );
        let b = review(
            "gemini",
            vec![
                finding(
                    "C1",
                    "Incorrect ObservedGeneration in mirrored conditions",
                    Severity::Critical,
                    "pkg/app.go:193",
                    "Message: m,\nObservedGeneration: cond.ObservedGeneration,",
                ),
                finding(
                    "C2",
                    "Swallowed error leaks the input ConfigMap",
                    Severity::Critical,
                    "pkg/app.go:69-71",
                    "log.Error(cmErr, \"Failed to fetch input ConfigMap during cleanup\")",
                ),
            ],
            &["pkg/app.go"],
        );
        let report = consolidate(&[a, b], &ConsolidateOptions::default());
        assert_eq!(report.findings.len(), 2);
        let og = &report.findings[0];
        assert_eq!(og.agents, ["claude", "gemini"]);
        assert_eq!(og.severity, Severity::Important);
        assert_eq!(
            og.calibration.as_deref(),
            Some("Gemini: critical → important (1 of 2 agents rated it important)")
        );
        let leak = &report.findings[1];
        assert_eq!(leak.agents, ["gemini"]);
        // A lone critical on a file Claude reviewed too is shown as important.
        assert_eq!(leak.severity, Severity::Important);
        assert_eq!(report.verdict, Verdict::MergeWithFixes);
        assert_eq!(report.agents[1].counts.critical, 2);
        assert_eq!(report.agents[1].unique_insights, 1);
        assert_eq!(
            report
                .findings
                .iter()
                .map(|f| f.id.as_str())
                .collect::<Vec<_>>(),
            ["I1", "I2"]
        );
    }

    #[test]
    fn a_finding_the_code_marks_as_temporary_goes_one_level_down_with_the_comment() {
        let mut f = finding(
            "I1",
            "Hardcoded SSH port collides across instances",
            Severity::Important,
            "lima.yaml:14",
            "localPort: 51422",
        );
        let mut v = Verification::unchecked("");
        v.status = VerificationStatus::Grounded;
        v.note = None;
        v.known_issue_comment =
            Some("# This is temporary and will be removed once the controller is done.".into());
        f.verification = Some(v);
        let report = consolidate(
            &[review("codex", vec![f], &["lima.yaml"])],
            &ConsolidateOptions::default(),
        );
        let merged = &report.findings[0];
        assert_eq!(merged.severity, Severity::Suggestion);
        assert_eq!(
            merged.calibration.as_deref(),
            Some(
                "Codex: important → suggestion (the code marks it as known: \"# This is \
                 temporary and will be removed once the controller is done.\")"
            )
        );
        assert_eq!(report.verdict, Verdict::MergeWithOptionalFixes);
        assert!(report.agents[0].calibrations[0].starts_with("I1 important → suggestion"));
    }

    #[test]
    fn a_merged_finding_keeps_every_place_once_and_shows_a_located_source() {
        let code = "if cmErr := r.Delete(ctx, templateCM); cmErr != nil {";
        let mut unlocated = finding(
            "I1",
            "Template ConfigMap deleted by the wrong controller",
            Severity::Important,
            "x.go:1",
            code,
        );
        unlocated.locations.clear();
        unlocated.explanation = "The App finalizer deletes the LimaVM-owned template \
            ConfigMap `templateCM` with the wrong finalizer kind, so deletion wedges."
            .into();
        let mut bare = finding(
            "I1",
            "App finalizer deletes the LimaVM-owned template ConfigMap",
            Severity::Important,
            "app_controller.go:73-84",
            code,
        );
        bare.explanation = "The finalizer deletes the template ConfigMap `templateCM` that \
            the LimaVM controller owns, with the wrong finalizer kind: deletion wedges."
            .into();
        let mut full = finding(
            "C2",
            "Deleting the template ConfigMap owned by LimaVM",
            Severity::Critical,
            "pkg/app/app_controller.go:76",
            code,
        );
        full.locations
            .push("pkg/app/webhook.go:53-58".parse().unwrap());
        full.explanation = "The App finalizer deletes the template ConfigMap `templateCM` \
            owned by the LimaVM controller with the wrong finalizer kind; deletion wedges."
            .into();
        let report = consolidate(
            &[
                review("claude", vec![unlocated], &[]),
                review("codex", vec![bare], &[]),
                review("gemini", vec![full], &[]),
            ],
            &ConsolidateOptions::default(),
        );
        assert_eq!(report.findings.len(), 1, "{:#?}", report.findings);
        let f = &report.findings[0];
        assert_eq!(f.agents, ["claude", "codex", "gemini"]);
        // The representative has a location with a full path; the unlocated one is never shown.
        assert_eq!(f.sources[0].agent, "gemini");
        let places: Vec<String> = f.locations.iter().map(ToString::to_string).collect();
        // `app_controller.go:73-84` overlaps `pkg/app/app_controller.go:76`: one place.
        assert_eq!(
            places,
            ["pkg/app/app_controller.go:76", "pkg/app/webhook.go:53-58"]
        );
        assert!(!f.fingerprint.is_empty());
    }

    fn run(agent: &str, status: crate::types::RunStatus, error: Option<&str>) -> RawReview {
        RawReview {
            agent: agent.into(),
            display_name: None,
            model: None,
            effort: None,
            status,
            text: String::new(),
            exit_code: None,
            duration_s: 1.0,
            tokens: None,
            cost_usd: None,
            cost_basis: None,
            tool_calls: Default::default(),
            stderr_tail: String::new(),
            error: error.map(Into::into),
            failure: None,
            output_cut_bytes: None,
            retries: 0,
            worktree_changes: vec![],
            sandbox: None,
            network: None,
            notes: vec![],
        }
    }

    #[test]
    fn the_summary_says_what_the_change_does_what_decides_and_what_failed() {
        let mut claude = review(
            "claude",
            vec![finding(
                "I1",
                "Retry loop never gives up",
                Severity::Important,
                "client.go:40-52",
                "for { if err := send(); err == nil { break } }",
            )],
            &["client.go"],
        );
        claude.summary = "Good. This change moves the HTTP retry loop into the shared client \
                          and adds jittered backoff. One loop never ends."
            .into();
        let mut gemini = review("gemini", vec![], &["client.go"]);
        gemini.summary = "The change moves the retry loop into the shared HTTP client with \
                          jittered backoff between attempts."
            .into();
        let mut copilot = review("copilot", vec![], &["client.go"]);
        copilot.summary = "Adds a Prometheus exporter for queue depth metrics.".into();
        let codex = review("codex", vec![], &[]);
        let opts = ConsolidateOptions {
            runs: vec![
                run("claude", crate::types::RunStatus::Ok, None),
                run("gemini", crate::types::RunStatus::Ok, None),
                run("copilot", crate::types::RunStatus::Ok, None),
                run(
                    "codex",
                    crate::types::RunStatus::Failed,
                    Some("HTTP 429 from the model API after 2 retries."),
                ),
            ],
            ..ConsolidateOptions::default()
        };
        let report = consolidate(&[claude, gemini, copilot, codex], &opts);
        let paragraphs: Vec<&str> = report.summary.split("\n\n").collect();
        assert_eq!(
            paragraphs[0],
            "This change moves the HTTP retry loop into the shared client and adds jittered \
             backoff. (Claude; Gemini says the same)",
            "{}",
            report.summary
        );
        assert!(
            paragraphs[1].starts_with(
                "The verdict is **Merge with fixes** because of I1 Retry loop never gives up \
                 (`client.go:40-52`) [Claude]."
            ),
            "{}",
            paragraphs[1]
        );
        assert_eq!(
            paragraphs[2],
            "**Codex** failed: HTTP 429 from the model API after 2 retries. The report stands \
             on the other reviewers."
        );
        assert_eq!(
            report.verdict_rationale,
            "1 important issue to fix before merging: I1 Retry loop never gives up"
        );
    }

    #[test]
    fn notes_that_cite_a_place_back_its_finding_or_become_gap_suggestions() {
        let mut claude = review(
            "claude",
            vec![finding(
                "I1",
                "Retry loop never gives up on a dead server",
                Severity::Important,
                "pkg/client.go:40-52",
                "for { if err := send(); err == nil { break } }",
            )],
            &["pkg/client.go"],
        );
        claude.documentation = vec![
            "`pkg/client.go:12`: the package comment is accurate.".into(),
            "The retry budget is not documented anywhere (`pkg/config.go:30`).".into(),
        ];
        let mut codex = review("codex", vec![], &["pkg/client.go"]);
        codex.summary = "Moves retries into the client.".into();
        codex.testing.gaps = vec![
            "No test covers a dead server: the retry loop in `pkg/client.go:44` would spin \
             forever and the loop never gives up."
                .into(),
        ];
        let mut gemini = review("gemini", vec![], &["pkg/client.go"]);
        gemini.documentation =
            vec!["`config.go:30` should document the retry budget it reads.".into()];
        let report = consolidate(&[claude, codex, gemini], &ConsolidateOptions::default());

        let retry = &report.findings[0];
        assert_eq!(retry.agents, ["claude", "codex"]);
        let noted = &retry.sources[1];
        assert_eq!(
            (
                noted.agent.as_str(),
                noted.id.as_str(),
                noted.noted_in.as_deref()
            ),
            ("codex", "Testing 1", Some("Testing"))
        );
        // The undocumented budget is a gap of config.go that no finding covers: a suggestion of
        // both agents that noted it.
        let gap = report
            .findings
            .iter()
            .find(|f| f.category == Some(Category::Gap))
            .expect("a gap suggestion");
        assert_eq!(gap.severity, Severity::Suggestion);
        assert_eq!(gap.agents, ["claude", "gemini"]);
        assert_eq!(gap.locations[0].path, "pkg/config.go");
        assert!(
            gap.sources
                .iter()
                .all(|s| s.noted_in.as_deref() == Some("Documentation"))
        );
        assert!(!gap.fingerprint.is_empty());
        // What is fine stays a note, and so does a note that backs a finding; what became a
        // suggestion leaves the notes.
        let docs: Vec<&str> = report
            .documentation
            .iter()
            .map(|n| n.text.as_str())
            .collect();
        assert_eq!(
            docs,
            ["`pkg/client.go:12`: the package comment is accurate."]
        );
        assert_eq!(report.testing_gaps.len(), 1);
    }

    #[test]
    fn no_findings_means_merge_as_is() {
        let report = consolidate(
            &[review("claude", vec![], &["src/lib.rs"])],
            &ConsolidateOptions::default(),
        );
        assert_eq!(report.verdict, Verdict::MergeAsIs);
        assert!(report.findings.is_empty());
    }

    #[test]
    fn a_review_that_says_nothing_is_no_review() {
        let report = consolidate(
            &[review("claude", vec![], &[])],
            &ConsolidateOptions::default(),
        );
        assert_eq!(report.verdict, Verdict::NoReview);
    }
}
