//! Reading the sections around the findings: preamble, verdict, design observations, testing,
//! documentation, limitations and coverage.

use super::findings::*;
use super::sections::*;
use super::*;

/// Text before the first section (and the text of unknown sections): findings written with no
/// section around them still count when their first line carries a `(severity, category)`
/// note; a `**Verdict**:` line is the verdict; the rest is handed back to the caller.
pub(super) fn read_preamble(chunk: &Chunk, ctx: &mut Ctx, preamble: &mut Vec<(usize, String)>) {
    // Units from the first finding on were consumed by it; keep the ones before.
    let first_start = read_findings(chunk, None, true, ctx).unwrap_or(usize::MAX);
    for u in &chunk.units {
        if u.start() >= first_start {
            break;
        }
        let s = unit_src(u, ctx);
        if let Unit::Block(b) = u
            && b.kind == BlockKind::Paragraph
            && let Some(v) = verdict_line(b)
        {
            ctx.review.verdict = Some(v);
            continue;
        }
        if !s.trim().is_empty() {
            preamble.push((u.start(), s));
        }
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

pub(super) fn read_verdict(chunk: &Chunk, ctx: &mut Ctx) {
    let mut units = chunk.units.iter();
    if let Some(u) = units.next() {
        let s = unit_src(u, ctx);
        ctx.review.verdict = Some(clean_verdict(&s.replace("**", "")));
    }
    for u in units {
        let s = unit_src(u, ctx);
        ctx.keep_unparsed(u.start(), s, "text after the verdict");
    }
}

pub(super) fn read_observations(chunk: &Chunk, kind: ObservationKind, ctx: &mut Ctx) {
    let mut obs: Vec<Observation> = Vec::new();
    let mut open_title_only = false;
    for u in &chunk.units {
        let src = unit_src(u, ctx);
        if is_none_text(&src) {
            continue;
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
                open_title_only = text.is_empty();
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
                open_title_only = true;
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
                    open_title_only = text.is_empty();
                    obs.push(Observation {
                        kind,
                        title: Some(head.title.clone()),
                        text,
                        scopes: head.scopes.clone(),
                    });
                } else if open_title_only && let Some(o) = obs.last_mut() {
                    o.text = src;
                    for s in find_scopes(&plain(&line)) {
                        if !o.scopes.contains(&s) {
                            o.scopes.push(s);
                        }
                    }
                    open_title_only = false;
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
    ctx.review.observations.extend(obs);
}

/// Paragraphs are the summary; list items are the gaps. When there are several lists, the
/// gaps are the lists introduced as untested or ranked by risk.
pub(super) fn read_testing(chunk: &Chunk, ctx: &mut Ctx) {
    // Group consecutive items of one list.
    let mut groups: Vec<(Option<String>, Vec<String>)> = Vec::new();
    let mut summary: Vec<String> = Vec::new();
    let mut last_para: Option<String> = None;
    let mut last_list: Option<*const Block> = None;
    for u in &chunk.units {
        match u {
            Unit::Item { item, list, .. } => {
                let t = item_text(item, ctx);
                if last_list == Some(*list as *const Block)
                    && let Some(g) = groups.last_mut()
                {
                    g.1.push(t);
                } else {
                    groups.push((last_para.clone(), vec![t]));
                    last_list = Some(*list as *const Block);
                }
            }
            _ => {
                let s = unit_src(u, ctx);
                if is_none_text(&s) {
                    continue;
                }
                last_list = None;
                last_para = Some(s.clone());
                summary.push(s);
            }
        }
    }
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

/// One entry per list item or paragraph; `None.` adds nothing.
pub(super) fn entries(chunk: &Chunk, ctx: &Ctx) -> Vec<String> {
    chunk
        .units
        .iter()
        .map(|u| unit_src(u, ctx))
        .filter(|s| !s.trim().is_empty() && !is_none_text(s))
        .collect()
}

pub(super) fn read_coverage(chunk: &Chunk, ctx: &mut Ctx) {
    for u in &chunk.units {
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
                    continue;
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
        (first.text.clone(), plain(&line[idx + 1..]))
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
