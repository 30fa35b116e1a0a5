//! Reading findings: where one starts (numbered or not, `S1.` or `**S1.**`, headings, table
//! rows), and what its body holds (explanation, quoted code, `Fix:` text, fix diff).

use super::sections::*;
use super::*;

/// Words that lead a paragraph inside a finding's body and never start a finding.
pub(super) const LABELS: &[&str] = &[
    "fix",
    "suggested fix",
    "note",
    "why",
    "impact",
    "evidence",
    "example",
    "recommendation",
    "root cause",
    "reproduction",
    "details",
    "context",
    "problem",
    "risk",
    "proposed fix",
    "remediation",
    "location",
    "severity",
    "category",
    "code",
    "explanation",
    "why it matters",
];

/// How a finding's first line was written; later findings of a section are written the same
/// way, which tells a new finding from a bold sentence in a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    Heading(u8),
    Ordered,
    Bullet,
    Para,
}

pub(super) fn style_of(u: &Unit) -> Option<Style> {
    match u {
        Unit::Block(b) => match b.kind {
            BlockKind::Heading(l) => Some(Style::Heading(l)),
            BlockKind::Paragraph => Some(Style::Para),
            _ => None,
        },
        Unit::Item { list, .. } => Some(if list.ordered {
            Style::Ordered
        } else {
            Style::Bullet
        }),
        Unit::Fragment { .. } => Some(Style::Para),
    }
}

pub(super) fn is_label(head: &FindingHead) -> bool {
    let w = first_word(&head.title);
    LABELS.iter().any(|l| {
        l.split(' ')
            .next()
            .is_some_and(|f| f.eq_ignore_ascii_case(w))
    }) && LABELS.contains(&norm(&head.title).as_str())
}

/// A finding being read: its head, and its body read into pieces as it comes (the blocks are
/// not kept: a body of megabytes costs its text, not its parse tree).
pub(super) struct Draft {
    pub(super) head: FindingHead,
    /// Where its first line starts.
    pub(super) at: usize,
    pub(super) number: Option<u64>,
    pub(super) pieces: Vec<Piece>,
    /// Its place among the section's findings, from 1.
    pub(super) position: usize,
}

impl Draft {
    /// A finding that starts with `u`, whose head took `head_lines` lines of it.
    fn new(
        head: FindingHead,
        u: &Unit,
        head_lines: usize,
        number: Option<u64>,
        position: usize,
        ctx: &Ctx,
    ) -> Self {
        let mut pieces: Vec<Piece> = Vec::new();
        match u {
            Unit::Block(b) if matches!(b.kind, BlockKind::Paragraph) => {
                if let Some(s) = rest_lines_src_from(b, ctx, head_lines) {
                    pieces.push(Piece::Text(s));
                }
            }
            Unit::Block(_) => {}
            Unit::Item { item, .. } => {
                let mut children = item.children.iter();
                if let Some(first) = item.first_paragraph() {
                    children.next();
                    if let Some(s) = rest_lines_src_from(first, ctx, head_lines) {
                        pieces.push(Piece::Text(s));
                    }
                }
                for c in children {
                    pieces_of_block(c, ctx, &mut pieces);
                }
            }
            Unit::Fragment { lines, range } => {
                if let Some(second) = lines.get(head_lines).and_then(|l| l.first()) {
                    pieces.push(Piece::Text(ctx.src(&(second.range.start..range.end))));
                }
            }
        }
        Draft {
            head,
            at: u.start(),
            number,
            pieces,
            position,
        }
    }

    /// Adds a unit of the finding's body.
    fn push(&mut self, u: &Unit, ctx: &Ctx) {
        match u {
            Unit::Block(b) => pieces_of_block(b, ctx, &mut self.pieces),
            Unit::Item { item, list, .. } => {
                let marker = if list.ordered { "1. " } else { "- " };
                self.pieces
                    .push(Piece::Text(format!("{marker}{}", item_text(item, ctx))));
            }
            Unit::Fragment { range, .. } => self.pieces.push(Piece::Text(ctx.src(range))),
        }
    }
}

/// Reads a findings section one unit at a time (or, with `strict`, the preamble or an unknown
/// section, where only a line with a `(severity, category)` note starts a finding). A finding is
/// built when the next one starts, so only the finding being read is held.
pub(super) struct FindingsReader {
    sec_sev: Option<Severity>,
    strict: bool,
    /// How the first finding was written; later ones are written alike.
    style: Option<Style>,
    first_list: Option<u64>,
    last_number: Option<u64>,
    any_draft: bool,
    draft: Option<Draft>,
    /// The last finding came from a table row: what follows is not its body.
    after_rows: bool,
    position: usize,
}

impl FindingsReader {
    pub(super) fn new(sec_sev: Option<Severity>, strict: bool) -> Self {
        FindingsReader {
            sec_sev,
            strict,
            style: None,
            first_list: None,
            last_number: None,
            any_draft: false,
            draft: None,
            after_rows: false,
            position: 0,
        }
    }

    /// Reads one unit. Returns it when it belongs to no finding and the reader is strict (the
    /// caller keeps such text); a findings section keeps it in `unparsed` itself.
    pub(super) fn push<'a>(&mut self, u: Unit<'a>, ctx: &mut Ctx) -> Option<Unit<'a>> {
        // A table whose header names the finding columns holds one finding per row.
        if !self.strict
            && let Unit::Block(b) = &u
            && b.kind == BlockKind::Table
            && let Some(cols) = finding_columns(b)
        {
            self.build(ctx);
            for row in b
                .children
                .iter()
                .filter(|r| r.kind == (BlockKind::Row { head: false }))
            {
                self.position += 1;
                if ctx.full(row.range.start) {
                    continue;
                }
                let f = finding_from_row(row, &cols, self.sec_sev, self.position, ctx);
                ctx.review.findings.push(f);
            }
            self.after_rows = true;
            return None;
        }
        match self.starts(&u) {
            Some((head, head_lines, number)) => {
                if !self.any_draft {
                    self.any_draft = true;
                    self.style = style_of(&u);
                    if let Unit::Item { list, .. } = &u {
                        self.first_list = Some(list.id);
                    }
                }
                self.last_number = number;
                self.build(ctx);
                self.position += 1;
                self.after_rows = false;
                self.draft = Some(Draft::new(head, &u, head_lines, number, self.position, ctx));
                None
            }
            None => {
                if !self.after_rows
                    && let Some(d) = &mut self.draft
                {
                    d.push(&u, ctx);
                    return None;
                }
                if self.strict {
                    return Some(u);
                }
                let s = unit_src(&u, ctx);
                if !is_none_text(&s) {
                    ctx.keep_unparsed(
                        u.start(),
                        s,
                        "text in a findings section that is not a finding",
                    );
                }
                None
            }
        }
    }

    /// Whether a unit starts a finding: its head, the lines the head took and its number.
    fn starts(&self, u: &Unit) -> Option<(FindingHead, usize, Option<u64>)> {
        let st = style_of(u)?;
        let in_first_list =
            matches!(u, Unit::Item { list, .. } if Some(list.id) == self.first_list);
        // Once the first finding set the style, a unit written otherwise only continues a body:
        // its head is not worth reading.
        if !self.strict && self.any_draft && !in_first_list && Some(st) != self.style {
            return None;
        }
        let line = first_line(u)?;
        if strip_fix_label(&plain(&line)).is_some() {
            return None;
        }
        let mut h = parse_head(&line);
        let number = match u {
            Unit::Item { number, .. } => *number,
            _ => h.number,
        };
        let starts = if is_label(&h) && h.bold {
            false
        } else if st == Style::Para && !h.bold && h.id.is_none() {
            // A plain sentence is never a finding's first line, even with a
            // `(severity, category)` note at its end.
            false
        } else if self.strict {
            h.severity.is_some() && (h.bold || h.id.is_some())
        } else if !self.any_draft {
            matches!(u, Unit::Item { .. })
                || matches!(st, Style::Heading(_))
                || h.bold
                || h.id.is_some()
                || h.severity.is_some()
        } else if in_first_list {
            true
        } else if matches!(st, Style::Heading(_)) && Some(st) == self.style {
            // Findings written as headings: every heading of their level is one.
            true
        } else {
            Some(st) == self.style && looks_like_finding(&h, number, self.last_number)
        };
        if !starts {
            return None;
        }
        let head_lines = take_second_line(&mut h, u);
        Some((h, head_lines, number))
    }

    /// Builds the finding being read, if any.
    fn build(&mut self, ctx: &mut Ctx) {
        if let Some(d) = self.draft.take() {
            if ctx.full(d.at) {
                return;
            }
            let f = build_finding(d, self.sec_sev, ctx);
            ctx.review.findings.push(f);
        }
    }

    /// The end of the section: builds the last finding.
    pub(super) fn finish(&mut self, ctx: &mut Ctx) {
        self.build(ctx);
    }
}

/// `1. **Title**` with `` `a.go:3` (important, gap) `` on the next line: when the first line
/// names no place and no severity and the second holds only such notes, the head takes both.
/// Returns how many lines of the paragraph the head used.
fn take_second_line(h: &mut FindingHead, u: &Unit) -> usize {
    if !h.locations.is_empty() || h.severity.is_some() {
        return 1;
    }
    let Some(line) = second_line(u) else {
        return 1;
    };
    let text = plain(&line);
    if !crate::parse::head::only_notes(&text) {
        return 1;
    }
    let locs = crate::parse::head::locations_in_text(&text);
    let sev = crate::parse::head::find_severity(&text);
    if locs.is_empty() && sev.is_none() {
        return 1;
    }
    h.locations = locs;
    if let Some((s, c, _)) = sev {
        h.severity = Some(s);
        h.category = c;
    }
    2
}

/// Which columns of a findings table hold what.
#[derive(Debug, Clone, Default)]
pub(super) struct Columns {
    pub(super) id: Option<usize>,
    pub(super) title: usize,
    pub(super) severity: Option<usize>,
    pub(super) category: Option<usize>,
    pub(super) location: Option<usize>,
    pub(super) fix: Option<usize>,
    pub(super) detail: Option<usize>,
}

/// The columns of a table that lists findings (`| # | Severity | File | Issue |`): it needs a
/// title column and a severity or location column.
pub(super) fn finding_columns(table: &Block) -> Option<Columns> {
    let head = table
        .children
        .iter()
        .find(|r| r.kind == (BlockKind::Row { head: true }))?;
    let names: Vec<String> = head.children.iter().map(|c| norm(&c.plain())).collect();
    let find = |keys: &[&str]| names.iter().position(|n| keys.contains(&n.as_str()));
    let mut cols = Columns {
        id: find(&["#", "id", "no", "finding id"])
            .or_else(|| names.iter().position(|n| n.is_empty())),
        title: find(&["issue", "finding", "title", "problem", "summary", "what"])
            .or_else(|| find(&["description"]))?,
        severity: find(&["severity", "level", "priority", "sev"]),
        category: find(&["category", "type", "kind"]),
        location: find(&["file", "location", "path", "where", "lines", "file:line"]),
        fix: find(&["fix", "suggested fix", "recommendation", "suggestion"]),
        detail: None,
    };
    let d = find(&["description", "details", "explanation", "why", "impact"]);
    if d != Some(cols.title) {
        cols.detail = d;
    }
    (cols.severity.is_some() || cols.location.is_some()).then_some(cols)
}

pub(super) fn finding_from_row(
    row: &Block,
    cols: &Columns,
    sec_sev: Option<Severity>,
    position: usize,
    ctx: &mut Ctx,
) -> Finding {
    let cell = |i: Option<usize>| -> String {
        i.and_then(|i| row.children.get(i))
            .map(|c| c.plain().replace("**", "").trim().to_string())
            .unwrap_or_default()
    };
    let at = row.range.start;
    let mut f = Finding::new(String::new(), cell(Some(cols.title)));
    let sev_text = cell(cols.severity);
    f.severity = sev_text
        .split(|c: char| !c.is_alphanumeric())
        .find_map(|w| w.parse().ok())
        .or(sec_sev);
    let cat = cell(cols.category);
    if !cat.is_empty() {
        f.category = Some(cat.as_str().into());
    }
    f.locations = crate::parse::head::locations_in_text(&cell(cols.location));
    f.explanation = cell(cols.detail);
    let fix = cell(cols.fix);
    if !fix.is_empty() {
        f.fix = Some(fix);
    }
    let own = Some(cell(cols.id)).filter(|s| !s.is_empty());
    let own_num = own
        .as_deref()
        .and_then(|s| s.trim_start_matches('#').parse::<u64>().ok());
    let own_id = own.filter(|s| s.parse::<u64>().is_err() && !s.starts_with('#'));
    finish_finding(f, own_id, own_num, sec_sev, position, at, ctx)
}

pub(super) fn looks_like_finding(
    h: &FindingHead,
    number: Option<u64>,
    prev_number: Option<u64>,
) -> bool {
    if h.id.is_some() || h.severity.is_some() {
        return true;
    }
    if !h.bold {
        return false;
    }
    if !h.locations.is_empty() {
        return true;
    }
    if let (Some(n), Some(p)) = (number, prev_number)
        && n == p + 1
    {
        return true;
    }
    !h.colon_after_bold
}

/// One piece of a finding's body.
pub(super) enum Piece {
    Text(String),
    Code(Option<String>, String),
    Heading(String),
}

pub(super) fn pieces_of_block(b: &Block, ctx: &Ctx, out: &mut Vec<Piece>) {
    match &b.kind {
        BlockKind::Code { lang, text, .. } => out.push(Piece::Code(lang.clone(), text.clone())),
        BlockKind::Rule => {}
        BlockKind::Heading(_) => out.push(Piece::Heading(b.plain())),
        _ => out.push(Piece::Text(ctx.src(&b.range))),
    }
}

pub(super) fn is_diff(lang: &Option<String>, code: &str) -> bool {
    if let Some(l) = lang {
        return l.eq_ignore_ascii_case("diff") || l.eq_ignore_ascii_case("patch");
    }
    let mut changed = false;
    for l in code.lines().filter(|l| !l.is_empty()) {
        if l.starts_with("@@") || l.starts_with('+') || l.starts_with('-') {
            changed = true;
        } else if !l.starts_with(' ') {
            return false;
        }
    }
    changed
}

/// `**Severity:** important`, `Category: gap`, `Location: \`a.go:3\``: labelled lines some
/// reviewers write under a finding's title. They fill what the first line did not say and are
/// removed from the text. `known` holds the finding's locations once a field names one, so a
/// location many lines name is added once at the cost of one look-up each.
pub(super) fn take_fields(
    text: &str,
    f: &mut Finding,
    known: &mut Option<std::collections::HashSet<crate::types::Location>>,
) -> String {
    static FIELD_RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)^\s*(?:[-*]\s+)?\*{0,2}(severity|category|locations?|files?|where)\*{0,2}\s*:\s*\*{0,2}\s*(.*?)\s*$",
        )
        .unwrap()
    });
    if !text.contains(':') {
        return text.to_string();
    }
    let mut kept: Vec<&str> = Vec::new();
    for line in text.lines() {
        let Some(c) = FIELD_RE
            .is_match(line)
            .then(|| FIELD_RE.captures(line))
            .flatten()
        else {
            kept.push(line);
            continue;
        };
        let value = c[2].trim_matches('*').trim();
        let used = match c[1].to_ascii_lowercase().as_str() {
            "severity" => match value
                .split(|ch: char| !ch.is_alphanumeric())
                .find_map(|w| w.parse::<Severity>().ok())
            {
                Some(sev) => {
                    f.severity.get_or_insert(sev);
                    true
                }
                None => false,
            },
            "category" if !value.is_empty() => {
                if f.category.is_none() {
                    f.category = Some(value.trim_matches('`').into());
                }
                true
            }
            _ => {
                let locs = crate::parse::head::locations_in_text(value);
                let any = !locs.is_empty();
                let known = known.get_or_insert_with(|| f.locations.iter().cloned().collect());
                for l in locs {
                    if known.insert(l.clone()) {
                        f.locations.push(l);
                    }
                }
                any
            }
        };
        if !used {
            kept.push(line);
        }
    }
    kept.join("\n")
}

/// `Fix: text`, `**Fix:** text`, `Suggested fix — text`: the text after the label.
pub(super) fn strip_fix_label(s: &str) -> Option<String> {
    let t = s.trim_start();
    let unbold = t.trim_start_matches(['*', '_']);
    // Labels are short: lower-case only the start (ASCII, so byte offsets stay the same).
    let head_len = unbold
        .char_indices()
        .nth(24)
        .map(|(i, _)| i)
        .unwrap_or(unbold.len());
    let lower = unbold[..head_len].to_ascii_lowercase();
    for label in [
        "fix",
        "suggested fix",
        "proposed fix",
        "recommended fix",
        "remediation",
        "recommendation",
    ] {
        if let Some(after) = lower.strip_prefix(label) {
            let after_trim = after.trim_start_matches(['*', '_']);
            if after_trim.starts_with(':')
                || after_trim.starts_with(" —")
                || after_trim.starts_with(" -")
            {
                let cut = head_len - after_trim.len();
                let rest = unbold[cut..]
                    .trim_start_matches([':', ' ', '—', '-'])
                    .trim_start_matches(['*', '_'])
                    .trim_start_matches([':', ' '])
                    .trim();
                return Some(rest.to_string());
            }
        }
    }
    None
}

pub(super) fn fenced(lang: &Option<String>, code: &str) -> String {
    format!(
        "```{}\n{}```",
        lang.as_deref().unwrap_or(""),
        if code.ends_with('\n') {
            code.to_string()
        } else {
            format!("{code}\n")
        }
    )
}

pub(super) fn build_finding(d: Draft, sec_sev: Option<Severity>, ctx: &mut Ctx) -> Finding {
    let at = d.at;
    let position = d.position;
    let pieces = d.pieces;
    let head = d.head;
    let mut finding = Finding::new(String::new(), head.title.clone());
    finding.locations = head.locations.clone();
    finding.severity = head.severity;
    finding.category = head.category.clone();
    let mut expl: Vec<String> = Vec::new();
    let mut fix: Vec<String> = Vec::new();
    let mut diffs: Vec<String> = Vec::new();
    let mut seen_fix = false;
    let mut known = None;
    if !head.rest.is_empty() && !head.rest.starts_with('[') {
        expl.push(head.rest.clone());
    }
    for p in pieces {
        match p {
            Piece::Code(lang, code) => {
                if is_diff(&lang, &code) {
                    diffs.push(code);
                } else if !seen_fix && finding.code.is_none() {
                    finding.code = Some(CodeSnippet {
                        language: lang,
                        code,
                    });
                } else if seen_fix {
                    fix.push(fenced(&lang, &code));
                } else {
                    expl.push(fenced(&lang, &code));
                }
            }
            Piece::Text(s) => {
                let s = if seen_fix {
                    s
                } else {
                    take_fields(&s, &mut finding, &mut known)
                };
                if let Some(rest) = strip_fix_label(&s) {
                    seen_fix = true;
                    if !rest.is_empty() {
                        fix.push(rest);
                    }
                } else if seen_fix {
                    fix.push(s);
                } else {
                    expl.push(s);
                }
            }
            Piece::Heading(h) => {
                if strip_fix_label(&format!("{h}:")).is_some_and(|r| r.is_empty()) {
                    seen_fix = true;
                } else if seen_fix {
                    fix.push(h);
                } else {
                    expl.push(h);
                }
            }
        }
    }
    if finding.severity.is_none() {
        take_trailing_severity(&mut finding, &mut fix, &mut expl);
    }
    expl.retain(|s| !s.trim().is_empty());
    fix.retain(|s| !s.trim().is_empty());
    finding.explanation = expl.join("\n\n");
    if !fix.is_empty() {
        finding.fix = Some(fix.join("\n\n"));
    }
    if !diffs.is_empty() {
        finding.fix_diff = Some(diffs.join("\n"));
    }
    if finding.severity.is_none() {
        finding.severity = sec_sev;
    }

    finish_finding(
        finding,
        head.id.clone(),
        d.number,
        sec_sev,
        position,
        at,
        ctx,
    )
}

/// A severity note written after the body (`... (important, gap)`), from the last part back:
/// it becomes the finding's severity (and category, when none was given) and leaves the text.
fn take_trailing_severity(finding: &mut Finding, fix: &mut [String], expl: &mut [String]) {
    for part in fix.iter_mut().rev().chain(expl.iter_mut().rev()) {
        if let Some((sev, cat, range)) = find_trailing_severity(part) {
            finding.severity = Some(sev);
            if finding.category.is_none() {
                finding.category = cat;
            }
            let mut t = part.trim_end().trim_end_matches('.').trim_end().to_string();
            if range.end <= t.len() {
                t.replace_range(range, "");
            }
            *part = t.trim().to_string();
            break;
        }
    }
}

/// Gives a finding its id (the reviewer's own, else section letter + number or position;
/// unique in the review) and warns about what it lacks.
pub(super) fn finish_finding(
    mut finding: Finding,
    own_id: Option<String>,
    number: Option<u64>,
    sec_sev: Option<Severity>,
    position: usize,
    at: usize,
    ctx: &mut Ctx,
) -> Finding {
    let letter = sec_sev
        .or(finding.severity)
        .map(Severity::id_prefix)
        .unwrap_or('F');
    let wanted = match (own_id, number) {
        (Some(own), _) => Some(own),
        (None, Some(n)) => Some(format!("{letter}{n}")),
        (None, None) => None,
    };
    let id = match wanted {
        Some(original) => {
            let (id, repeated) = ctx.ids.unique(&original);
            if repeated {
                ctx.warn(
                    at,
                    format!("finding id {original} is used twice; this one is {id}"),
                );
            }
            id
        }
        // Unnumbered: the next free number of the section's letter from its position.
        None => ctx.ids.numbered(letter, position as u64),
    };
    finding.id = id;
    if let Some(message) = crate::parse::cap_locations(&mut finding) {
        ctx.warn(at, message);
    }

    if finding.severity.is_none() {
        ctx.warn(
            at,
            format!(
                "finding {} has no severity: no `(severity, category)` note and no \
                 severity section",
                finding.id
            ),
        );
    }
    if finding.title.trim().is_empty() {
        ctx.warn(at, format!("finding {} has no title", finding.id));
    }
    if finding.explanation.is_empty()
        && finding.code.is_none()
        && finding.fix.is_none()
        && finding.fix_diff.is_none()
    {
        ctx.warn(
            at,
            format!("finding {} has a title but no body", finding.id),
        );
    }
    finding
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fix_label_forms() {
        assert_eq!(strip_fix_label("Fix: do x").as_deref(), Some("do x"));
        assert_eq!(strip_fix_label("**Fix:** do x").as_deref(), Some("do x"));
        assert_eq!(strip_fix_label("**Fix**: do x").as_deref(), Some("do x"));
        assert_eq!(strip_fix_label("Fix:").as_deref(), Some(""));
        assert_eq!(strip_fix_label("Fixing this is hard"), None);
    }
}
