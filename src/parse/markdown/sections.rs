//! Pass 1 of the Markdown reader: cut the document into sections by the names of their
//! headings or bold leads (`### Critical Issues`, `**Strengths**`), whatever their level.

use super::*;

/// The sections of the review contract.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Sec {
    /// Text before the first recognised section, and title headings.
    Preamble,
    Summary,
    Verdict,
    /// A findings section; the severity of its heading when it names one.
    Findings(Option<Severity>),
    Observations(ObservationKind),
    Testing,
    Documentation,
    Limitations,
    Unresolved,
    Coverage,
    Commits,
    /// A section the contract does not have; its text goes to `unparsed`.
    Unknown(String),
}

/// One piece of a section: a block, a list item, or the rest of a paragraph whose first line
/// was a bold section name.
#[derive(Debug)]
pub(super) enum Unit<'a> {
    Block(&'a Block),
    Item {
        item: &'a Block,
        list: &'a Block,
        number: Option<u64>,
    },
    Fragment {
        lines: Vec<Vec<&'a Inline>>,
        range: Range<usize>,
    },
}

impl Unit<'_> {
    pub(super) fn start(&self) -> usize {
        match self {
            Unit::Block(b) => b.range.start,
            Unit::Item { item, .. } => item.range.start,
            Unit::Fragment { range, .. } => range.start,
        }
    }
}

#[derive(Debug)]
pub(super) struct Chunk<'a> {
    pub(super) sec: Sec,
    /// The heading level, or `None` for a bold-paragraph section.
    pub(super) level: Option<u8>,
    /// Byte offset of the section's heading.
    pub(super) at: usize,
    pub(super) units: Vec<Unit<'a>>,
}

/// Normalises a heading or bold lead for matching section names.
pub(super) fn norm(s: &str) -> String {
    let s = s.to_lowercase();
    let s = s.trim_matches(|c: char| !c.is_alphanumeric() && c != '(' && c != ')');
    // Drop a leading number ("1. Findings", "A) Summary").
    let s = match s.split_once(['.', ')']) {
        Some((n, rest))
            if !n.is_empty() && n.len() <= 2 && n.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            if n.chars().all(|c| c.is_ascii_digit()) || n.len() == 1 {
                rest
            } else {
                s
            }
        }
        _ => s,
    };
    // Drop a trailing count or note: "Suggestions (3)", "Critical Issues: none".
    let s = s.split(['(', ':', '—']).next().unwrap_or(s);
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_string()
}

/// The section a heading or bold lead names, if it names one.
pub(super) fn classify(name: &str) -> Option<Sec> {
    let n = norm(name);
    let sec = match n.as_str() {
        "executive summary" | "summary" | "overview" | "overall assessment" => Sec::Summary,
        "verdict" | "overall verdict" | "recommendation" | "final verdict" => Sec::Verdict,
        "findings" | "issues" | "review findings" | "detailed findings" | "issues found" => {
            Sec::Findings(None)
        }
        "critical issues" | "critical" | "critical findings" | "blocking issues" | "blockers"
        | "critical issue" => Sec::Findings(Some(Severity::Critical)),
        "important issues" | "important" | "important findings" | "major issues"
        | "important issue" => Sec::Findings(Some(Severity::Important)),
        "suggestions"
        | "suggestion"
        | "minor issues"
        | "nits"
        | "nitpicks"
        | "optional suggestions"
        | "minor suggestions" => Sec::Findings(Some(Severity::Suggestion)),
        "design observations"
        | "design observation"
        | "observations"
        | "design notes"
        | "architecture"
        | "design" => Sec::Observations(ObservationKind::Concern),
        "concerns" | "design concerns" | "concern" => Sec::Observations(ObservationKind::Concern),
        "strengths"
        | "strength"
        | "design strengths"
        | "positives"
        | "what went well"
        | "positive observations"
        | "what's good"
        | "what is good"
        | "good" => Sec::Observations(ObservationKind::Strength),
        "testing assessment" | "testing" | "tests" | "test coverage" | "testing gaps"
        | "test assessment" => Sec::Testing,
        "documentation assessment" | "documentation" | "docs" | "documentation gaps" => {
            Sec::Documentation
        }
        "acknowledged limitations" | "limitations" | "known limitations" => Sec::Limitations,
        "unresolved feedback"
        | "unresolved review comments"
        | "unresolved comments"
        | "unresolved review feedback"
        | "prior feedback" => Sec::Unresolved,
        "coverage summary" | "coverage" | "files reviewed" | "file coverage" => Sec::Coverage,
        "commit structure" | "commits" | "commit history" => Sec::Commits,
        _ => return None,
    };
    Some(sec)
}

/// The bold lead of a line (all leading strong spans) and the text after it, when the line
/// starts with bold.
pub(super) fn bold_lead(line: &[&Inline]) -> Option<(String, String, usize)> {
    let start = line
        .iter()
        .position(|i| !(i.kind == InlineKind::Text && i.text.trim().is_empty()))?;
    if !line[start].strong {
        return None;
    }
    let end = line[start..]
        .iter()
        .position(|i| !i.strong)
        .map(|p| start + p)
        .unwrap_or(line.len());
    Some((plain(&line[start..end]), plain(&line[end..]), end))
}

pub(super) fn strip_sep(s: &str) -> &str {
    s.trim()
        .trim_start_matches([':', '—', '–', '-', '.'])
        .trim_start()
}

/// Pass 1: cut the top-level blocks into sections.
pub(super) fn split_sections<'a>(blocks: &'a [Block], ctx: &mut Ctx) -> Vec<Chunk<'a>> {
    let mut chunks = vec![Chunk {
        sec: Sec::Preamble,
        level: None,
        at: 0,
        units: Vec::new(),
    }];
    let mut seen_heading = false;
    for b in blocks {
        let cur = chunks.last().map(|c| (c.sec.clone(), c.level));
        let (cur_sec, cur_level) = cur.unwrap_or((Sec::Preamble, None));
        match &b.kind {
            BlockKind::Heading(level) => {
                let level = *level;
                let name = b.plain();
                let first_heading = !std::mem::replace(&mut seen_heading, true);
                if let Some(sec) = classify(&name) {
                    if sec == Sec::Verdict
                        && let Some(v) = inline_value(&name)
                    {
                        // `## Verdict: Approve`
                        ctx.review.verdict = Some(clean_verdict(&v));
                        continue;
                    }
                    chunks.push(Chunk {
                        sec,
                        level: Some(level),
                        at: b.range.start,
                        units: Vec::new(),
                    });
                    continue;
                }
                let deeper = cur_level.is_none_or(|l| level > l);
                let in_findings = matches!(cur_sec, Sec::Findings(_));
                let has_sev = crate::parse::head::find_severity(&name).is_some();
                if (in_findings && (deeper || NUMBERED_RE.is_match(&name))) || has_sev {
                    push_unit(&mut chunks, Unit::Block(b));
                } else if cur_sec == Sec::Preamble
                    && first_heading
                    && (level <= 2 || name.to_lowercase().contains("review"))
                {
                    // The title ("# Deep Review: PR #361"): the raw text keeps it.
                } else if (cur_sec == Sec::Preamble && level > 2) || (deeper && cur_level.is_some())
                {
                    push_unit(&mut chunks, Unit::Block(b));
                } else {
                    chunks.push(Chunk {
                        sec: Sec::Unknown(name),
                        level: Some(level),
                        at: b.range.start,
                        units: Vec::new(),
                    });
                }
            }
            BlockKind::Paragraph => split_paragraph(b, &mut chunks, ctx),
            BlockKind::List { start } => {
                // `- **Important Issues**` with the findings nested below: a list used as the
                // outline of the review. When one item names a findings group, every item of
                // the list that only names a section is that section's heading.
                let outline = b
                    .children
                    .iter()
                    .any(|item| matches!(item_section(item), Some((Sec::Findings(_), _))));
                for (i, item) in b.children.iter().enumerate() {
                    if outline && let Some((sec, verdict)) = item_section(item) {
                        open_item_section(item, sec, verdict, &mut chunks, ctx);
                        continue;
                    }
                    push_unit(
                        &mut chunks,
                        Unit::Item {
                            item,
                            list: b,
                            number: start.map(|s| s + i as u64),
                        },
                    );
                }
            }
            BlockKind::Rule => {}
            _ => push_unit(&mut chunks, Unit::Block(b)),
        }
    }
    chunks
}

/// The section a list item names when its first line is only a bold section name
/// (`- **Important Issues**`, `- **Critical Issues:** None.`, `- **Verdict**: Approve`), with the
/// verdict such an item gives.
fn item_section(item: &Block) -> Option<(Sec, Option<String>)> {
    let p = item.first_paragraph()?;
    let lines = p.lines();
    let (bold, after, _) = bold_lead(lines.first()?)?;
    let sec = classify(&bold)?;
    let after = strip_sep(&after);
    if sec == Sec::Verdict {
        let v = if after.is_empty() {
            inline_value(&bold)
        } else {
            Some(after.to_string())
        };
        return Some((sec, v.map(|v| clean_verdict(&v))));
    }
    (after.is_empty() || is_none_text(after)).then_some((sec, None))
}

/// Starts the section a list item names; what the item holds below its first line (the rest
/// of its paragraph, nested findings, paragraphs) is that section's content.
fn open_item_section<'a>(
    item: &'a Block,
    sec: Sec,
    verdict: Option<String>,
    chunks: &mut Vec<Chunk<'a>>,
    ctx: &mut Ctx,
) {
    if let Some(v) = verdict {
        ctx.review.verdict = Some(v);
        return;
    }
    chunks.push(Chunk {
        sec,
        level: None,
        at: item.range.start,
        units: Vec::new(),
    });
    let mut children = item.children.iter();
    if let Some(p) = item.first_paragraph() {
        children.next();
        let lines = p.lines();
        if let Some(start) = lines.get(1).and_then(|l| l.first()).map(|i| i.range.start) {
            push_unit(
                chunks,
                Unit::Fragment {
                    lines: lines[1..].to_vec(),
                    range: start..p.range.end,
                },
            );
        }
    }
    for c in children {
        match &c.kind {
            BlockKind::List { start } => {
                for (i, sub) in c.children.iter().enumerate() {
                    push_unit(
                        chunks,
                        Unit::Item {
                            item: sub,
                            list: c,
                            number: start.map(|s| s + i as u64),
                        },
                    );
                }
            }
            BlockKind::Paragraph => split_paragraph(c, chunks, ctx),
            _ => push_unit(chunks, Unit::Block(c)),
        }
    }
}

pub(super) fn push_unit<'a>(chunks: &mut [Chunk<'a>], u: Unit<'a>) {
    if let Some(c) = chunks.last_mut() {
        c.units.push(u);
    }
}

/// A paragraph whose first lines are bold section names (`**Critical Issues**`,
/// `**Strengths** — text`, `**Verdict**: Approve`) switches sections; the rest of it is a
/// fragment of the new section.
pub(super) fn split_paragraph<'a>(b: &'a Block, chunks: &mut Vec<Chunk<'a>>, ctx: &mut Ctx) {
    let lines = b.lines();
    let mut k = 0;
    while k < lines.len() {
        let Some((bold, after, bold_end)) = bold_lead(&lines[k]) else {
            break;
        };
        let Some(sec) = classify(&bold) else {
            break;
        };
        let rest_inlines: Vec<&Inline> = lines[k][bold_end..].to_vec();
        let rest_text = strip_sep(&after).to_string();
        if sec == Sec::Verdict {
            // `**Verdict**: Approve`, `**Verdict: Approve**`
            let value = if rest_text.is_empty() {
                inline_value(&bold)
            } else {
                Some(rest_text.clone())
            };
            if let Some(v) = value {
                ctx.review.verdict = Some(clean_verdict(&v));
                k += 1;
                continue;
            }
        }
        let at = lines[k]
            .first()
            .map(|i| i.range.start)
            .unwrap_or(b.range.start);
        chunks.push(Chunk {
            sec,
            level: None,
            at,
            units: Vec::new(),
        });
        if !rest_text.is_empty() {
            // `**Strengths** — text`: the text after the lead starts the section.
            let mut frag_lines = vec![rest_inlines];
            frag_lines.extend(lines[k + 1..].iter().cloned());
            let mut start = frag_lines
                .first()
                .and_then(|l| l.first())
                .map(|i| i.range.start)
                .unwrap_or(b.range.start);
            // Skip the separator after the lead: `**Strengths** — text`.
            while let Some(c) = ctx.text.get(start..).and_then(|t| t.chars().next())
                && matches!(c, ' ' | '—' | '–' | '-' | ':' | '*')
                && start < b.range.end
            {
                start += c.len_utf8();
            }
            push_unit(
                chunks,
                Unit::Fragment {
                    lines: frag_lines,
                    range: start..b.range.end,
                },
            );
            return;
        }
        k += 1;
    }
    if k == 0 {
        push_unit(chunks, Unit::Block(b));
    } else if k < lines.len() {
        let frag_lines: Vec<Vec<&Inline>> = lines[k..].to_vec();
        let start = frag_lines
            .first()
            .and_then(|l| l.first())
            .map(|i| i.range.start)
            .unwrap_or(b.range.start);
        push_unit(
            chunks,
            Unit::Fragment {
                lines: frag_lines,
                range: start..b.range.end,
            },
        );
    }
}

/// A heading such as `1. Title` or `C2: Title`: a finding even at its section's level.
pub(super) static NUMBERED_RE: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"^\s*(?:[A-Z]{1,3}-?)?\d{1,4}[.:)]\s").unwrap());

/// The value after a label in one line: `Verdict: Approve` → `Approve`.
pub(super) fn inline_value(s: &str) -> Option<String> {
    let i = s.find([':', '—'])?;
    let v = s[i..]
        .trim_start_matches([':', '—'])
        .trim()
        .trim_matches('*')
        .trim();
    (!v.is_empty()).then(|| v.to_string())
}

pub(super) fn clean_verdict(s: &str) -> String {
    s.trim()
        .trim_matches('*')
        .trim()
        .trim_end_matches('.')
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_names_match_across_spellings() {
        assert_eq!(
            classify("#### Critical Issues"),
            Some(Sec::Findings(Some(Severity::Critical)))
        );
        assert_eq!(
            classify("Suggestions (3)"),
            Some(Sec::Findings(Some(Severity::Suggestion)))
        );
        assert_eq!(classify("2. Findings"), Some(Sec::Findings(None)));
        assert_eq!(classify("Coverage Summary:"), Some(Sec::Coverage));
        assert_eq!(classify("PR #236 Review: Implement"), None);
    }
}
