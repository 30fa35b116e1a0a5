//! A new round's findings against the earlier rounds' findings.
//!
//! Two findings of different rounds name the same defect on the same evidence that clusters
//! one round's findings across agents ([`similarity`]): the text and identifiers they share,
//! the quoted code, where they point. An equal [fingerprint](crate::consolidate::fingerprint)
//! settles it at once. Across rounds the code itself moves, so the bar is the clustering's, and
//! a pair that has only text to go on (an earlier finding known by its title and reason) must
//! clear a higher one.
//!
//! What a match means follows from the author's latest decision on the defect:
//!
//! | earlier decision                         | this round's finding                      |
//! |------------------------------------------|-------------------------------------------|
//! | Skipped or Commented, code unchanged     | dropped, listed under "Declined"          |
//! | Skipped or Commented, code changed since | kept, `persisting`, the decline noted     |
//! | Fixed, Test written, Documentation       | kept, `regressed`                         |
//! | none                                     | kept, `persisting`                        |
//!
//! and a finding that matches nothing is `new`. Earlier findings of the last round that nothing
//! matched are `resolved`.

use std::collections::{HashMap, HashSet};

use super::fingerprint::fingerprint_of;
use super::similarity::{Corpus, FindingProfile, LocationRelation, TEXT_FULL, tokenize};
use crate::types::history::{History, PriorFinding};
use crate::types::{
    Finding, MergedFinding, PriorItem, PriorRef, PriorRounds, RoundStatus, VerificationStatus,
};

/// The score at or above which a new finding continues an earlier one.
pub const ROUND_MATCH: f64 = 0.40;

/// The least text similarity (TF-IDF cosine) a pair needs unless most of their quoted code is
/// the same: sharing a file, a stretch of code or an identifier is common between different
/// defects of one change, so it cannot make up for findings that say different things.
pub const TEXT_FLOOR: f64 = 0.27;

/// The share of both quotes' lines two findings must share to stand in for the text floor.
const SAME_QUOTE: f64 = 0.5;

/// The score a pair needs when the earlier finding has no location and no quote (known by its
/// words only): text alone is read generously, so it must say more.
pub const TEXT_ONLY_MATCH: f64 = 0.45;

/// Earlier findings within this much of the best match count as the same defect too (one
/// defect raised in several rounds); the latest decision among them applies.
const MARGIN: f64 = 0.15;

/// Posting lists longer than this are skipped when gathering candidates (a common word says
/// little); with no more earlier findings than this, every pair is compared.
const MAX_POSTING: usize = 64;

/// What becomes of one new finding.
#[derive(Debug, Clone, PartialEq)]
pub enum Fate {
    New,
    /// Continues an earlier finding nobody acted on, or a declined one whose code changed.
    Persisting {
        prior: (u32, String),
        /// Set when the earlier finding was declined and its code changed since.
        declined_but_changed: bool,
    },
    /// Continues an earlier finding the author marked fixed.
    Regressed {
        prior: (u32, String),
    },
    /// Raises again an earlier finding the author declined, whose code did not change: dropped.
    Declined {
        prior: (u32, String),
    },
}

/// One new finding's match: its fate and how sure the match is.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub fate: Fate,
    pub score: f64,
}

/// The fate of every new finding, and which earlier findings this round raised again.
#[derive(Debug, Clone, Default)]
pub struct Matching {
    /// One per finding given, in order; `None` for a finding that matches nothing (new).
    pub matches: Vec<Option<Match>>,
    /// Every earlier finding some new finding matched (by [`PriorFinding::key`]).
    pub touched: HashSet<(u32, String)>,
}

/// How alike a new finding and an earlier one are, across rounds. The clustering's evidence,
/// read more strictly: code moves between rounds and one stretch of code hosts several defects,
/// so sharing lines counts for less than sharing words, and a shared quote counts by how much
/// of both quotes it is (one common line of a long quote is not the same defect).
///
/// Returns 0 for a pair whose titles share no word (the title says which defect it is: two
/// defects of one stretch of code share their code and identifiers, rarely their titles), and
/// for one that neither says enough of the same thing ([`TEXT_FLOOR`]) nor quotes mostly the
/// same code.
fn cross_round_score(
    corpus: &Corpus,
    prior: usize,
    new: usize,
    stems: (&HashSet<String>, &HashSet<String>),
) -> f64 {
    if stems.0.is_disjoint(stems.1) {
        return 0.0;
    }
    let e = corpus.evidence(prior, new);
    let (qa, qb) = (
        &corpus.profiles[prior].quote_lines,
        &corpus.profiles[new].quote_lines,
    );
    let quote = if qa.is_empty() || qb.is_empty() {
        0.0
    } else {
        qa.intersection(qb).count() as f64 / qa.len().max(qb.len()) as f64
    };
    if e.text < TEXT_FLOOR && quote < SAME_QUOTE {
        return 0.0;
    }
    let text = (e.text / TEXT_FULL).min(1.0);
    let location = match e.location {
        LocationRelation::Overlap => 0.1,
        LocationRelation::Near => 0.05,
        LocationRelation::SameFile | LocationRelation::Unknown => 0.0,
        LocationRelation::Different => -0.3,
    };
    (0.6 * text + 0.2 * e.identifiers + 0.2 * quote + location).clamp(0.0, 1.0)
}

/// A title's content words as the first four letters of each (after the light stemming of
/// [`tokenize`]): two titles that share one name one thing, so "retries" meets "retry" and
/// `MergeFailed` meets "merge".
fn title_stems(title: &str) -> HashSet<String> {
    tokenize(title)
        .into_iter()
        .map(|w| w.chars().take(4).collect())
        .collect()
}

/// Matches `findings` (one round's findings, of every agent) against the earlier rounds of
/// `history`.
pub fn match_findings(findings: &[&Finding], history: &History) -> Matching {
    let profiles: Vec<FindingProfile> = findings.iter().map(|f| FindingProfile::of(f)).collect();
    match_profiled(findings, &profiles, history)
}

/// [`match_findings`] with the findings' profiles already made (consolidation makes them once
/// for matching and clustering).
pub fn match_profiled(
    findings: &[&Finding],
    new_profiles: &[FindingProfile],
    history: &History,
) -> Matching {
    let priors: Vec<&PriorFinding> = history.findings().filter(|p| eligible(p)).collect();
    if priors.is_empty() {
        return Matching {
            matches: vec![None; findings.len()],
            touched: HashSet::new(),
        };
    }
    let prior_stems: Vec<HashSet<String>> = priors.iter().map(|p| title_stems(&p.title)).collect();
    let index = PriorIndex::new(&priors, &prior_stems, new_profiles);
    let mut out = Matching::default();
    for (n, f) in findings.iter().enumerate() {
        let Some((best, close)) = index.closest(priors.len() + n, f) else {
            out.matches.push(None);
            continue;
        };
        let Some(fate) = index.fate(f, &close) else {
            out.matches.push(None);
            continue;
        };
        for (_, i) in &close {
            out.touched.insert(priors[*i].key());
        }
        out.matches.push(Some(Match { fate, score: best }));
    }
    out
}

/// The earlier findings a round is matched against, with the lookups that find a new
/// finding's candidates among them.
struct PriorIndex<'a> {
    priors: &'a [&'a PriorFinding],
    /// Each prior's title stems, by the prior's index.
    stems: &'a [HashSet<String>],
    /// The priors first, then the new findings: two sides, like two agents.
    corpus: Corpus,
    /// The priors whose title has each stem.
    postings: HashMap<&'a str, Vec<usize>>,
    /// The priors with each (non-empty) fingerprint.
    by_fingerprint: HashMap<&'a str, Vec<usize>>,
}

impl<'a> PriorIndex<'a> {
    fn new(
        priors: &'a [&'a PriorFinding],
        stems: &'a [HashSet<String>],
        new_profiles: &[FindingProfile],
    ) -> Self {
        let mut profiles: Vec<FindingProfile> = priors
            .iter()
            .map(|p| FindingProfile::of(&prior_as_finding(p)))
            .collect();
        profiles.extend(new_profiles.iter().cloned());
        // Two sides, like two agents: each names a defect at most once.
        let sides: Vec<usize> = (0..profiles.len())
            .map(|i| usize::from(i >= priors.len()))
            .collect();
        let corpus = Corpus::new(profiles, sides);
        // Candidates share a title word (the score requires it), found through that word's
        // posting list unless the word is too common to say anything.
        let mut postings: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, stems) in stems.iter().enumerate() {
            for stem in stems {
                postings.entry(stem.as_str()).or_default().push(i);
            }
        }
        let mut by_fingerprint: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, p) in priors.iter().enumerate() {
            if !p.fingerprint.is_empty() {
                by_fingerprint.entry(&p.fingerprint).or_default().push(i);
            }
        }
        PriorIndex {
            priors,
            stems,
            corpus,
            postings,
            by_fingerprint,
        }
    }

    /// The best score of finding `f` (at `me` in the corpus) against a prior, if any passes
    /// its prior's bar, and the priors within [`MARGIN`] of it, oldest first and best first
    /// within a round.
    fn closest(&self, me: usize, f: &Finding) -> Option<(f64, Vec<(f64, usize)>)> {
        let print = fingerprint_of(&f.locations, f.code.as_ref(), &f.title);
        let stems = title_stems(&f.title);
        let mut candidates = self.sharing_a_stem(&stems);
        let same_print: Vec<usize> = self
            .by_fingerprint
            .get(print.as_str())
            .cloned()
            .unwrap_or_default();
        candidates.extend(&same_print);

        let mut scored: Vec<(f64, usize)> = candidates
            .into_iter()
            .filter_map(|i| {
                let score = if same_print.contains(&i) {
                    1.0
                } else {
                    cross_round_score(&self.corpus, i, me, (&self.stems[i], &stems))
                };
                (score >= bar(self.priors[i])).then_some((score, i))
            })
            .collect();
        let best = scored.iter().map(|(s, _)| *s).reduce(f64::max)?;
        scored.retain(|(s, _)| *s >= best - MARGIN);
        // Oldest first, best first within a round: the last decision is the one that holds.
        scored.sort_by(|a, b| {
            self.priors[a.1]
                .round
                .cmp(&self.priors[b.1].round)
                .then(a.0.total_cmp(&b.0))
        });
        Some((best, scored))
    }

    /// The priors worth scoring against a finding with title `stems`: all of them when they
    /// are few, otherwise those sharing a stem that is not too common.
    fn sharing_a_stem(&self, stems: &HashSet<String>) -> HashSet<usize> {
        let mut candidates: HashSet<usize> = HashSet::new();
        if self.priors.len() <= MAX_POSTING {
            candidates.extend(0..self.priors.len());
        } else {
            for stem in stems {
                if let Some(list) = self
                    .postings
                    .get(stem.as_str())
                    .filter(|l| l.len() <= MAX_POSTING)
                {
                    candidates.extend(list);
                }
            }
        }
        candidates
    }

    /// What finding `f` is, given its `close` priors (as [`PriorIndex::closest`] orders them):
    /// the latest decision on them holds. `None` when it is no match after all.
    fn fate(&self, f: &Finding, close: &[(f64, usize)]) -> Option<Fate> {
        let latest = self.priors[close.last().map(|(_, i)| *i).unwrap_or(0)];
        let decided = close
            .iter()
            .rev()
            .map(|(_, i)| self.priors[*i])
            .find(|p| p.action.is_some());
        Some(match decided {
            Some(p) if p.action.as_ref().is_some_and(|a| a.declines()) => {
                if p.code_changed == Some(true) {
                    Fate::Persisting {
                        prior: p.key(),
                        declined_but_changed: true,
                    }
                } else {
                    Fate::Declined { prior: p.key() }
                }
            }
            Some(p) if p.action.as_ref().is_some_and(|a| a.addresses()) => {
                // The old finding repeated about code that is gone is not a regression: the
                // fix stands, and this finding goes where verification puts it.
                if f.verification
                    .as_ref()
                    .is_some_and(|v| v.status == VerificationStatus::Ungrounded)
                {
                    return None;
                }
                Fate::Regressed { prior: p.key() }
            }
            _ => Fate::Persisting {
                prior: latest.key(),
                declined_but_changed: false,
            },
        })
    }
}

/// Pairs beyond this many are not compared by [`pair_up`] (it leaves the rest unpaired).
const MAX_PAIRS: usize = 250_000;

/// For each of `olds`, the one of `news` that names the same defect, one to one, best pairs
/// first, on the same evidence as [`match_findings`]: how a report's own findings (and the
/// decisions on them) find their way to the same report consolidated again.
pub fn pair_up(olds: &[Finding], news: &[Finding]) -> Vec<Option<usize>> {
    let mut out = vec![None; olds.len()];
    if olds.is_empty() || news.is_empty() || olds.len() * news.len() > MAX_PAIRS {
        return out;
    }
    let profiles: Vec<FindingProfile> = olds.iter().chain(news).map(FindingProfile::of).collect();
    let sides: Vec<usize> = (0..profiles.len())
        .map(|i| usize::from(i >= olds.len()))
        .collect();
    let corpus = Corpus::new(profiles, sides);
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    let old_stems: Vec<HashSet<String>> = olds.iter().map(|f| title_stems(&f.title)).collect();
    let new_stems: Vec<HashSet<String>> = news.iter().map(|f| title_stems(&f.title)).collect();
    for (o, old) in old_stems.iter().enumerate() {
        for (n, new) in new_stems.iter().enumerate() {
            let score = cross_round_score(&corpus, o, olds.len() + n, (old, new));
            if score >= ROUND_MATCH {
                pairs.push((score, o, n));
            }
        }
    }
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut taken = vec![false; news.len()];
    for (_, o, n) in pairs {
        if out[o].is_none() && !taken[n] {
            out[o] = Some(n);
            taken[n] = true;
        }
    }
    out
}

/// Earlier findings a new one can continue: every finding of a report, and testing gaps or
/// carried entries only when the author decided something about them (a testing gap nobody
/// acted on is not worth the risk of a match on words alone).
fn eligible(p: &PriorFinding) -> bool {
    let words_only = p.locations.is_empty() && p.code.is_none();
    !words_only || p.action.is_some() || p.shown
}

fn bar(p: &PriorFinding) -> f64 {
    if p.locations.is_empty() && p.code.is_none() {
        TEXT_ONLY_MATCH
    } else {
        ROUND_MATCH
    }
}

fn prior_as_finding(p: &PriorFinding) -> Finding {
    let mut f = Finding::new(p.id.clone(), p.title.clone());
    f.locations = p.locations.clone();
    f.code = p.code.clone();
    f.explanation = p.body.clone();
    f
}

/// Sets each kept finding's `round_status` and `prior` from its fate.
pub fn apply(finding: &mut MergedFinding, fate: &Fate) {
    let (status, prior) = match fate {
        Fate::New | Fate::Declined { .. } => (RoundStatus::New, None),
        Fate::Persisting { prior, .. } => (RoundStatus::Persisting, Some(prior)),
        Fate::Regressed { prior } => (RoundStatus::Regressed, Some(prior)),
    };
    finding.round_status = status;
    finding.prior = prior.map(|(round, id)| PriorRef {
        round: *round,
        id: id.clone(),
    });
}

/// A finding dropped because it raises a declined one again, and who raised it.
#[derive(Debug, Clone)]
pub struct Dropped {
    pub prior: (u32, String),
    /// "Claude Opus 4.7: manageKubeContext logs the merge error twice"
    pub text: String,
}

/// Earlier findings by key: looked up once per finding, not searched.
type ByKey<'a> = HashMap<(u32, String), &'a PriorFinding>;

/// The "Since round N" lists: `findings` are the kept findings with their final ids.
pub fn prior_rounds(
    history: &History,
    findings: &[MergedFinding],
    fates_of_kept: &[(String, Fate)],
    dropped: &[Dropped],
    touched: &HashSet<(u32, String)>,
) -> PriorRounds {
    let Some(last) = history.last_reviewed() else {
        return PriorRounds::default();
    };
    let by_key: ByKey = history.findings().map(|p| (p.key(), p)).collect();
    let (regressed, persisting) = continued(&by_key, findings, fates_of_kept);
    PriorRounds {
        since_round: Some(last.round),
        regressed,
        persisting,
        declined: still_declined(history, fates_of_kept, dropped),
        resolved: resolved(&last.findings, touched),
    }
}

/// Kept findings that continue earlier ones: the regressed, then the persisting, each in the
/// order of `fates_of_kept`.
fn continued(
    by_key: &ByKey,
    findings: &[MergedFinding],
    fates_of_kept: &[(String, Fate)],
) -> (Vec<PriorItem>, Vec<PriorItem>) {
    let (mut regressed, mut persisting) = (Vec::new(), Vec::new());
    for (id, fate) in fates_of_kept {
        let Some(f) = findings.iter().find(|f| &f.id == id) else {
            continue;
        };
        match fate {
            Fate::Regressed { prior } => {
                if let Some(p) = by_key.get(prior) {
                    let reason = format!(
                        "{} in round {}; raised again as {}",
                        decision(p),
                        p.round,
                        f.id
                    );
                    regressed.push(continued_item(p, reason, &f.id));
                }
            }
            Fate::Persisting {
                prior,
                declined_but_changed,
            } => {
                if let Some(p) = by_key.get(prior) {
                    let reason = if *declined_but_changed {
                        format!(
                            "{} in round {}, but its code changed since; raised again as {}",
                            decision(p),
                            p.round,
                            f.id
                        )
                    } else {
                        format!("raised again as {}", f.id)
                    };
                    persisting.push(continued_item(p, reason, &f.id));
                }
            }
            _ => {}
        }
    }
    (regressed, persisting)
}

/// The item of prior `p`, continued by the kept finding `now` for `reason`.
fn continued_item(p: &PriorFinding, reason: String, now: &str) -> PriorItem {
    let mut item = item_of(p);
    item.reason = reason;
    item.now = Some(now.to_string());
    item
}

/// Every earlier decline that still holds, once, with what this round raised again under it
/// (the `dropped` findings).
fn still_declined(
    history: &History,
    fates_of_kept: &[(String, Fate)],
    dropped: &[Dropped],
) -> Vec<PriorItem> {
    let mut again_under: HashMap<&(u32, String), Vec<String>> = HashMap::new();
    for d in dropped {
        again_under
            .entry(&d.prior)
            .or_default()
            .push(d.text.clone());
    }
    let changed_and_raised: HashSet<(u32, String)> = fates_of_kept
        .iter()
        .filter_map(|(_, fate)| match fate {
            Fate::Persisting {
                prior,
                declined_but_changed: true,
            } => Some(prior.clone()),
            _ => None,
        })
        .collect();
    let mut seen: HashSet<(u32, String)> = HashSet::new();
    let mut declined = Vec::new();
    for p in history.findings() {
        if !p.action.as_ref().is_some_and(|a| a.declines())
            || changed_and_raised.contains(&p.key())
            || !seen.insert(p.key())
        {
            continue;
        }
        let mut item = item_of(p);
        item.reason = p.reason.clone();
        item.raised_again = again_under.remove(&p.key()).unwrap_or_default();
        declined.push(item);
    }
    declined
}

/// The last round's findings that nobody raised again (shown or decided on, not carried, not
/// declined).
fn resolved(last: &[PriorFinding], touched: &HashSet<(u32, String)>) -> Vec<PriorItem> {
    let mut resolved = Vec::new();
    for p in last {
        if touched.contains(&p.key())
            || p.carried
            || p.action.as_ref().is_some_and(|a| a.declines())
            || !(p.shown || p.action.is_some())
        {
            continue;
        }
        let mut item = item_of(p);
        item.reason = match &p.action {
            Some(a) if p.reason.is_empty() => a.to_string(),
            Some(a) => format!("{a}: {}", p.reason),
            None => "not raised again".to_string(),
        };
        resolved.push(item);
    }
    resolved
}

fn item_of(p: &PriorFinding) -> PriorItem {
    PriorItem {
        round: p.round,
        id: p.id.clone(),
        title: p.title.clone(),
        reason: String::new(),
        action: p.action.clone(),
        fingerprint: Some(p.fingerprint.clone()).filter(|f| !f.is_empty()),
        now: None,
        raised_again: Vec::new(),
    }
}

fn decision(p: &PriorFinding) -> String {
    match &p.action {
        Some(a) => format!("marked {}", a.as_str().to_lowercase()),
        None => "raised".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rounds::{PriorFinding, PriorRound};
    use crate::types::{Action, CodeSnippet, Location, Verification};

    fn finding(title: &str, loc: &str, code: &str, body: &str) -> Finding {
        let mut f = Finding::new("S1", title);
        f.locations = vec![loc.parse::<Location>().unwrap()];
        f.code = Some(CodeSnippet {
            language: None,
            code: code.into(),
        });
        f.explanation = body.into();
        f
    }

    fn prior(id: &str, f: &Finding, action: Option<Action>) -> PriorFinding {
        PriorFinding {
            round: 1,
            id: id.into(),
            title: f.title.clone(),
            body: f.explanation.clone(),
            locations: f.locations.clone(),
            code: f.code.clone(),
            fingerprint: String::new(),
            action,
            reason: "by design".into(),
            shown: true,
            grounded: Some(true),
            carried: false,
            code_changed: None,
        }
    }

    fn history(findings: Vec<PriorFinding>) -> History {
        History {
            rounds: vec![PriorRound {
                round: 1,
                report_id: "r1".into(),
                head: None,
                reviewed: true,
                findings,
            }],
            next_round: 2,
            ..History::default()
        }
    }

    fn retry() -> Finding {
        finding(
            "Retry loop never gives up",
            "src/net.rs:40-42",
            "loop {\n    send()?;\n}",
            "`send` is retried forever when the server is down: the `loop` has no bound.",
        )
    }

    fn leak() -> Finding {
        finding(
            "Socket leaked on the error path",
            "src/net.rs:41",
            "    send()?;",
            "When `send` fails the `socket` is never closed: the early return skips `close`.",
        )
    }

    #[test]
    fn the_latest_decision_decides() {
        // Raised again at other lines, in other words.
        let again = finding(
            "Unbounded retries of send",
            "src/net.rs:88-90",
            "loop {\n    send()?;\n}",
            "The `loop` around `send` never stops retrying when the server is down.",
        );
        let fate = |action: Option<Action>, changed: Option<bool>| {
            let mut p = prior("S2", &retry(), action);
            p.code_changed = changed;
            match_findings(&[&again], &history(vec![p])).matches[0]
                .as_ref()
                .map(|m| m.fate.clone())
        };
        let key = (1, "S2".to_string());
        assert_eq!(
            fate(Some(Action::Skipped), None),
            Some(Fate::Declined { prior: key.clone() })
        );
        assert_eq!(
            fate(Some(Action::Commented), Some(false)),
            Some(Fate::Declined { prior: key.clone() })
        );
        assert_eq!(
            fate(Some(Action::Skipped), Some(true)),
            Some(Fate::Persisting {
                prior: key.clone(),
                declined_but_changed: true
            })
        );
        assert_eq!(
            fate(Some(Action::Fixed), None),
            Some(Fate::Regressed { prior: key.clone() })
        );
        assert_eq!(
            fate(None, None),
            Some(Fate::Persisting {
                prior: key,
                declined_but_changed: false
            })
        );
    }

    #[test]
    fn a_fixed_finding_repeated_about_code_that_is_gone_is_not_a_regression() {
        let mut again = retry();
        again.verification = Some(Verification {
            status: VerificationStatus::Ungrounded,
            quote_ok: Some(false),
            ..Verification::unchecked("the quote is not at head")
        });
        let h = history(vec![prior("S2", &retry(), Some(Action::Fixed))]);
        let m = match_findings(&[&again], &h);
        assert_eq!(m.matches[0], None);
        assert!(m.touched.is_empty(), "the fixed finding stays resolved");
    }

    #[test]
    fn another_defect_in_the_same_code_is_new() {
        let h = history(vec![prior("S2", &retry(), Some(Action::Skipped))]);
        let m = match_findings(&[&leak()], &h);
        assert_eq!(
            m.matches[0], None,
            "a skipped retry loop does not hide a leak"
        );
    }

    #[test]
    fn words_alone_must_say_more() {
        // An earlier testing gap known by its words only, declined.
        let mut gap = prior(
            "T3",
            &Finding::new("T3", "`probe` error paths"),
            Some(Action::Skipped),
        );
        gap.locations.clear();
        gap.code = None;
        gap.body = "The six error paths of `probe` have no test.".into();
        let h = history(vec![gap]);
        let unrelated = finding(
            "`probe` builds an incomplete HTTP client",
            "src/probe.rs:30",
            "let client = Client::new();",
            "`probe` ignores the exec provider, so complex auth fails.",
        );
        assert_eq!(match_findings(&[&unrelated], &h).matches[0], None);
        let restated = finding(
            "No tests for the error paths of `probe`",
            "src/probe_test.rs:1",
            "fn probe_ok() {}",
            "The six error paths of `probe` have no test coverage.",
        );
        assert!(matches!(
            match_findings(&[&restated], &h).matches[0],
            Some(Match {
                fate: Fate::Declined { .. },
                ..
            })
        ));
    }

    #[test]
    fn findings_pair_one_to_one() {
        let olds = [retry(), leak()];
        let news = [leak(), retry()];
        assert_eq!(pair_up(&olds, &news), [Some(1), Some(0)]);
        assert_eq!(pair_up(&olds, &[]), [None, None]);
    }
}
