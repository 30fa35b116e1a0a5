//! Reading the sections around the findings: preamble, verdict, design observations, testing,
//! documentation, limitations and coverage.

use super::findings::*;
use super::sections::*;
use super::*;

/// A unit of the text before the first section (or of an unknown section) that starts no
/// finding: a `**Verdict**:` line is the verdict; other text is kept with its offset.
pub(super) fn keep_preamble(u: Unit, ctx: &mut Ctx, preamble: &mut Vec<(usize, String)>) {
    if let Unit::Block(b) = &u
        && b.kind == BlockKind::Paragraph
        && let Some(v) = verdict_line(b)
    {
        ctx.review.verdict = Some(v);
        return;
    }
    let s = unit_src(&u, ctx);
    if !s.trim().is_empty() {
        preamble.push((u.start(), s));
    }
}

/// `**Verdict**: X`, `**Verdict:** X` or `Verdict: X` as a paragraph of its own.
fn verdict_line(b: &Block) -> Option<String> {
    let lines = b.lines();
    let first = lines.first()?;
    if let Some((bold, after, _)) = bold_lead(first)
        && norm(&bold) == "verdict"
    {
        let v = strip_sep(&after);
        return Some(clean_verdict(if v.is_empty() {
            bold.split_once(':').map(|(_, r)| r).unwrap_or("")
        } else {
            v
        }));
    }
    let text = plain(first);
    let rest = text
        .strip_prefix("Verdict:")
        .or_else(|| text.strip_prefix("VERDICT:"))?;
    (lines.len() == 1).then(|| clean_verdict(rest))
}

/// Reads design observations (concerns or strengths) one unit at a time.
pub(super) struct ObservationsReader {
    kind: ObservationKind,
    obs: Vec<Observation>,
    /// The last observation has a title and no text yet: the next paragraph is its text.
    open_title_only: bool,
}

impl ObservationsReader {
    pub(super) fn new(kind: ObservationKind) -> Self {
        ObservationsReader {
            kind,
            obs: Vec::new(),
            open_title_only: false,
        }
    }

    pub(super) fn finish(self) -> Vec<Observation> {
        self.obs
    }

    pub(super) fn push(&mut self, u: &Unit, ctx: &mut Ctx) {
        let kind = self.kind;
        let obs = &mut self.obs;
        let open_title_only = &mut self.open_title_only;
        let src = unit_src(u, ctx);
        if is_none_text(&src) {
            return;
        }
        match u {
            Unit::Item { item, .. } => {
                let head = first_line(u).map(|l| parse_head(&l)).unwrap_or_default();
                let mut text = if head.bold {
                    head.rest_full.clone()
                } else {
                    strip_scopes(&first_line(u).map(|l| plain(&l)).unwrap_or_default())
                        .trim()
                        .to_string()
                };
                let mut children = item.children.iter();
                if let Some(p) = item.first_paragraph() {
                    children.next();
                    if let Some(s) = rest_lines_src(p, ctx) {
                        push_line(&mut text, &s);
                    }
                }
                for c in children {
                    push_line(&mut text, &ctx.src(&c.range));
                }
                *open_title_only = text.is_empty();
                obs.push(Observation {
                    kind,
                    title: head.bold.then(|| head.title.clone()),
                    text,
                    scopes: head.scopes.clone(),
                });
            }
            Unit::Block(b) if matches!(b.kind, BlockKind::Heading(_)) => {
                let head = first_line(u).map(|l| parse_head(&l)).unwrap_or_default();
                obs.push(Observation {
                    kind,
                    title: Some(head.title.clone()),
                    text: String::new(),
                    scopes: head.scopes.clone(),
                });
                *open_title_only = true;
            }
            Unit::Block(b) if !matches!(b.kind, BlockKind::Paragraph) => {
                // Code, tables, quotes: part of the observation before them.
                match obs.last_mut() {
                    Some(o) => push_line(&mut o.text, &src),
                    None => obs.push(Observation {
                        kind,
                        title: None,
                        text: src,
                        scopes: Vec::new(),
                    }),
                }
            }
            _ => {
                let line = first_line(u).unwrap_or_default();
                let head = parse_head(&line);
                let rest_src = match u {
                    Unit::Block(b) => rest_lines_src(b, ctx),
                    Unit::Fragment { lines, range } => lines
                        .get(1)
                        .and_then(|l| l.first())
                        .map(|i| ctx.src(&(i.range.start..range.end))),
                    _ => None,
                };
                if head.bold && !is_label(&head) {
                    let mut text = head.rest_full.clone();
                    if let Some(r) = rest_src {
                        push_line(&mut text, &r);
                    }
                    *open_title_only = text.is_empty();
                    obs.push(Observation {
                        kind,
                        title: Some(head.title.clone()),
                        text,
                        scopes: head.scopes.clone(),
                    });
                } else if *open_title_only && let Some(o) = obs.last_mut() {
                    o.text = src;
                    for s in find_scopes(&plain(&line)) {
                        if !o.scopes.contains(&s) {
                            o.scopes.push(s);
                        }
                    }
                    *open_title_only = false;
                } else {
                    obs.push(Observation {
                        kind,
                        title: None,
                        text: src.clone(),
                        scopes: find_scopes(&plain(&line)),
                    });
                }
            }
        }
    }
}

/// Reads a testing assessment one unit at a time. Paragraphs are the summary; list items are
/// the gaps. When there are several lists, the gaps are the lists introduced as untested or
/// ranked by risk, which only the end of the section tells.
#[derive(Default)]
pub(super) struct TestingReader {
    /// Consecutive items of one list, with the paragraph before them.
    groups: Vec<(Option<String>, Vec<String>)>,
    summary: Vec<String>,
    last_para: Option<String>,
    last_list: Option<u64>,
}

impl TestingReader {
    pub(super) fn push(&mut self, u: &Unit, ctx: &mut Ctx) {
        match u {
            Unit::Item { item, list, .. } => {
                let t = item_text(item, ctx);
                if self.last_list == Some(list.id)
                    && let Some(g) = self.groups.last_mut()
                {
                    g.1.push(t);
                } else {
                    self.groups.push((self.last_para.clone(), vec![t]));
                    self.last_list = Some(list.id);
                }
            }
            _ => {
                let s = unit_src(u, ctx);
                if is_none_text(&s) {
                    return;
                }
                self.last_list = None;
                self.last_para = Some(s.clone());
                self.summary.push(s);
            }
        }
    }

    pub(super) fn finish(self, ctx: &mut Ctx) {
        let TestingReader {
            groups,
            mut summary,
            ..
        } = self;
        let gap_words = [
            "untested",
            "gap",
            "missing",
            "not tested",
            "ranked",
            "risk",
            "uncovered",
        ];
        let is_gap_intro = |p: &Option<String>| {
            p.as_ref().is_some_and(|p| {
                let l = p.to_lowercase();
                gap_words.iter().any(|w| l.contains(w))
            })
        };
        let use_filter = groups.len() > 1 && groups.iter().any(|g| is_gap_intro(&g.0));
        for (intro, items) in groups {
            if !use_filter || is_gap_intro(&intro) {
                ctx.review.testing.gaps.extend(items);
            } else {
                summary.push(
                    items
                        .iter()
                        .map(|i| format!("- {i}"))
                        .collect::<Vec<_>>()
                        .join("\n"),
                );
            }
        }
        for s in summary {
            push_para(&mut ctx.review.testing.summary, &s);
        }
    }
}

/// Reads one unit of a coverage summary: a table, bullets or lines of `path — status`.
pub(super) fn read_coverage(u: &Unit, ctx: &mut Ctx) {
    {
        match u {
            Unit::Block(b) if b.kind == BlockKind::Table => {
                for row in &b.children {
                    if row.kind == (BlockKind::Row { head: true }) {
                        continue;
                    }
                    let cells: Vec<String> = row
                        .children
                        .iter()
                        .map(|c| {
                            c.lines()
                                .iter()
                                .map(|l| plain(l))
                                .collect::<Vec<_>>()
                                .join(" ")
                        })
                        .collect();
                    let Some(path) = cells.first() else { continue };
                    let path = path.trim().trim_matches('`').trim().to_string();
                    if path.is_empty() {
                        continue;
                    }
                    let status = cells.get(1..).map(|c| c.join(" | ")).unwrap_or_default();
                    ctx.review.coverage.push(CoverageEntry {
                        path,
                        status: status.trim().to_string(),
                    });
                }
            }
            Unit::Item { item, .. } => {
                let entry = item
                    .first_paragraph()
                    .and_then(|p| p.lines().first().and_then(|l| coverage_line(l)));
                match entry {
                    Some(e) => ctx.review.coverage.push(e),
                    None => {
                        let s = item_text(item, ctx);
                        if !is_none_text(&s) {
                            ctx.keep_unparsed(u.start(), s, "coverage entry that names no file");
                        }
                    }
                }
            }
            _ => {
                let s = unit_src(u, ctx);
                if is_none_text(&s) {
                    return;
                }
                let mut any = false;
                if let Unit::Block(b) = u
                    && b.kind == BlockKind::Paragraph
                {
                    for l in b.lines() {
                        if let Some(e) = coverage_line(&l)
                            && l.first().is_some_and(|i| i.kind == InlineKind::Code)
                        {
                            ctx.review.coverage.push(e);
                            any = true;
                        }
                    }
                }
                if !any {
                    ctx.keep_unparsed(u.start(), s, "coverage text that names no file");
                }
            }
        }
    }
}

/// `` `path` — status ``, `` `path`: status ``, `path - status`.
pub(super) fn coverage_line(line: &[&Inline]) -> Option<CoverageEntry> {
    let first = line
        .iter()
        .find(|i| !(i.kind == InlineKind::Text && i.text.trim().is_empty()))?;
    let (path, rest) = if first.kind == InlineKind::Code {
        let idx = line.iter().position(|i| std::ptr::eq(*i, *first))?;
        (first.text.to_string(), plain(&line[idx + 1..]))
    } else {
        let p = plain(line);
        let cut = [" — ", " – ", " - ", ": "]
            .iter()
            .filter_map(|s| p.find(s).map(|i| (i, s.len())))
            .min()?;
        (p[..cut.0].to_string(), p[cut.0..].to_string())
    };
    let path = path.trim().trim_matches('*').trim().to_string();
    if path.is_empty() {
        return None;
    }
    let status = strip_sep(&rest).replace("**", "").trim().to_string();
    Some(CoverageEntry { path, status })
}
