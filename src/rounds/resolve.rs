//! Recording what the author did about a report's findings: `deep-review resolve`.
//!
//! Decisions are the author's: each names a finding of the report by its id and an action
//! (Fixed, Skipped with a reason, Test written, Documentation updated, Commented). Recording
//! again updates the section, it never adds a second one: a finding decided again gets its new
//! decision, the others keep theirs. `--auto` proposes Fixed only where the commits show it
//! (the finding's code, found when it was reviewed, is gone or changed at the newer head) and
//! lists everything else for the author; it never decides on its own.

use std::collections::HashSet;
use std::path::Path;

use anyhow::bail;

use super::PriorFinding;
use super::code::{CodeReader, CodeState};
use crate::types::{Action, CommitInfo, Finding, MergedFinding, Resolution, ResolutionItem};
use crate::verify::quote::Quote;

/// One decision the author gave on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub id: String,
    pub action: Action,
    pub reason: String,
}

/// A finding of the report a decision can name: its id and title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decidable {
    pub id: String,
    pub title: String,
}

/// Reads one value of `--fixed`, `--skipped`, ...: `I1,S2` (ids) or `S3=reason` (one id with
/// a reason, which may hold commas).
pub fn parse_decisions(value: &str, action: &Action) -> Result<Vec<Decision>, String> {
    let (ids, reason) = match value.split_once('=') {
        Some((id, reason)) => (
            vec![id.trim()],
            reason.trim().trim_matches('"').trim().to_string(),
        ),
        None => (value.split(',').map(str::trim).collect(), String::new()),
    };
    let mut out = Vec::new();
    for id in ids.into_iter().filter(|i| !i.is_empty()) {
        if !crate::report::markdown_read::resolution::is_finding_id(id) {
            return Err(format!(
                "`{id}` is not a finding id: give ids as the report shows them (I1, S2; T3 for \
                 the third testing gap)"
            ));
        }
        out.push(Decision {
            id: id.to_ascii_uppercase(),
            action: action.clone(),
            reason: reason.clone(),
        });
    }
    if out.is_empty() {
        return Err(format!("no finding id in {value:?}"));
    }
    Ok(out)
}

/// The report's Resolution with `decisions` recorded: existing rows for the same findings are
/// replaced, others kept; `commits` are added to those already listed; the day is `today`.
pub fn record(
    existing: Option<&Resolution>,
    decidable: &[Decidable],
    decisions: &[Decision],
    commits: &[CommitInfo],
    today: chrono::NaiveDate,
) -> anyhow::Result<Resolution> {
    let mut seen: HashSet<&str> = HashSet::new();
    for d in decisions {
        if !seen.insert(d.id.as_str()) {
            bail!(
                "{} is given two decisions: give each finding one action",
                d.id
            );
        }
        if !decidable.iter().any(|f| f.id.eq_ignore_ascii_case(&d.id)) {
            let ids: Vec<&str> = decidable.iter().map(|f| f.id.as_str()).collect();
            bail!(
                "the report has no finding {}: its findings are {}",
                d.id,
                if ids.is_empty() {
                    "none".to_string()
                } else {
                    ids.join(", ")
                }
            );
        }
        if d.action == Action::Skipped && d.reason.trim().is_empty() {
            bail!(
                "say why {} is skipped: --skipped {}=\"the reason\" (a later round shows the \
                 reason when it sets the finding aside)",
                d.id,
                d.id
            );
        }
    }
    let mut res = existing.cloned().unwrap_or_default();
    for d in decisions {
        let title = decidable
            .iter()
            .find(|f| f.id.eq_ignore_ascii_case(&d.id))
            .map(|f| f.title.clone())
            .unwrap_or_default();
        let item = ResolutionItem {
            id: d.id.clone(),
            title,
            action: d.action.clone(),
            reason: d.reason.clone(),
        };
        match res
            .items
            .iter_mut()
            .find(|i| i.id.eq_ignore_ascii_case(&d.id))
        {
            Some(old) => *old = item,
            None => res.items.push(item),
        }
    }
    // Report order: findings by id as the report lists them, testing gaps after.
    res.items.sort_by_key(|i| {
        decidable
            .iter()
            .position(|f| f.id.eq_ignore_ascii_case(&i.id))
            .unwrap_or(usize::MAX)
    });
    for c in commits {
        if !res.commits.iter().any(|o| same_commit(&o.sha, &c.sha)) {
            res.commits.push(c.clone());
        }
    }
    res.addressed = Some(today);
    Ok(res)
}

fn same_commit(a: &str, b: &str) -> bool {
    let n = a.len().min(b.len());
    n >= 4 && a[..n].eq_ignore_ascii_case(&b[..n])
}

/// A Resolution carried to a report consolidated again, whose findings may have other ids and
/// titles: each row names a finding of the old report (`body`, its own findings by their ids),
/// which is paired with the new report's finding that names the same defect; the row takes that
/// finding's id and title. A row whose finding has no counterpart keeps what it said.
pub fn carry_over(res: &Resolution, body: &[Finding], findings: &[MergedFinding]) -> Resolution {
    let news: Vec<Finding> = findings
        .iter()
        .map(|m| {
            let mut f = Finding::new(m.id.clone(), m.title.clone());
            f.locations = m.locations.clone();
            f.code = m.code.clone();
            f.explanation = m.body.clone();
            f
        })
        .collect();
    let pairs = crate::consolidate::matching::pair_up(body, &news);
    let mut out = res.clone();
    for item in &mut out.items {
        let Some(old) = body
            .iter()
            .position(|f| f.id.eq_ignore_ascii_case(&item.id))
        else {
            continue;
        };
        if let Some(n) = pairs[old] {
            item.id = findings[n].id.clone();
            item.title = findings[n].title.clone();
        }
    }
    out
}

/// What `--auto` found for one finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    pub id: String,
    pub title: String,
    /// Why: "its quoted code is gone at abc1234".
    pub why: String,
}

/// `--auto`: for each finding with no decision yet, whether its code (found when it was
/// reviewed at `then`) is gone or changed at `now`. Returns the Fixed proposals and the
/// findings left for the author.
pub fn auto(
    repo: &Path,
    then: &str,
    now: &str,
    findings: &[PriorFinding],
    decided: &HashSet<String>,
) -> anyhow::Result<(Vec<Proposal>, Vec<Proposal>)> {
    let mut reader = CodeReader::open(repo)?;
    let short: String = now.chars().take(7).collect();
    let mut fixed = Vec::new();
    let mut open = Vec::new();
    for f in findings {
        if decided.contains(&f.id.to_ascii_uppercase()) || f.carried {
            continue;
        }
        let proposal = |why: String| Proposal {
            id: f.id.clone(),
            title: f.title.clone(),
            why,
        };
        if f.locations.is_empty() {
            open.push(proposal("it cites no code to compare".into()));
            continue;
        }
        let grounded = match (
            f.grounded,
            f.code.as_ref().and_then(|c| Quote::parse(&c.code)),
        ) {
            (Some(g), _) => g,
            (None, Some(q)) => reader.found(then, &f.locations, &q)?,
            (None, None) => true,
        };
        if !grounded {
            open.push(proposal(
                "its quoted code was not in the code it reviewed, so its absence now says \
                 nothing"
                    .into(),
            ));
            continue;
        }
        match reader.state(now, &f.locations, f.code.as_ref(), Some(then))? {
            CodeState::Changed => {
                fixed.push(proposal(format!("its code is gone or changed at {short}")))
            }
            CodeState::Present => open.push(proposal(format!("its code is unchanged at {short}"))),
            CodeState::Unknown => open.push(proposal("it cites no code to compare".into())),
        }
    }
    Ok((fixed, open))
}

/// `text` (a report's Markdown) with `section` (a rendered `## Resolution`) in place of the one
/// it has, or appended after a rule when it has none. A `## Resolution` inside a raw review of
/// the appendix is that review's text: it is neither replaced nor taken for the report's.
pub fn splice_markdown(text: &str, section: &str) -> String {
    let appendix = crate::report::markdown_read::parse_round_report(text, "report.md").appendix;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut in_fence = false;
    let mut start: Option<usize> = None;
    let mut end = lines.len();
    let mut offset = 0;
    for (i, line) in lines.iter().enumerate() {
        let at = offset;
        offset += line.len();
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        // Code, and the appendix's reviews (after its heading line), are not the report's
        // sections.
        if in_fence
            || appendix
                .as_ref()
                .is_some_and(|a| at > a.start && at < a.end)
        {
            continue;
        }
        let h2 = line.starts_with("## ") || line.trim_end() == "##";
        match start {
            None if h2 && line[2..].trim().eq_ignore_ascii_case("resolution") => start = Some(i),
            Some(_) if h2 || line.starts_with("# ") => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let mut head: String = match start {
        Some(s) => lines[..s].concat(),
        None => text.to_string(),
    };
    let tail: String = match start {
        Some(_) => lines[end..].concat(),
        None => String::new(),
    };
    // Drop the rule and blank lines that stood before the old section.
    loop {
        let trimmed = head.trim_end_matches(['\n', ' ']);
        match trimmed.strip_suffix("---") {
            Some(rest) if rest.is_empty() || rest.ends_with('\n') => head = rest.to_string(),
            _ => {
                head.truncate(trimmed.len());
                break;
            }
        }
    }
    let mut out = head;
    out.push_str("\n\n---\n\n");
    out.push_str(section.trim_end());
    out.push('\n');
    if !tail.trim().is_empty() {
        out.push('\n');
        out.push_str(&tail);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decidable() -> Vec<Decidable> {
        ["I1", "S1", "S2", "T1"]
            .iter()
            .map(|id| Decidable {
                id: id.to_string(),
                title: format!("Title of {id}"),
            })
            .collect()
    }

    fn day() -> chrono::NaiveDate {
        chrono::NaiveDate::from_ymd_opt(2026, 5, 21).unwrap()
    }

    #[test]
    fn values_name_ids_or_one_id_with_a_reason() {
        let d = parse_decisions("I1, s2", &Action::Fixed).unwrap();
        assert_eq!(
            d.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(),
            ["I1", "S2"]
        );
        let d = parse_decisions("S3=\"cannot happen, by design\"", &Action::Skipped).unwrap();
        assert_eq!(d[0].reason, "cannot happen, by design");
        assert!(parse_decisions("rm -rf", &Action::Fixed).is_err());
        assert!(parse_decisions(",", &Action::Fixed).is_err());
    }

    #[test]
    fn recording_again_updates_and_never_duplicates() {
        let first = record(
            None,
            &decidable(),
            &[
                Decision {
                    id: "S2".into(),
                    action: Action::Skipped,
                    reason: "by design".into(),
                },
                Decision {
                    id: "I1".into(),
                    action: Action::Fixed,
                    reason: String::new(),
                },
            ],
            &[CommitInfo {
                sha: "abc1234".into(),
                subject: "Fix it".into(),
            }],
            day(),
        )
        .unwrap();
        assert_eq!(first.items.len(), 2);
        assert_eq!(first.items[0].id, "I1", "report order");
        assert_eq!(first.items[1].title, "Title of S2");
        let again = record(
            Some(&first),
            &decidable(),
            &[Decision {
                id: "S2".into(),
                action: Action::Fixed,
                reason: String::new(),
            }],
            &[CommitInfo {
                sha: "abc1234def".into(),
                subject: "Fix it".into(),
            }],
            day(),
        )
        .unwrap();
        assert_eq!(again.items.len(), 2);
        assert_eq!(again.items[1].action, Action::Fixed);
        assert_eq!(again.commits.len(), 1, "the same commit once");
    }

    #[test]
    fn bad_decisions_are_refused_with_what_to_do() {
        let err = |d: Decision| {
            record(None, &decidable(), &[d], &[], day())
                .unwrap_err()
                .to_string()
        };
        let e = err(Decision {
            id: "C9".into(),
            action: Action::Fixed,
            reason: String::new(),
        });
        assert!(
            e.contains("no finding C9") && e.contains("I1, S1, S2, T1"),
            "{e}"
        );
        let e = err(Decision {
            id: "S1".into(),
            action: Action::Skipped,
            reason: " ".into(),
        });
        assert!(e.contains("--skipped S1=\""), "{e}");
        let twice = record(
            None,
            &decidable(),
            &[
                Decision {
                    id: "S1".into(),
                    action: Action::Fixed,
                    reason: String::new(),
                },
                Decision {
                    id: "S1".into(),
                    action: Action::Skipped,
                    reason: "x".into(),
                },
            ],
            &[],
            day(),
        );
        assert!(twice.unwrap_err().to_string().contains("two decisions"));
    }

    #[test]
    fn a_resolution_inside_a_review_is_neither_replaced_nor_taken_for_the_reports() {
        let md = "# Deep Review: x\n\n| | |\n|---|---|\n| **Reviewers** | Claude |\n\n\
                  ## Appendix: Original Reviews\n\n### Claude\n\nText.\n\n## Resolution\n\n\
                  | 1 | I1: x | Skipped | approved |\n\n### Claude again\n";
        let once = splice_markdown(md, "## Resolution\n\nA\n");
        assert!(once.starts_with(md.trim_end()), "{once}");
        assert!(once.ends_with("\n---\n\n## Resolution\n\nA\n"), "{once}");
    }

    #[test]
    fn the_section_is_replaced_or_appended() {
        let md =
            "# R\n\n## Appendix: Original Reviews\n\n### Claude\n\n```md\n## Resolution\n```\n";
        let once = splice_markdown(md, "## Resolution\n\nA\n");
        assert!(
            once.ends_with("```\n\n---\n\n## Resolution\n\nA\n"),
            "{once}"
        );
        let twice = splice_markdown(&once, "## Resolution\n\nB\n");
        assert_eq!(twice, once.replace("\nA\n", "\nB\n"));
        assert_eq!(twice.matches("## Resolution").count(), 2, "one in a fence");
    }
}
