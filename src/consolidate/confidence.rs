//! Confidence: how sure consolidation is that a merged finding is a real defect worth the
//! author's time, and the keep rule that decides where the report shows it.
//!
//! The confidence is a probability built as log-odds, one stated term per piece of evidence, no
//! weight learnt from any data set:
//!
//! - **prior**: one finding in four that a reviewer writes is a defect the author must fix
//!   ([`PRIOR`]);
//! - **agreement**: reviewers work independently. An agent finds a given real defect with
//!   probability [`P_FIND_REAL`] and raises the same spurious point with probability
//!   [`P_FIND_SPURIOUS`], so each agent that raised it multiplies the odds by
//!   `P_FIND_REAL / P_FIND_SPURIOUS` and each agent that reported findings on the change but not
//!   this one divides them by `(1 - P_FIND_SPURIOUS) / (1 - P_FIND_REAL)`. (An agent that
//!   reported nothing at all may have failed or been silenced: it is no evidence either way.)
//!   Two agents of three are strong evidence; two of twelve are not, because a real defect is
//!   usually seen by several;
//! - **verification**: grounded in the code adds, an ungrounded claim takes much away;
//! - **specificity**: a location or quoted code makes the claim checkable; identifiers named in
//!   backticks a little;
//! - **severity**: what the agents wrote (critical or important adds; a suggestion is neutral:
//!   the report has a section for it). When none wrote one (benchmark data), the wording stands
//!   in for it ([`Wording`]): consequences such as a crash, a wrong result or a race read as a
//!   defect (+0.5); remarks about style, upkeep, tests or docs read as a remark (−1.5). The
//!   asymmetry is deliberate: remark words ("consider", "readability", "tests") are rarely used
//!   of a defect, while defect words also turn up in remarks ("could fail");
//! - **records** (only when the store holds decisions on other changes' findings,
//!   [`crate::outcomes`]): the agreement terms with each agent's own chances instead of the
//!   shared ones, as a difference from every agent's ([`record_term`]). Without records this
//!   term does not exist and nothing else changes.
//!
//! **Keep rule**: a finding is shown among the findings when its log-odds are at least 0
//! (confidence ≥ [`KEEP_THRESHOLD`]). A finding one agent alone raised stands when it is grounded
//! or located: one of three agents (−0.81), located (+0.9) and important (+0.5) gives +0.58, and
//! grounded adds +1.0 more; ungrounded (−2.0) it falls. With text alone (no location, no
//! severity) it takes agreement: two of three agents (+0.51) unless the text reads as a remark,
//! four of twelve (+0.04) unless it reads as a remark, six of twelve in any case.

use std::sync::OnceLock;

use regex::Regex;

use crate::types::{
    AgentRecord, Finding, Reliability, ReliabilityMethod, Severity, VerificationStatus,
};

/// Findings at or above this confidence are shown among the findings.
pub const KEEP_THRESHOLD: f64 = 0.5;

/// Share of the findings reviewers write that are defects the author must fix.
pub const PRIOR: f64 = 0.25;

/// Chance that one agent finds a given real defect of the change.
pub const P_FIND_REAL: f64 = 0.4;

/// Chance that one agent independently raises a given point that is not a real defect.
pub const P_FIND_SPURIOUS: f64 = 0.15;

/// Log-odds added when verification found the claim in the code, and taken when it did not.
const GROUNDED: f64 = 1.0;
const UNGROUNDED: f64 = -2.0;
/// A location or quoted code: the claim points at a place and can be checked.
const LOCATED: f64 = 0.9;
/// Identifiers in backticks but no location.
const NAMES_IDENTIFIERS: f64 = 0.3;
/// Critical or important as written (and calibrated).
const SEVERE: f64 = 0.5;
/// With no severity written: the wording of a defect; the wording of a remark.
const DEFECT_WORDING: f64 = 0.5;
const REMARK_WORDING: f64 = -1.5;

/// How a finding reads when no severity was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wording {
    /// Names a consequence: a crash, an exception, a wrong result, a race, a leak.
    Defect,
    /// Names a concern of form: style, naming, docs, tests, performance, duplication.
    Remark,
    Neutral,
}

impl Wording {
    /// The wording of one text: whichever kind of word it uses more.
    pub fn of_text(text: &str) -> Wording {
        let lower = text.to_lowercase();
        let defect =
            defect_words().find_iter(&lower).count() + error_names().find_iter(text).count();
        let remark = remark_words().find_iter(&lower).count();
        match defect.cmp(&remark) {
            std::cmp::Ordering::Greater => Wording::Defect,
            std::cmp::Ordering::Less => Wording::Remark,
            std::cmp::Ordering::Equal => Wording::Neutral,
        }
    }

    /// The wording of a merged finding: the majority of its source findings (title and text).
    pub fn of_findings<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Wording {
        let (mut defect, mut remark) = (0, 0);
        for f in findings {
            let text = if f.explanation.starts_with(f.title.trim_end_matches('.')) {
                f.explanation.clone()
            } else {
                format!("{}\n{}", f.title, f.explanation)
            };
            match Wording::of_text(&text) {
                Wording::Defect => defect += 1,
                Wording::Remark => remark += 1,
                Wording::Neutral => {}
            }
        }
        match defect.cmp(&remark) {
            std::cmp::Ordering::Greater => Wording::Defect,
            std::cmp::Ordering::Less => Wording::Remark,
            std::cmp::Ordering::Equal => Wording::Neutral,
        }
    }
}

fn defect_words() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"\b(crash\w*|panic\w*|exceptions?|null|nil|undefined|deadlock\w*|race|racy|leak\w*|overflow\w*|underflow\w*|incorrect\w*|wrong\w*|broken|breaks?|fails?|failing|failure|never|bypass\w*|vulnerab\w*|injection|unauthori[sz]ed|infinite|off-by-one|corrupt\w*|lost|loses?|losing|missing|mismatch\w*|invalid|silently|regression|compile|won't|cannot|can't|doesn't|does not|not be|errors?|bug)\b",
        )
        .expect("the defect word pattern is valid")
    })
}

/// Names of errors and exceptions as code spells them: `TypeError`, `NullPointerException`.
fn error_names() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"\b[A-Z][A-Za-z]*(Error|Exception)\b").expect("the error name pattern is valid")
    })
}

fn remark_words() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"\b(consider\w*|inefficien\w*|performance|maintainab\w*|readab\w*|naming|rename\w*|documentation|docs?|comments?|typo\w*|style|nit|clean\w*up|refactor\w*|duplicat\w*|hard-?coded|magic|unused|redundant|verbose|simplif\w*|clarity|unclear|confusing|misleading|test coverage|coverage|tests?|logging|log|consisten\w*|inconsisten\w*|best practices?|could be|might be|may be|extract\w*|helper)\b",
        )
        .expect("the remark word pattern is valid")
    })
}

/// What the confidence of one merged finding is computed from.
#[derive(Debug, Clone, Copy)]
pub struct Evidence {
    /// Agents whose findings the cluster holds.
    pub agents: usize,
    /// Agents that reported at least one finding on the change.
    pub total_agents: usize,
    /// The best verification among the cluster's findings; `None` when verify did not run.
    pub verification: Option<VerificationStatus>,
    /// Some finding of the cluster has a location or quotes code.
    pub located: bool,
    /// Names identifiers in backticks.
    pub names_identifiers: bool,
    /// The (calibrated) severity, when some agent wrote one.
    pub severity: Option<Severity>,
    /// How the findings read; used when no severity was written.
    pub wording: Wording,
}

/// The log-odds that the finding is a real defect worth the author's time: the sum of the terms
/// in the module's documentation.
pub fn log_odds(e: &Evidence) -> f64 {
    let odds = |p: f64| (p / (1.0 - p)).ln();
    let found = e.agents.max(1) as f64;
    let missed = e.total_agents.saturating_sub(e.agents.max(1)) as f64;
    let mut s = odds(PRIOR) + found * (P_FIND_REAL / P_FIND_SPURIOUS).ln()
        - missed * ((1.0 - P_FIND_SPURIOUS) / (1.0 - P_FIND_REAL)).ln();
    s += match e.verification {
        Some(VerificationStatus::Grounded) | Some(VerificationStatus::Relocated) => GROUNDED,
        Some(VerificationStatus::Ungrounded) => UNGROUNDED,
        Some(VerificationStatus::Unchecked) | None => 0.0,
    };
    if e.located {
        s += LOCATED;
    } else if e.names_identifiers {
        s += NAMES_IDENTIFIERS;
    }
    s += match e.severity {
        Some(Severity::Critical) | Some(Severity::Important) => SEVERE,
        Some(Severity::Suggestion) => 0.0,
        None => match e.wording {
            Wording::Defect => DEFECT_WORDING,
            Wording::Remark => REMARK_WORDING,
            Wording::Neutral => 0.0,
        },
    };
    s
}

/// The confidence in 0..1: the logistic of [`log_odds`].
pub fn confidence(e: &Evidence) -> f64 {
    1.0 / (1.0 + (-log_odds(e)).exp())
}

/// What the agents' records add to a finding's log-odds, and why, in the report's words.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordTerm {
    pub log_odds: f64,
    /// "Codex: 31 of 40 similar findings acted on; not raised by Gemini (...)".
    pub reason: String,
}

/// An agent as the record term names it.
#[derive(Debug, Clone, Copy)]
pub struct Named<'a> {
    pub name: &'a str,
    pub display: &'a str,
}

/// The agents' records as a term of the finding's log-odds ([`Reliability`]). The agreement
/// terms above treat every agent alike; with records, each agent's own chances of raising a
/// real defect and a spurious point (the two-coin model of Dawid and Skene) say how far it
/// differs from the others: each agent that raised the finding adds
/// `ln(p_raise_real / p_raise_spurious)` less the same over every agent (the pool), and each
/// agent that reviewed the change but did not raise it subtracts
/// `ln((1 − p_raise_spurious) / (1 − p_raise_real))` less the pool's. An agent as reliable as
/// the pool, or without a row, changes nothing; how much agreement counts overall stays the
/// model's (see [`AgentRecord`] for why the level is not learnt). `None` when no agent
/// involved has a row: the confidence is then exactly what it is without a table.
///
/// The raise term is the log of the odds of the agent's findings being acted on over the odds
/// of every agent's: a reviewer whose similar findings were acted on 31 times of 40 lifts a
/// lone finding of its own, one declined 30 times of 40 lowers it.
pub fn record_term(
    table: &Reliability,
    raised: &[Named<'_>],
    silent: &[Named<'_>],
    category: Option<&str>,
) -> Option<RecordTerm> {
    let mut delta = 0.0;
    let mut said: Vec<String> = Vec::new();
    let mut silent_said: Vec<String> = Vec::new();
    let mut any = false;
    for agent in raised {
        let Some(row) = table.row(agent.name, category) else {
            continue;
        };
        any = true;
        delta += raise_log_ratio(row.p_raise_real, row.p_raise_spurious)
            - raise_log_ratio(row.pool_raise_real, row.pool_raise_spurious);
        said.push(raised_phrase(table, agent.display, row));
    }
    for agent in silent {
        let Some(row) = table.row(agent.name, category) else {
            continue;
        };
        any = true;
        delta -= miss_log_ratio(row.p_raise_real, row.p_raise_spurious)
            - miss_log_ratio(row.pool_raise_real, row.pool_raise_spurious);
        silent_said.push(silent_phrase(table, agent.display, row));
    }
    if !any {
        return None;
    }
    let mut reason = said.join("; ");
    if !silent_said.is_empty() {
        if !reason.is_empty() {
            reason.push_str("; ");
        }
        reason.push_str(&format!("not raised by {}", silent_said.join(", ")));
    }
    reason.push_str(&format!("; the records add {delta:+.2} to the log-odds"));
    Some(RecordTerm {
        log_odds: delta,
        reason,
    })
}

/// `ln(real / spurious)`: how much an agent with these chances raising a point says it is
/// real.
pub fn raise_log_ratio(real: f64, spurious: f64) -> f64 {
    (clamp_chance(real) / clamp_chance(spurious)).ln()
}

/// `ln((1 − spurious) / (1 − real))`: how much the silence of an agent with these chances says
/// the point is not real.
pub fn miss_log_ratio(real: f64, spurious: f64) -> f64 {
    ((1.0 - clamp_chance(spurious)) / (1.0 - clamp_chance(real))).ln()
}

/// A chance kept inside (0, 1): a table read from a file may hold 0 or 1.
fn clamp_chance(p: f64) -> f64 {
    if p.is_nan() {
        0.5
    } else {
        p.clamp(1e-3, 1.0 - 1e-3)
    }
}

fn raised_phrase(table: &Reliability, display: &str, row: &AgentRecord) -> String {
    let kind = if row.category.is_some() {
        "similar findings"
    } else {
        "findings"
    };
    match table.method {
        ReliabilityMethod::Outcomes => {
            let decided = row.acted_on + row.declined;
            if decided == 0 {
                format!("{display}: none of its {kind} decided yet")
            } else {
                format!("{display}: {} of {decided} {kind} acted on", row.acted_on)
            }
        }
        ReliabilityMethod::Agreement => format!(
            "{display}: by agreement alone, raises {:.0}% of real defects and {:.0}% of other \
             points",
            row.p_raise_real * 100.0,
            row.p_raise_spurious * 100.0
        ),
    }
}

fn silent_phrase(table: &Reliability, display: &str, row: &AgentRecord) -> String {
    match table.method {
        ReliabilityMethod::Outcomes if row.acted_on_seen > 0 => format!(
            "{display} (it raised {} of the {} findings acted on in its reviews)",
            row.acted_on, row.acted_on_seen
        ),
        _ => format!(
            "{display} (it raises {:.0}% of real defects)",
            row.p_raise_real * 100.0
        ),
    }
}

/// The confidence with the agents' records: the logistic of [`log_odds`] plus the term.
pub fn confidence_with_record(e: &Evidence, term: &RecordTerm) -> f64 {
    1.0 / (1.0 + (-(log_odds(e) + term.log_odds)).exp())
}

/// The log-odds of a confidence in 0..1 (the inverse of the logistic).
pub fn log_odds_of(confidence: f64) -> f64 {
    let p = confidence.clamp(1e-12, 1.0 - 1e-12);
    (p / (1.0 - p)).ln()
}

/// The keep rule: shown among the findings at confidence ≥ [`KEEP_THRESHOLD`] (log-odds ≥ 0).
pub fn is_confident(score: f64) -> bool {
    score >= KEEP_THRESHOLD
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(agents: usize, total: usize, v: Option<VerificationStatus>) -> Evidence {
        Evidence {
            agents,
            total_agents: total,
            verification: v,
            located: true,
            names_identifiers: true,
            severity: Some(Severity::Important),
            wording: Wording::Neutral,
        }
    }

    fn text_only(agents: usize, total: usize, wording: Wording) -> Evidence {
        Evidence {
            agents,
            total_agents: total,
            verification: None,
            located: false,
            names_identifiers: false,
            severity: None,
            wording,
        }
    }

    #[test]
    fn a_grounded_specific_finding_of_one_agent_stands() {
        let grounded = ev(1, 3, Some(VerificationStatus::Grounded));
        assert!(is_confident(confidence(&grounded)));
        // Located and important, before any verification ran (a report read back).
        assert!(is_confident(confidence(&ev(1, 3, None))));
        // Even a suggestion stands when grounded.
        let sugg = Evidence {
            severity: Some(Severity::Suggestion),
            ..grounded
        };
        assert!(is_confident(confidence(&sugg)));
    }

    #[test]
    fn an_ungrounded_finding_of_one_agent_does_not() {
        let e = ev(1, 3, Some(VerificationStatus::Ungrounded));
        assert!(!is_confident(confidence(&e)));
        // Nor one with nothing to check and no severity.
        assert!(!is_confident(confidence(&text_only(1, 3, Wording::Defect))));
    }

    #[test]
    fn agreement_raises_confidence_and_silence_lowers_it() {
        assert!(confidence(&ev(2, 3, None)) > confidence(&ev(1, 3, None)));
        assert!(confidence(&ev(3, 3, None)) > confidence(&ev(2, 3, None)));
        // Two of three agents agreeing on a defect: kept on text alone.
        assert!(is_confident(confidence(&text_only(2, 3, Wording::Defect))));
        assert!(is_confident(confidence(&text_only(2, 3, Wording::Neutral))));
        // Two of twelve: ten agents looked and did not see it.
        assert!(!is_confident(confidence(&text_only(
            2,
            12,
            Wording::Defect
        ))));
        assert!(is_confident(confidence(&text_only(
            5,
            12,
            Wording::Neutral
        ))));
    }

    #[test]
    fn a_remark_needs_more_agreement_than_a_defect() {
        assert!(!is_confident(confidence(&text_only(2, 3, Wording::Remark))));
        assert!(is_confident(confidence(&text_only(3, 3, Wording::Remark))));
        assert!(
            confidence(&text_only(4, 12, Wording::Defect))
                > confidence(&text_only(4, 12, Wording::Remark))
        );
    }

    fn record(agent: &str, acted: usize, declined: usize, real: f64, spurious: f64) -> AgentRecord {
        AgentRecord {
            agent: agent.into(),
            category: None,
            acted_on: acted,
            declined,
            acted_on_seen: 40,
            declined_seen: 40,
            p_raise_real: real,
            p_raise_spurious: spurious,
            pool_raise_real: 0.5,
            pool_raise_spurious: 0.25,
        }
    }

    #[test]
    fn records_lift_a_good_reviewers_lone_finding_and_lower_a_poor_ones() {
        let table = Reliability {
            method: ReliabilityMethod::Outcomes,
            basis: "test".into(),
            prior_strength: 10.0,
            rows: vec![
                record("codex", 31, 9, 0.7, 0.15),
                record("gemini", 10, 30, 0.3, 0.45),
                // As reliable as the pool: it changes nothing.
                record("claude", 20, 10, 0.5, 0.25),
            ],
        };
        let named = |name: &'static str| Named {
            name,
            display: name,
        };
        let term = |raised: &'static str, silent: &[&'static str]| {
            let silent: Vec<Named<'_>> = silent.iter().map(|s| named(s)).collect();
            record_term(&table, &[named(raised)], &silent, Some("regression"))
        };
        let good = term("codex", &["gemini"]).unwrap();
        let poor = term("gemini", &["codex"]).unwrap();
        assert!(
            good.log_odds > 1.0 && poor.log_odds < -1.0,
            "{good:?} {poor:?}"
        );
        assert!(
            good.reason
                .starts_with("codex: 31 of 40 findings acted on; not raised by gemini")
        );
        // raise: ln(0.7/0.15) − ln(0.5/0.25); gemini silent: −(ln(0.55/0.7) − ln(0.75/0.5)).
        let want = (0.7f64 / 0.15).ln() - 2f64.ln() - ((0.55f64 / 0.7).ln() - 1.5f64.ln());
        assert!((good.log_odds - want).abs() < 1e-12);
        assert!(term("claude", &[]).unwrap().log_odds.abs() < 1e-12);
        // No agent of the finding has a row: no term at all, today's confidence.
        assert_eq!(term("local", &["other"]), None);
        let e = ev(1, 3, None);
        assert!(confidence_with_record(&e, &good) > confidence(&e));
        assert!(confidence_with_record(&e, &poor) < confidence(&e));
    }

    #[test]
    fn wording_tells_a_defect_from_a_remark() {
        assert_eq!(
            Wording::of_text("Calling math.floor on a datetime raises TypeError at runtime"),
            Wording::Defect
        );
        assert_eq!(
            Wording::of_text("Two concurrent requests race and the limit check is bypassed"),
            Wording::Defect
        );
        assert_eq!(
            Wording::of_text("Consider renaming tmp for readability and add documentation"),
            Wording::Remark
        );
        assert_eq!(Wording::of_text("The handler changed"), Wording::Neutral);
    }
}
