//! Pass 1 of the Markdown reader: cut the document into sections by the names of their
//! headings or bold leads (`### Critical Issues`, `**Strengths**`), whatever their level, and
//! hand each piece of a section to that section's reader as it comes. Blocks arrive one at a
//! time, part after part of the review, and are dropped once read: the reader's memory follows
//! one finding, not the whole review.

use super::findings::FindingsReader;
use super::notes::{ObservationsReader, TestingReader};
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

/// Which list an item belongs to: items of one list share the id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ListInfo {
    pub(super) id: u64,
    pub(super) ordered: bool,
}

/// One piece of a section: a block, a list item, or the rest of a paragraph whose first line
/// was a bold section name.
#[derive(Debug)]
pub(super) enum Unit<'a> {
    Block(Block<'a>),
    Item {
        item: Block<'a>,
        list: ListInfo,
        number: Option<u64>,
    },
    Fragment {
        lines: Vec<Vec<Inline<'a>>>,
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

/// The first word of a name as [`norm`] reads it (after a leading `1.` or `A)`), without
/// allocating: most headings and bold leads a reader meets are no section name, and this is
/// enough to tell.
pub(super) fn first_word(name: &str) -> &str {
    let s = name.trim_matches(|c: char| !c.is_alphanumeric() && c != '(' && c != ')');
    let s = match s.split_once(['.', ')']) {
        Some((n, rest))
            if !n.is_empty()
                && n.len() <= 2
                && n.chars().all(|c| c.is_ascii_alphanumeric())
                && (n.chars().all(|c| c.is_ascii_digit()) || n.len() == 1) =>
        {
            rest
        }
        _ => s,
    };
    let s = s.trim_start_matches(|c: char| !c.is_alphanumeric());
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first words of the section names [`classify`] knows.
const SECTION_FIRST_WORDS: &[&str] = &[
    "executive",
    "summary",
    "overview",
    "overall",
    "verdict",
    "recommendation",
    "final",
    "findings",
    "issues",
    "review",
    "detailed",
    "critical",
    "blocking",
    "blockers",
    "important",
    "major",
    "suggestions",
    "suggestion",
    "minor",
    "nits",
    "nitpicks",
    "optional",
    "design",
    "observations",
    "architecture",
    "concerns",
    "concern",
    "strengths",
    "strength",
    "positives",
    "what",
    "positive",
    "what's",
    "good",
    "testing",
    "tests",
    "test",
    "documentation",
    "docs",
    "acknowledged",
    "limitations",
    "known",
    "unresolved",
    "prior",
    "coverage",
    "files",
    "file",
    "commit",
    "commits",
];

/// The section a heading or bold lead names, if it names one.
pub(super) fn classify(name: &str) -> Option<Sec> {
    let w = first_word(name);
    if !SECTION_FIRST_WORDS
        .iter()
        .any(|k| k.eq_ignore_ascii_case(w))
    {
        return None;
    }
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

/// What reads the section being cut: each kind of section has its own, fed one unit at a time.
enum Reader {
    /// Text before the first section: findings with a severity note count; the rest is
    /// preamble.
    Preamble(FindingsReader),
    Findings(FindingsReader),
    /// The text of the section, joined at its end (summary, commit structure).
    Joined(Vec<String>),
    Verdict {
        first: bool,
    },
    Observations(ObservationsReader),
    Testing(TestingReader),
    Entries,
    Coverage,
    /// A section the contract does not have: findings with a severity note count, the rest
    /// is kept.
    Unknown(FindingsReader, Vec<String>),
}

/// The section being read.
struct Open {
    sec: Sec,
    /// The heading level, or `None` for a bold-paragraph section.
    level: Option<u8>,
    /// Byte offset of the section's heading.
    at: usize,
    reader: Reader,
}

impl Open {
    fn new(sec: Sec, level: Option<u8>, at: usize) -> Self {
        let reader = match &sec {
            Sec::Preamble => Reader::Preamble(FindingsReader::new(None, true)),
            Sec::Findings(sev) => Reader::Findings(FindingsReader::new(*sev, false)),
            Sec::Summary | Sec::Commits => Reader::Joined(Vec::new()),
            Sec::Verdict => Reader::Verdict { first: true },
            Sec::Observations(kind) => Reader::Observations(ObservationsReader::new(*kind)),
            Sec::Testing => Reader::Testing(TestingReader::default()),
            Sec::Documentation | Sec::Limitations | Sec::Unresolved => Reader::Entries,
            Sec::Coverage => Reader::Coverage,
            Sec::Unknown(_) => Reader::Unknown(FindingsReader::new(None, true), Vec::new()),
        };
        Open {
            sec,
            level,
            at,
            reader,
        }
    }
}

/// Pass 1, fed the top-level blocks of the review in order.
pub(super) struct Splitter {
    open: Open,
    seen_heading: bool,
    /// Whether any section other than the preamble was found.
    any_section: bool,
    /// Whether a section of the review layout was found (not only unknown ones).
    layout_section: bool,
    next_list: u64,
    /// Text before the first section (and of preamble-like title chunks): (offset, text).
    preamble: Vec<(usize, String)>,
}

impl Splitter {
    pub(super) fn new() -> Self {
        Splitter {
            open: Open::new(Sec::Preamble, None, 0),
            seen_heading: false,
            any_section: false,
            layout_section: false,
            next_list: 0,
            preamble: Vec::new(),
        }
    }

    /// Reads one top-level block.
    pub(super) fn block(&mut self, b: Block<'_>, ctx: &mut Ctx) {
        match &b.kind {
            BlockKind::Heading(level) => {
                let level = *level;
                let name = b.plain();
                let first_heading = !std::mem::replace(&mut self.seen_heading, true);
                if let Some(sec) = classify(&name) {
                    if sec == Sec::Verdict
                        && let Some(v) = inline_value(&name)
                    {
                        // `## Verdict: Approve`
                        ctx.review.verdict = Some(clean_verdict(&v));
                        return;
                    }
                    self.start(sec, Some(level), b.range.start, ctx);
                    return;
                }
                let cur_sec = &self.open.sec;
                let cur_level = self.open.level;
                let deeper = cur_level.is_none_or(|l| level > l);
                let in_findings = matches!(cur_sec, Sec::Findings(_));
                let has_sev = crate::parse::head::severity_note(&name).is_some();
                if (in_findings && (deeper || NUMBERED_RE.is_match(&name))) || has_sev {
                    self.push(Unit::Block(b), ctx);
                } else if *cur_sec == Sec::Preamble
                    && first_heading
                    && (level <= 2 || name.to_lowercase().contains("review"))
                {
                    // The title ("# Deep Review: PR #361"): the raw text keeps it.
                } else if (*cur_sec == Sec::Preamble && level > 2)
                    || (deeper && cur_level.is_some())
                {
                    self.push(Unit::Block(b), ctx);
                } else {
                    let at = b.range.start;
                    self.start(Sec::Unknown(name), Some(level), at, ctx);
                }
            }
            BlockKind::Paragraph => split_paragraph(b, self, ctx),
            BlockKind::List { start } => {
                let start = *start;
                let list = ListInfo {
                    id: self.next_list,
                    ordered: start.is_some(),
                };
                self.next_list += 1;
                // `- **Important Issues**` with the findings nested below: a list used as the
                // outline of the review. When one item names a findings group, every item of
                // the list that only names a section is that section's heading.
                let mut sections: Vec<Option<(Sec, Option<String>)>> =
                    b.children.iter().map(item_section).collect();
                let outline = sections
                    .iter()
                    .any(|s| matches!(s, Some((Sec::Findings(_), _))));
                for (i, item) in b.children.into_iter().enumerate() {
                    if outline && let Some((sec, verdict)) = sections[i].take() {
                        self.open_item_section(item, sec, verdict, ctx);
                        continue;
                    }
                    self.push(
                        Unit::Item {
                            item,
                            list,
                            number: start.map(|s| s + i as u64),
                        },
                        ctx,
                    );
                }
            }
            BlockKind::Rule => {}
            _ => self.push(Unit::Block(b), ctx),
        }
    }

    /// Starts a section: the one before it is read to its end.
    fn start(&mut self, sec: Sec, level: Option<u8>, at: usize, ctx: &mut Ctx) {
        self.any_section = true;
        self.layout_section |= !matches!(sec, Sec::Unknown(_) | Sec::Preamble);
        let open = std::mem::replace(&mut self.open, Open::new(sec, level, at));
        self.close(open, ctx);
    }

    /// Hands a unit to the reader of the open section.
    fn push(&mut self, u: Unit<'_>, ctx: &mut Ctx) {
        match &mut self.open.reader {
            Reader::Preamble(findings) => {
                if let Some(u) = findings.push(u, ctx) {
                    keep_preamble(u, ctx, &mut self.preamble);
                }
            }
            Reader::Findings(findings) => {
                let _ = findings.push(u, ctx);
            }
            Reader::Joined(parts) => {
                let s = match &u {
                    Unit::Item { item, .. } => format!("- {}", item_text(item, ctx)),
                    _ => unit_src(&u, ctx),
                };
                if !s.trim().is_empty() {
                    parts.push(s);
                }
            }
            Reader::Verdict { first } => {
                let s = unit_src(&u, ctx);
                if std::mem::replace(first, false) {
                    ctx.review.verdict = Some(clean_verdict(&s.replace("**", "")));
                } else {
                    ctx.keep_unparsed(u.start(), s, "text after the verdict");
                }
            }
            Reader::Observations(obs) => obs.push(&u, ctx),
            Reader::Testing(testing) => testing.push(&u, ctx),
            Reader::Entries => {
                let s = unit_src(&u, ctx);
                if s.trim().is_empty() || is_none_text(&s) {
                    return;
                }
                match self.open.sec {
                    Sec::Documentation => ctx.review.documentation.push(s),
                    Sec::Limitations => ctx.review.limitations.push(s),
                    // "No unresolved review comments." says the section is empty.
                    _ if s
                        .trim_start_matches(['*', '_'])
                        .to_ascii_lowercase()
                        .starts_with("no unresolved") => {}
                    _ => ctx.review.unresolved_feedback.push(s),
                }
            }
            Reader::Coverage => read_coverage(&u, ctx),
            Reader::Unknown(findings, rest) => {
                if let Some(u) = findings.push(u, ctx) {
                    let mut kept = Vec::new();
                    keep_preamble(u, ctx, &mut kept);
                    rest.extend(kept.into_iter().map(|(_, s)| s));
                }
            }
        }
    }

    /// Reads what the section's reader held back to the end.
    fn close(&mut self, open: Open, ctx: &mut Ctx) {
        match open.reader {
            Reader::Preamble(mut findings) => findings.finish(ctx),
            Reader::Findings(mut findings) => findings.finish(ctx),
            Reader::Joined(parts) => {
                let s = parts.join("\n\n");
                if open.sec == Sec::Summary {
                    push_para(&mut ctx.review.summary, &s);
                } else if !s.trim().is_empty() {
                    let cs = ctx.review.commit_structure.get_or_insert_with(String::new);
                    push_para(cs, &s);
                }
            }
            Reader::Verdict { .. } | Reader::Entries | Reader::Coverage => {}
            Reader::Observations(obs) => ctx.review.observations.extend(obs.finish()),
            Reader::Testing(testing) => testing.finish(ctx),
            Reader::Unknown(mut findings, rest) => {
                findings.finish(ctx);
                if let Sec::Unknown(name) = &open.sec {
                    let why = format!("section \"{name}\" is not part of the review layout");
                    ctx.keep_unparsed(
                        open.at,
                        format!("{name}\n\n{}", rest.join("\n\n"))
                            .trim()
                            .to_string(),
                        &why,
                    );
                }
            }
        }
    }

    /// Reads the last section to its end; returns the text before the first section, whether
    /// the review had any section, and whether any was a section of the review layout.
    pub(super) fn finish(mut self, ctx: &mut Ctx) -> (Vec<(usize, String)>, bool, bool) {
        let open = std::mem::replace(&mut self.open, Open::new(Sec::Preamble, None, 0));
        self.close(open, ctx);
        (self.preamble, self.any_section, self.layout_section)
    }

    /// Starts the section a list item names; what the item holds below its first line (the
    /// rest of its paragraph, nested findings, paragraphs) is that section's content.
    fn open_item_section(
        &mut self,
        item: Block<'_>,
        sec: Sec,
        verdict: Option<String>,
        ctx: &mut Ctx,
    ) {
        if let Some(v) = verdict {
            ctx.review.verdict = Some(v);
            return;
        }
        self.start(sec, None, item.range.start, ctx);
        let mut children = item.children.into_iter().peekable();
        if let Some(p) =
            children.next_if(|c| matches!(c.kind, BlockKind::Paragraph | BlockKind::Heading(_)))
        {
            let lines = p.lines();
            if let Some(start) = lines.get(1).and_then(|l| l.first()).map(|i| i.range.start) {
                let rest: Vec<Vec<Inline<'_>>> = lines[1..]
                    .iter()
                    .map(|l| l.iter().map(|i| (*i).clone()).collect())
                    .collect();
                let range = start..p.range.end;
                self.push(Unit::Fragment { lines: rest, range }, ctx);
            }
        }
        for c in children {
            match &c.kind {
                BlockKind::List { start } => {
                    let list = ListInfo {
                        id: self.next_list,
                        ordered: start.is_some(),
                    };
                    self.next_list += 1;
                    let start = *start;
                    for (i, sub) in c.children.into_iter().enumerate() {
                        self.push(
                            Unit::Item {
                                item: sub,
                                list,
                                number: start.map(|s| s + i as u64),
                            },
                            ctx,
                        );
                    }
                }
                BlockKind::Paragraph => split_paragraph(c, self, ctx),
                _ => self.push(Unit::Block(c), ctx),
            }
        }
    }
}

/// The section a list item names when its first line is only a bold section name
/// (`- **Important Issues**`, `- **Critical Issues:** None.`, `- **Verdict**: Approve`), with the
/// verdict such an item gives.
fn item_section(item: &Block) -> Option<(Sec, Option<String>)> {
    let p = item.first_paragraph()?;
    // Most items are findings or notes: only a short bold lead can name a section.
    let first = p
        .inlines
        .iter()
        .find(|i| !(i.kind == InlineKind::Text && i.text.trim().is_empty()))?;
    // Section names are a few words; a finding's bold title is usually more.
    if !first.strong || first.text.len() > 48 || first.text.split_whitespace().count() > 4 {
        return None;
    }
    let line = p.line(0)?;
    let (bold, after, _) = bold_lead(&line)?;
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

/// A paragraph whose first lines are bold section names (`**Critical Issues**`,
/// `**Strengths** — text`, `**Verdict**: Approve`) switches sections; the rest of it is a
/// fragment of the new section.
fn split_paragraph<'a>(b: Block<'a>, splitter: &mut Splitter, ctx: &mut Ctx) {
    // Most paragraphs do not start with a bold section name: look no further than that.
    let leads = b
        .line(0)
        .and_then(|l| bold_lead(&l))
        .is_some_and(|(bold, _, _)| classify(&bold).is_some());
    if !leads {
        splitter.push(Unit::Block(b), ctx);
        return;
    }
    let lines = b.lines();
    let mut k = 0;
    while k < lines.len() {
        let Some((bold, after, bold_end)) = bold_lead(&lines[k]) else {
            break;
        };
        let Some(sec) = classify(&bold) else {
            break;
        };
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
        splitter.start(sec, None, at, ctx);
        if !rest_text.is_empty() {
            // `**Strengths** — text`: the text after the lead starts the section.
            let mut frag_lines: Vec<Vec<Inline<'a>>> =
                vec![lines[k][bold_end..].iter().map(|i| (*i).clone()).collect()];
            frag_lines.extend(
                lines[k + 1..]
                    .iter()
                    .map(|l| l.iter().map(|i| (*i).clone()).collect()),
            );
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
            let range = start..b.range.end;
            splitter.push(
                Unit::Fragment {
                    lines: frag_lines,
                    range,
                },
                ctx,
            );
            return;
        }
        k += 1;
    }
    if k == 0 {
        drop(lines);
        splitter.push(Unit::Block(b), ctx);
    } else if k < lines.len() {
        let frag_lines: Vec<Vec<Inline<'a>>> = lines[k..]
            .iter()
            .map(|l| l.iter().map(|i| (*i).clone()).collect())
            .collect();
        let start = frag_lines
            .first()
            .and_then(|l| l.first())
            .map(|i| i.range.start)
            .unwrap_or(b.range.start);
        let range = start..b.range.end;
        splitter.push(
            Unit::Fragment {
                lines: frag_lines,
                range,
            },
            ctx,
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
        assert_eq!(classify("A) Summary"), Some(Sec::Summary));
        assert_eq!(
            classify("What's good"),
            Some(Sec::Observations(ObservationKind::Strength))
        );
        assert_eq!(classify("Finding number 12"), None);
        assert_eq!(first_word("**3. Critical Issues (2)**"), "Critical");
    }
}
