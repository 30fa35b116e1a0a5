//! What round N+1's brief says about the rounds before it: their findings with what the author
//! decided, and the interdiff, what changed since the head round N reviewed, so the agents look
//! at what moved first and do not raise again what was declined.
//!
//! Everything here comes from earlier reports, which agents wrote about the change: the brief
//! puts it between material markers and escapes it ([`crate::brief::escape`]); this module only
//! gathers it.

use std::collections::HashSet;

use super::{History, PriorFinding};
use crate::brief::{InterdiffFile, PriorLine, RoundsBrief};
use crate::git::{git_probe, git_text};
use crate::types::Target;

/// At most this many earlier findings are listed (the most recent first).
pub const MAX_FINDINGS: usize = 40;
/// At most this many files of the interdiff are listed.
pub const MAX_FILES: usize = 50;

/// The brief's rounds section for reviewing `target` after the rounds of `history`; `None` in a
/// first round.
pub fn material(history: &History, target: &Target) -> Option<RoundsBrief> {
    let last = history.last_reviewed()?;
    let mut lines: Vec<PriorLine> = Vec::new();
    let mut seen: HashSet<(u32, String)> = HashSet::new();
    // The last round's findings, then what earlier rounds decided (newest first).
    let mut pick = |p: &PriorFinding, lines: &mut Vec<PriorLine>| {
        if seen.insert(p.key()) {
            lines.push(line_of(p));
        }
    };
    for p in last
        .findings
        .iter()
        .filter(|p| p.shown || p.action.is_some())
    {
        pick(p, &mut lines);
    }
    for round in history.rounds.iter().rev() {
        for p in round.findings.iter().filter(|p| p.action.is_some()) {
            pick(p, &mut lines);
        }
    }
    let findings_total = lines.len();
    lines.truncate(MAX_FINDINGS);

    let mut brief = RoundsBrief {
        round: history.next_round,
        of: history
            .key
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default(),
        last_round: last.round,
        findings: lines,
        findings_total,
        ..RoundsBrief::default()
    };
    interdiff(&mut brief, last.head.as_deref(), target);
    Some(brief)
}

fn line_of(p: &PriorFinding) -> PriorLine {
    let decision = match &p.action {
        Some(a) if p.reason.trim().is_empty() => a.to_string(),
        Some(a) => format!("{a}: {}", p.reason.trim()),
        None => "no decision recorded".to_string(),
    };
    PriorLine {
        round: p.round,
        id: p.id.clone(),
        title: p.title.clone(),
        location: p.locations.first().map(ToString::to_string),
        decision,
    }
}

/// The files of the change that differ between the head round N reviewed and this head.
fn interdiff(brief: &mut RoundsBrief, last_head: Option<&str>, target: &Target) {
    let Some(then) = last_head else {
        brief.interdiff_note = Some(format!(
            "round {} does not say which commit it reviewed, so what changed since is not known",
            brief.last_round
        ));
        return;
    };
    let exists = git_probe(
        &target.repo,
        &["cat-file", "-e", &format!("{then}^{{commit}}")],
    )
    .is_some();
    if !exists {
        brief.interdiff_note = Some(format!(
            "the commit round {} reviewed ({}) is not in this repository (rewritten history?): \
             review the whole change",
            brief.last_round,
            short(then)
        ));
        return;
    }
    brief.last_head = Some(then.to_string());
    brief.last_head_short = Some(short(then));
    if then == target.head {
        brief.interdiff_note = Some(format!(
            "nothing changed since round {}: it reviewed this same commit",
            brief.last_round
        ));
        return;
    }
    // Only the change's own files: a rebase also brings the base's new commits, which are not
    // the author's answer to the last round.
    let paths: Vec<&str> = target
        .changed_files
        .iter()
        .map(|f| f.path.as_str())
        .collect();
    let mut args = vec![
        "diff",
        "--no-ext-diff",
        "--no-textconv",
        "--numstat",
        "-z",
        "--no-renames",
        then,
        &target.head,
        "--",
    ];
    args.extend(paths.iter().copied());
    let out = match git_text(&target.repo, &args) {
        Ok(out) => out,
        Err(err) => {
            brief.interdiff_note = Some(format!("what changed since is not known: {err:#}"));
            return;
        }
    };
    let mut files = Vec::new();
    for record in out.split('\0').filter(|r| !r.is_empty()) {
        let mut parts = record.splitn(3, '\t');
        let (Some(added), Some(removed), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        files.push(InterdiffFile {
            path: path.to_string(),
            added: added.parse().ok(),
            removed: removed.parse().ok(),
        });
    }
    brief.interdiff_total = files.len();
    files.truncate(MAX_FILES);
    brief.interdiff = files;
    brief.interdiff_command = Some(format!("git diff {then} {}", target.head));
    if brief.interdiff_total == 0 {
        brief.interdiff_note = Some(format!(
            "none of the change's files differ from what round {} reviewed",
            brief.last_round
        ));
    }
}

fn short(sha: &str) -> String {
    sha.chars().take(12).collect()
}
