//! The executive summary and the verdict's rationale, composed in code from what the agents
//! wrote. (A synthesizer model may later write prose; this text is what stands without one.)
//!
//! The summary has three parts, each a paragraph:
//!
//! 1. **What the change does**, in the agents' own words: each agent's summary opens with a
//!    sentence about the change; the one that says most of what the others say (the medoid by
//!    text similarity) is quoted, attributed to its agent and to the agents whose opening says the
//!    same.
//! 2. **What decides the verdict**: the findings of the verdict's severity, by id, title and
//!    agents, then how many findings came in and how many distinct issues they make.
//! 3. **What failed or was skipped**: agents whose run failed, timed out or was cancelled, with
//!    the error their run reported; agents that wrote nothing; findings set aside as unverified or
//!    of low confidence.

use crate::text::plural;
use crate::types::{
    AgentRetro, Finding, MergedFinding, PriorItem, PriorRounds, Review, RunStatus, Severity,
    Verdict,
};

use super::cluster::MERGE_THRESHOLD;
use super::similarity::{Corpus, FindingProfile};

/// An opening shorter than this many words ("Looks good.") says nothing about the change.
const MIN_OPENING_WORDS: usize = 6;

/// How many deciding findings the summary and the rationale name before "and N more".
const NAMED_FINDINGS: usize = 3;

/// A finding's id and title with where it is and who raised it, for sentences.
fn cite(f: &MergedFinding, display: &dyn Fn(&str) -> String) -> String {
    let place = f
        .locations
        .first()
        .map(|l| format!(" (`{l}`)"))
        .unwrap_or_default();
    let who: Vec<String> = f.agents.iter().map(|a| display(a)).collect();
    format!("{} {}{place} [{}]", f.id, f.title, who.join(", "))
}

/// The shown findings that decide `verdict`: those of its severity.
fn deciding(verdict: Verdict, findings: &[MergedFinding]) -> Vec<&MergedFinding> {
    let severity = match verdict {
        Verdict::Rework => Severity::Critical,
        Verdict::MergeWithFixes => Severity::Important,
        Verdict::MergeWithOptionalFixes => Severity::Suggestion,
        _ => return Vec::new(),
    };
    findings
        .iter()
        .filter(|f| f.is_shown() && f.severity == severity)
        .collect()
}

/// "I1 Title; I2 Title and 3 more".
fn name_list(list: &[&MergedFinding]) -> String {
    let mut out: Vec<String> = list
        .iter()
        .take(NAMED_FINDINGS)
        .map(|f| format!("{} {}", f.id, f.title))
        .collect();
    if list.len() > NAMED_FINDINGS {
        out.push(format!("and {} more", list.len() - NAMED_FINDINGS));
    }
    out.join("; ")
}

/// One or two sentences saying why the verdict is what it is, naming the findings that decide it.
pub fn verdict_rationale(verdict: Verdict, findings: &[MergedFinding]) -> String {
    let list = deciding(verdict, findings);
    match verdict {
        Verdict::Rework => format!(
            "{} must be resolved: {}",
            plural(list.len(), "critical issue", "critical issues"),
            name_list(&list)
        ),
        Verdict::MergeWithFixes => format!(
            "{} to fix before merging: {}",
            plural(list.len(), "important issue", "important issues"),
            name_list(&list)
        ),
        Verdict::MergeWithOptionalFixes => format!(
            "no blocking issues; {} worth considering: {}",
            plural(list.len(), "suggestion", "suggestions"),
            name_list(&list)
        ),
        Verdict::MergeAsIs | Verdict::Merge => {
            "no issue stands after verification and de-duplication".to_string()
        }
        Verdict::NoReview => {
            "no agent produced a review: the retro says why each failed".to_string()
        }
    }
}

/// The executive summary (see the module documentation). `agents` is the retro, in reviewer
/// order; it names the agents and carries each run's status and error.
pub fn executive_summary(
    verdict: Verdict,
    findings: &[MergedFinding],
    agents: &[AgentRetro],
    reviews: &[Review],
    files: usize,
) -> String {
    let display = |name: &str| -> String {
        agents
            .iter()
            .find(|a| a.name == name)
            .map_or_else(|| name.to_string(), |a| a.display.clone())
    };
    let mut paragraphs: Vec<String> = Vec::new();
    if verdict == Verdict::NoReview {
        paragraphs.push(
            "No agent produced a review, so there is nothing to judge the change by.".to_string(),
        );
    } else {
        if let Some(opening) = what_the_change_does(reviews, &display) {
            paragraphs.push(opening);
        }
        paragraphs.push(what_decides(verdict, findings, agents, files, &display));
    }
    if let Some(failed) = what_failed(findings, agents, reviews, verdict) {
        paragraphs.push(failed);
    }
    paragraphs.join("\n\n")
}

/// The opening sentence that says most of what the other agents' openings say, attributed.
fn what_the_change_does(reviews: &[Review], display: &dyn Fn(&str) -> String) -> Option<String> {
    let openings: Vec<(&str, String)> = reviews
        .iter()
        .filter_map(|r| opening_sentence(&r.summary).map(|s| (r.agent.as_str(), s)))
        .collect();
    if openings.is_empty() {
        return None;
    }
    let profiles: Vec<FindingProfile> = openings
        .iter()
        .map(|(_, s)| {
            let mut f = Finding::new("", "");
            f.explanation = s.clone();
            FindingProfile::of(&f)
        })
        .collect();
    let corpus = Corpus::new(profiles, (0..openings.len()).collect());
    let n = openings.len();
    let score = |a: usize, b: usize| corpus.evidence(a.min(b), a.max(b)).score();
    let medoid = (0..n)
        .max_by(|&a, &b| {
            let total = |i: usize| (0..n).filter(|&j| j != i).map(|j| score(i, j)).sum::<f64>();
            // Ties go to the earlier agent.
            total(a).total_cmp(&total(b)).then(b.cmp(&a))
        })
        .unwrap_or(0);
    let agreeing: Vec<String> = (0..n)
        .filter(|&j| j != medoid && score(medoid, j) >= MERGE_THRESHOLD)
        .map(|j| display(openings[j].0))
        .collect();
    let (agent, sentence) = &openings[medoid];
    let who = display(agent);
    let attribution = match agreeing.len() {
        0 => who,
        _ => format!(
            "{who}; {} {} the same",
            join_names(&agreeing),
            if agreeing.len() == 1 { "says" } else { "say" }
        ),
    };
    Some(format!("{sentence} ({attribution})"))
}

/// The verdict's deciding findings, then the counts.
fn what_decides(
    verdict: Verdict,
    findings: &[MergedFinding],
    agents: &[AgentRetro],
    files: usize,
    display: &dyn Fn(&str) -> String,
) -> String {
    let shown: Vec<&MergedFinding> = findings.iter().filter(|f| f.is_shown()).collect();
    let list = deciding(verdict, findings);
    let mut out = if list.is_empty() {
        format!("The verdict is **{verdict}**: no finding stands against the change.")
    } else {
        let cited: Vec<String> = list
            .iter()
            .take(NAMED_FINDINGS)
            .map(|f| cite(f, display))
            .collect();
        let more = if list.len() > NAMED_FINDINGS {
            format!("; and {} more", list.len() - NAMED_FINDINGS)
        } else {
            String::new()
        };
        format!(
            "The verdict is **{verdict}** because of {}{more}.",
            cited.join("; ")
        )
    };
    let reviewers = agents.iter().filter(|a| !failed(a)).count();
    let what = if files > 0 {
        plural(files, "changed file", "changed files")
    } else {
        "the change".to_string()
    };
    let raised: usize = agents
        .iter()
        .map(|a| a.counts.critical + a.counts.important + a.counts.suggestion)
        .sum();
    let count = |s: Severity| shown.iter().filter(|f| f.severity == s).count();
    out.push_str(&format!(
        " {} reviewed {what}; their {} consolidate into {}: {} critical, {} important, {}",
        plural(reviewers, "reviewer", "reviewers"),
        plural(raised, "finding", "findings"),
        plural(shown.len(), "distinct issue", "distinct issues"),
        count(Severity::Critical),
        count(Severity::Important),
        plural(count(Severity::Suggestion), "suggestion", "suggestions"),
    ));
    let shared = shown.iter().filter(|f| f.agents.len() > 1).count();
    if shared > 0 {
        out.push_str(&format!(
            ", {} raised by more than one reviewer.",
            if shared == 1 {
                "one".to_string()
            } else {
                format!("{shared}")
            }
        ));
    } else {
        out.push('.');
    }
    out
}

/// The paragraph about earlier rounds that opens a later round's summary: "Round 3 of branch
/// feat. Since round 2, 1 finding was resolved (S1); 1 persists (I2); 1 regressed (I1: title);
/// 2 declined findings are not raised again."
pub fn rounds_paragraph(round: u32, of: Option<&str>, prior: &PriorRounds) -> Option<String> {
    let since = prior.since_round?;
    let ids = |items: &[PriorItem]| {
        items
            .iter()
            .take(5)
            .map(|i| match &i.now {
                Some(now) => now.clone(),
                None => i.id.clone(),
            })
            .filter(|id| !id.is_empty())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    let with = |n: usize, one: &str, many: &str, list: String| {
        let mut t = plural(n, one, many);
        if !list.is_empty() {
            t.push_str(&format!(" ({list})"));
        }
        t
    };
    if !prior.resolved.is_empty() {
        parts.push(with(
            prior.resolved.len(),
            "earlier finding was resolved",
            "earlier findings were resolved",
            ids(&prior.resolved),
        ));
    }
    if !prior.persisting.is_empty() {
        parts.push(with(
            prior.persisting.len(),
            "persists",
            "persist",
            ids(&prior.persisting),
        ));
    }
    if !prior.regressed.is_empty() {
        let titles: Vec<String> = prior
            .regressed
            .iter()
            .take(3)
            .map(|i| format!("{}: {}", i.now.as_deref().unwrap_or(&i.id), i.title))
            .collect();
        parts.push(format!(
            "{} after being marked fixed ({})",
            plural(prior.regressed.len(), "came back", "came back"),
            titles.join("; ")
        ));
    }
    if !prior.declined.is_empty() {
        let again: usize = prior.declined.iter().map(|d| d.raised_again.len()).sum();
        let mut t = format!(
            "{} declined earlier {} declined",
            plural(prior.declined.len(), "finding", "findings"),
            if prior.declined.len() == 1 {
                "stays"
            } else {
                "stay"
            }
        );
        if again > 0 {
            t.push_str(&format!(
                " ({} raising {} again {} set aside)",
                plural(again, "finding", "findings"),
                if again == 1 { "one" } else { "them" },
                if again == 1 { "was" } else { "were" }
            ));
        }
        parts.push(t);
    }
    if parts.is_empty() {
        parts.push(format!("no finding of round {since} is raised again"));
    }
    let of = of.map(|o| format!(" of {o}")).unwrap_or_default();
    Some(format!(
        "Round {round}{of}. Since round {since}: {}.",
        parts.join("; ")
    ))
}

fn failed(a: &AgentRetro) -> bool {
    matches!(
        a.status,
        Some(RunStatus::Failed | RunStatus::TimedOut | RunStatus::Cancelled)
    )
}

/// Failed runs with their errors, agents that wrote nothing, findings set aside.
fn what_failed(
    findings: &[MergedFinding],
    agents: &[AgentRetro],
    reviews: &[Review],
    verdict: Verdict,
) -> Option<String> {
    let mut sentences: Vec<String> = Vec::new();
    for a in agents {
        let what = match a.status {
            Some(RunStatus::TimedOut) => "timed out",
            Some(RunStatus::Cancelled) => "was cancelled",
            Some(RunStatus::Failed) => "failed",
            _ => {
                let wrote_nothing = reviews
                    .iter()
                    .find(|r| r.agent == a.name)
                    .is_none_or(|r| r.findings.is_empty() && r.summary.trim().is_empty());
                if wrote_nothing && a.status == Some(RunStatus::Ok) {
                    sentences.push(format!("**{}** completed but wrote no review.", a.display));
                }
                continue;
            }
        };
        let reason = a
            .error
            .as_deref()
            .unwrap_or("no reason was reported")
            .trim()
            .trim_end_matches('.');
        sentences.push(format!("**{}** {what}: {reason}.", a.display));
    }
    if !sentences.is_empty() && verdict != Verdict::NoReview {
        sentences.push("The report stands on the other reviewers.".to_string());
    }
    let unverified = findings
        .iter()
        .filter(|f| f.tier == crate::types::Tier::Unverified)
        .count();
    let low = findings
        .iter()
        .filter(|f| f.tier == crate::types::Tier::LowConfidence)
        .count();
    if unverified > 0 {
        sentences.push(format!(
            "{} could not be found in the code and {} listed as unverified.",
            plural(unverified, "finding", "findings"),
            if unverified == 1 { "is" } else { "are" }
        ));
    }
    if low > 0 {
        sentences.push(format!(
            "{} had too little support to stand and {} listed apart.",
            plural(low, "finding", "findings"),
            if low == 1 { "is" } else { "are" }
        ));
    }
    (!sentences.is_empty()).then(|| sentences.join(" "))
}

/// "A", "A and B", "A, B and C".
fn join_names(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The first sentence of a summary that says something about the change: at least
/// [`MIN_OPENING_WORDS`] words, from the first two sentences.
pub fn opening_sentence(summary: &str) -> Option<String> {
    sentences(summary)
        .into_iter()
        .take(2)
        .find(|s| s.split_whitespace().count() >= MIN_OPENING_WORDS)
}

/// The sentences of a paragraph of prose, whitespace folded. A sentence ends at `.`, `!` or
/// `?` followed by white space and a capital letter, a backtick, a quote or a digit, outside
/// backticks; "e.g." and "i.e." do not end one.
pub fn sentences(text: &str) -> Vec<String> {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let chars: Vec<char> = folded.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_code = false;
    for i in 0..chars.len() {
        match chars[i] {
            '`' => in_code = !in_code,
            '.' | '!' | '?' if !in_code => {
                let next_starts = chars.get(i + 1) == Some(&' ')
                    && chars.get(i + 2).is_some_and(|c| {
                        c.is_uppercase() || c.is_ascii_digit() || matches!(c, '`' | '"' | '*')
                    });
                let abbreviation = i >= 3 && {
                    let tail: String = chars[i - 3..=i].iter().collect();
                    matches!(tail.to_lowercase().as_str(), "e.g." | "i.e." | " vs.")
                };
                if next_starts && !abbreviation {
                    out.push(chars[start..=i].iter().collect::<String>());
                    start = i + 2;
                }
            }
            _ => {}
        }
    }
    if start < chars.len() {
        out.push(chars[start..].iter().collect::<String>());
    }
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_split_at_full_stops_outside_code_and_abbreviations() {
        let s = sentences(
            "This PR adds `spec.running` propagation, e.g. for VMs. It also\n mirrors \
             conditions! Does it? `x.y` is set. 3 files change.",
        );
        assert_eq!(
            s,
            [
                "This PR adds `spec.running` propagation, e.g. for VMs.",
                "It also mirrors conditions!",
                "Does it?",
                "`x.y` is set.",
                "3 files change."
            ]
        );
    }

    #[test]
    fn the_opening_skips_a_short_first_sentence() {
        assert_eq!(
            opening_sentence("Looks good. This change moves the retry loop into the client."),
            Some("This change moves the retry loop into the client.".to_string())
        );
        assert_eq!(
            opening_sentence("Fine. Ok. Long enough sentence here now."),
            None
        );
        assert_eq!(opening_sentence(""), None);
    }

    #[test]
    fn names_join_as_prose() {
        let n = |v: &[&str]| join_names(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(n(&["A"]), "A");
        assert_eq!(n(&["A", "B"]), "A and B");
        assert_eq!(n(&["A", "B", "C"]), "A, B and C");
    }
}
