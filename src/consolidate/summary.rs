//! The executive summary and the verdict's rationale, composed from the findings in code.
//! (A synthesizer model may later write prose; this text is what stands without one.)

use crate::text::plural;
use crate::types::{
    AgentRetro, MergedFinding, PriorItem, PriorRounds, RunStatus, Severity, Verdict,
};

/// A finding's title with where it is, for sentences.
fn cite(f: &MergedFinding) -> String {
    match f.locations.first() {
        Some(loc) => format!("{} (`{loc}`)", f.title),
        None => f.title.clone(),
    }
}

/// One or two sentences saying why the verdict is what it is.
pub fn verdict_rationale(verdict: Verdict, findings: &[MergedFinding]) -> String {
    let shown: Vec<&MergedFinding> = findings.iter().filter(|f| f.is_shown()).collect();
    let of = |s: Severity| {
        shown
            .iter()
            .filter(|f| f.severity == s)
            .copied()
            .collect::<Vec<_>>()
    };
    let titles = |list: &[&MergedFinding]| {
        list.iter()
            .take(3)
            .map(|f| f.title.clone())
            .collect::<Vec<_>>()
            .join("; ")
    };
    match verdict {
        Verdict::Rework => {
            let c = of(Severity::Critical);
            format!(
                "{} must be resolved: {}",
                plural(c.len(), "critical issue", "critical issues"),
                titles(&c)
            )
        }
        Verdict::MergeWithFixes => {
            let i = of(Severity::Important);
            format!(
                "{} to fix before merging: {}",
                plural(i.len(), "important issue", "important issues"),
                titles(&i)
            )
        }
        Verdict::MergeWithOptionalFixes => {
            let s = of(Severity::Suggestion);
            format!(
                "no blocking issues; {} worth considering",
                plural(s.len(), "suggestion", "suggestions")
            )
        }
        Verdict::MergeAsIs | Verdict::Merge => {
            "no issue stands after verification and de-duplication".to_string()
        }
        Verdict::NoReview => {
            "no agent produced a review: the retro says why each failed".to_string()
        }
    }
}

/// The executive summary: who reviewed, what remains, what matters most, what failed.
pub fn executive_summary(
    verdict: Verdict,
    findings: &[MergedFinding],
    agents: &[AgentRetro],
    files: usize,
) -> String {
    let ok: Vec<&AgentRetro> = agents
        .iter()
        .filter(|a| {
            !matches!(
                a.status,
                Some(RunStatus::Failed | RunStatus::TimedOut | RunStatus::Cancelled)
            )
        })
        .collect();
    let names: Vec<&str> = ok.iter().map(|a| a.display.as_str()).collect();
    let mut out = String::new();
    if names.is_empty() || verdict == Verdict::NoReview {
        out.push_str("No agent produced a review, so there is nothing to judge the change by.");
        failures(&mut out, agents, false);
        return out;
    }
    let what = if files > 0 {
        plural(files, "changed file", "changed files")
    } else {
        "the change".to_string()
    };
    out.push_str(&format!(
        "{} ({}) reviewed {what}.",
        plural(names.len(), "reviewer", "reviewers"),
        names.join(", ")
    ));
    let shown: Vec<&MergedFinding> = findings.iter().filter(|f| f.is_shown()).collect();
    let count = |s: Severity| shown.iter().filter(|f| f.severity == s).count();
    let raised: usize = agents
        .iter()
        .map(|a| a.counts.critical + a.counts.important + a.counts.suggestion)
        .sum();
    out.push_str(&format!(
        " Their {} consolidate into {}: {} critical, {} important, {}.",
        plural(raised, "finding", "findings"),
        plural(shown.len(), "distinct issue", "distinct issues"),
        count(Severity::Critical),
        count(Severity::Important),
        plural(count(Severity::Suggestion), "suggestion", "suggestions"),
    ));
    let shared = shown.iter().filter(|f| f.agents.len() > 1).count();
    if shared > 0 {
        out.push_str(&format!(
            " {} raised by more than one reviewer.",
            if shared == 1 {
                "One was".to_string()
            } else {
                format!("{shared} were")
            }
        ));
    }
    let top: Vec<String> = shown
        .iter()
        .filter(|f| f.severity >= Severity::Important)
        .take(3)
        .map(|f| cite(f))
        .collect();
    if !top.is_empty() {
        out.push_str(&format!("\n\nMost important: {}.", top.join("; ")));
    }
    let set_aside = findings.len() - shown.len();
    if set_aside > 0 {
        out.push_str(&format!(
            "\n\n{} could not be verified or had too little support and {} listed apart.",
            plural(set_aside, "further finding", "further findings"),
            if set_aside == 1 { "is" } else { "are" }
        ));
    }
    failures(&mut out, agents, true);
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

/// One paragraph per agent whose run did not complete, with its reason.
fn failures(out: &mut String, agents: &[AgentRetro], others_stand: bool) {
    for a in agents {
        let what = match a.status {
            Some(RunStatus::TimedOut) => "timed out",
            Some(RunStatus::Cancelled) => "was cancelled",
            Some(RunStatus::Failed) => "failed",
            _ => continue,
        };
        let reason = a.error.as_deref().unwrap_or("no reason was reported");
        let reason = reason.trim_end_matches('.');
        out.push_str(&format!("\n\n**{}** {what}: {reason}.", a.display));
        if others_stand {
            out.push_str(" The report stands on the other reviewers.");
        }
    }
}
