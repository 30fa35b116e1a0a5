//! The parts of a report that record rounds: the `## Resolution` section the author appends
//! after acting on a report, and a later round's "Declined in prior rounds" list.
//!
//! The Resolution section of the reference reports:
//!
//! ```markdown
//! ## Resolution
//!
//! | | |
//! |---|---|
//! | **Addressed** | 2026-05-21 |
//! | **Commit** | `76d5a8b Document ...` + `503413d Set ...` (folded into the PR commit) |
//!
//! | # | Finding | Action | Reason |
//! |---|---------|--------|--------|
//! | 1 | Suggestion #1: Document the new `KubernetesReady` reason | Documentation updated | |
//! | 8 | Testing Gap #3: `probeCurrentKubeContext` error paths | Skipped | Six error paths ... |
//! ```
//!
//! Every cell is text from a report that may have been edited by hand: nothing here fails, a
//! row that cannot be read is skipped and named in a warning.

use crate::types::{Action, CommitInfo, PriorItem, Resolution, ResolutionItem};

/// The words a Resolution table uses for a finding's kind, and the letter of its id.
const KINDS: &[(&str, char)] = &[
    ("critical issue", 'C'),
    ("critical", 'C'),
    ("important issue", 'I'),
    ("important", 'I'),
    ("suggestion", 'S'),
    ("testing gap", 'T'),
    ("testing", 'T'),
    ("unverified", 'U'),
    ("low confidence", 'L'),
];

/// The Resolution section of a report's text outside `appendix` (the raw reviews, whose text is
/// never the report's structure), with warnings for rows that could not be read. The appendix's
/// heading stays (it ends a section before it); its reviews read as blank lines, so line
/// numbers stay those of the report.
pub fn parse_resolution_outside(
    text: &str,
    appendix: Option<std::ops::Range<usize>>,
) -> (Option<Resolution>, Vec<String>) {
    let Some(span) = appendix.filter(|s| s.start < s.end && s.end <= text.len()) else {
        return parse_resolution(text);
    };
    let heading_end = text[span.clone()]
        .find('\n')
        .map_or(span.end, |i| span.start + i + 1);
    let blanked: String = text[heading_end..span.end]
        .bytes()
        .filter(|b| *b == b'\n')
        .map(|_| '\n')
        .collect();
    parse_resolution(&format!(
        "{}{blanked}{}",
        &text[..heading_end],
        &text[span.end..]
    ))
}

/// The Resolution section of a report's text, if it has one (the last one wins), with warnings
/// for rows that could not be read.
pub fn parse_resolution(text: &str) -> (Option<Resolution>, Vec<String>) {
    let mut warnings = Vec::new();
    let Some(section) = section_lines(text, |l| heading_is(l, 2, "resolution")) else {
        return (None, warnings);
    };
    let mut res = Resolution::default();
    for (line_no, line) in section {
        let Some(cells) = table_cells(line) else {
            continue;
        };
        if cells.iter().all(|c| is_rule_cell(c)) {
            continue;
        }
        let key = cells[0].trim_matches('*').trim().to_ascii_lowercase();
        match key.as_str() {
            "addressed" if cells.len() >= 2 => {
                res.addressed = parse_day(&cells[1]);
            }
            "commit" | "commits" if cells.len() >= 2 => {
                let (commits, note) = parse_commit_cell(&cells[1]);
                res.commits = commits;
                res.commit_note = note;
            }
            "#" | "" if cells.len() >= 3 => {} // the header rows
            _ if cells.len() >= 3 => match parse_item(&cells) {
                Some(item) => res.items.push(item),
                None => warnings.push(format!(
                    "line {line_no}: Resolution row {:?} names no finding or action",
                    line.trim()
                )),
            },
            _ => {}
        }
    }
    (Some(res), warnings)
}

/// The "Declined in prior rounds" list of a later round's report: one bullet per declined
/// finding, `- **Title** — declined Round 1 (S4): reason.`
pub fn parse_declined(text: &str) -> Vec<PriorItem> {
    let Some(section) = section_lines(text, |l| {
        let t = l.trim_start_matches('#').trim().to_ascii_lowercase();
        l.starts_with('#') && t.starts_with("declined in prior round")
    }) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (_, line) in section {
        let Some(item) = line.trim_start().strip_prefix("- ") else {
            continue;
        };
        if let Some(p) = parse_declined_item(item) {
            out.push(p);
        }
    }
    out
}

fn parse_declined_item(item: &str) -> Option<PriorItem> {
    let item = item.trim();
    let (title, rest) = match item.strip_prefix("**") {
        Some(r) => {
            let (t, rest) = r.split_once("**")?;
            (t.trim().to_string(), rest)
        }
        None => {
            let (t, rest) = item.split_once(" — ")?;
            (t.trim().to_string(), rest)
        }
    };
    let rest = rest.trim().trim_start_matches(['—', '–', '-', ':']).trim();
    let lower = rest.to_ascii_lowercase();
    let at = lower.find("round")?;
    let after = &rest[at + "round".len()..];
    let digits: String = after
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let round: u32 = digits.parse().ok()?;
    let after = after.trim_start()[digits.len()..].trim_start();
    let (id, after) = match after.strip_prefix('(').and_then(|r| r.split_once(')')) {
        Some((id, rest)) if is_finding_id(id.trim()) => (id.trim().to_string(), rest),
        _ => (String::new(), after),
    };
    let reason = after
        .trim_start()
        .trim_start_matches([':', '—', '–', '-'])
        .trim()
        .to_string();
    Some(PriorItem {
        round,
        id,
        title,
        reason,
        action: Some(Action::Skipped),
        fingerprint: None,
        now: None,
        raised_again: Vec::new(),
    })
}

/// `C1`, `I12`, `T3`: a letter and a number.
pub fn is_finding_id(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && s.len() >= 2
        && chars.all(|c| c.is_ascii_digit())
}

/// A Resolution row: `| 4 | Suggestion #4: title | Skipped | reason |` (the number column may be
/// missing).
fn parse_item(cells: &[String]) -> Option<ResolutionItem> {
    let cells: Vec<&str> = if cells[0].trim().chars().all(|c| c.is_ascii_digit()) {
        cells[1..].iter().map(String::as_str).collect()
    } else {
        cells.iter().map(String::as_str).collect()
    };
    if cells.len() < 2 {
        return None;
    }
    // A row that names its finding by title alone (`| 1 | Token check | Fixed |`) is matched by
    // title, as the reference reports' hand-written tables sometimes are.
    let (id, title) = parse_finding_cell(cells[0]).or_else(|| {
        let title = cells[0].trim().trim_matches('*').trim();
        (!title.is_empty()).then(|| (String::new(), title.to_string()))
    })?;
    let action: Action = Action::from(cells[1].trim().to_string());
    if action.as_str().is_empty() {
        return None;
    }
    let reason = cells
        .get(2)
        .map(|r| r.trim().to_string())
        .unwrap_or_default();
    Some(ResolutionItem {
        id,
        title,
        action,
        reason,
    })
}

/// `Suggestion #4: title`, `Testing Gap #3: title`, `S4: title`, `S4 — title` → (`S4`, title).
pub fn parse_finding_cell(cell: &str) -> Option<(String, String)> {
    let cell = cell.trim();
    let lower = cell.to_ascii_lowercase();
    for (word, letter) in KINDS {
        if let Some(rest) = lower.strip_prefix(word) {
            let rest_orig = &cell[word.len()..];
            let t = rest.trim_start().trim_start_matches('#');
            let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
            if digits.is_empty() {
                continue;
            }
            let skip = rest_orig.len() - t.len() + digits.len();
            let title = rest_orig[skip..]
                .trim()
                .trim_start_matches([':', '—', '–', '-', '.'])
                .trim();
            return Some((format!("{letter}{digits}"), title.to_string()));
        }
    }
    let (id, rest) = cell.split_once([':', ' ', '.']).unwrap_or((cell, ""));
    let id = id.trim().trim_matches('*');
    if is_finding_id(id) {
        let title = rest.trim().trim_start_matches([':', '—', '–', '-']).trim();
        return Some((id.to_ascii_uppercase(), title.to_string()));
    }
    None
}

/// `` `76d5a8b Document X` + `503413d Set Y` (note) `` → the commits and the note: the text
/// after the last commit, without its parentheses.
pub fn parse_commit_cell(cell: &str) -> (Vec<CommitInfo>, Option<String>) {
    let mut commits = Vec::new();
    let mut note_from = 0;
    let mut at = 0;
    // Backtick spans: every other `-separated part.
    while let Some(open) = cell[at..].find('`').map(|i| at + i) {
        let Some(close) = cell[open + 1..].find('`').map(|i| open + 1 + i) else {
            break;
        };
        let span = cell[open + 1..close].trim();
        let between = cell[note_from..open].trim();
        let (sha, subject) = span.split_once(' ').unwrap_or((span, ""));
        let is_commit = sha.len() >= 4 && sha.chars().all(|c| c.is_ascii_hexdigit());
        // A commit counts only while nothing but `+` separators stands between commits.
        if is_commit && (commits.is_empty() || between.trim_matches('+').trim().is_empty()) {
            commits.push(CommitInfo {
                sha: sha.to_string(),
                subject: subject.trim().to_string(),
            });
            note_from = close + 1;
        }
        at = close + 1;
    }
    let note = cell[note_from..].trim().trim_start_matches('+').trim();
    let note = note
        .strip_prefix('(')
        .and_then(|n| n.strip_suffix(')'))
        .unwrap_or(note)
        .trim();
    (commits, Some(note.to_string()).filter(|n| !n.is_empty()))
}

fn parse_day(cell: &str) -> Option<chrono::NaiveDate> {
    let t = cell.trim().trim_matches('`').trim();
    let t = t.get(..10).unwrap_or(t);
    chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d").ok()
}

/// `| a | b |` → its cells (trimmed; `\|` kept as `|`), or `None` for a line that is not a row.
fn table_cells(line: &str) -> Option<Vec<String>> {
    let l = line.trim();
    let inner = l.strip_prefix('|')?;
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '|' => cells.push(std::mem::take(&mut cur).trim().to_string()),
            c => cur.push(c),
        }
    }
    cells.push(cur.trim().to_string());
    Some(cells)
}

fn is_rule_cell(c: &str) -> bool {
    !c.is_empty() && c.chars().all(|x| matches!(x, '-' | ':' | ' '))
}

/// `## Resolution` at level `level` or above (any `#` count up to it).
fn heading_is(line: &str, level: usize, word: &str) -> bool {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    (1..=level).contains(&hashes)
        && line[hashes..].starts_with(' ')
        && line[hashes..].trim().to_ascii_lowercase().starts_with(word)
}

/// The lines (numbered from 1) after the last heading line that `is_start` accepts, up to the
/// next heading of the same or a higher level, outside code fences.
fn section_lines(text: &str, is_start: impl Fn(&str) -> bool) -> Option<Vec<(usize, &str)>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut in_fence = false;
    let mut start: Option<(usize, usize)> = None;
    let mut fenced = vec![false; lines.len()];
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            fenced[i] = true;
            continue;
        }
        fenced[i] = in_fence;
        if !in_fence && is_start(line) {
            start = Some((i, line.chars().take_while(|c| *c == '#').count()));
        }
    }
    let (at, level) = start?;
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(at + 1) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if !fenced[i] && hashes >= 1 && hashes <= level.max(1) && line[hashes..].starts_with(' ') {
            break;
        }
        out.push((i + 1, *line));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECTION: &str = "## Appendix\n\n### [Claude]\n\n## Resolution\n\n| | |\n|---|---|\n\
        | **Addressed** | 2026-05-21 |\n\
        | **Commit** | `76d5a8b Document reasons` + `503413d Set False` (S3 folded via `git commit --fixup` + `git rebase`) |\n\n\
        | # | Finding | Action | Reason |\n|---|---------|--------|--------|\n\
        | 1 | Suggestion #1: Document the new `KubernetesReady` reason | Documentation updated | |\n\
        | 4 | Suggestion #4: `WatchEventLogger` lacks nil guards | Skipped | Cannot happen; YAGNI |\n\
        | 8 | Testing Gap #3: `probe` error paths | Skipped | Cost outweighs value |\n\
        | 9 | I2: A \\| pipe | Fixed | |\n";

    #[test]
    fn reads_the_reference_resolution_table() {
        let (res, warnings) = parse_resolution(SECTION);
        let res = res.unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(res.addressed.unwrap().to_string(), "2026-05-21");
        assert_eq!(res.commits.len(), 2);
        assert_eq!(res.commits[0].sha, "76d5a8b");
        assert_eq!(res.commits[1].subject, "Set False");
        assert_eq!(
            res.commit_note.as_deref(),
            Some("S3 folded via `git commit --fixup` + `git rebase`")
        );
        let ids: Vec<(&str, &str)> = res
            .items
            .iter()
            .map(|i| (i.id.as_str(), i.action.as_str()))
            .collect();
        assert_eq!(
            ids,
            [
                ("S1", "Documentation updated"),
                ("S4", "Skipped"),
                ("T3", "Skipped"),
                ("I2", "Fixed")
            ]
        );
        assert_eq!(res.items[1].title, "`WatchEventLogger` lacks nil guards");
        assert_eq!(res.items[1].reason, "Cannot happen; YAGNI");
        assert_eq!(res.items[3].title, "A | pipe");
    }

    #[test]
    fn no_section_no_resolution_and_code_fences_are_not_sections() {
        assert_eq!(parse_resolution("# Report\n\nNone.\n").0, None);
        let fenced = "```\n## Resolution\n| 1 | S1: x | Fixed | |\n```\n";
        assert_eq!(parse_resolution(fenced).0, None);
    }

    #[test]
    fn reads_declined_lists_of_both_layouts() {
        let text = "### Declined in prior rounds\n\n\
            - **WatchEventLogger nil-object guards** — declined Round 1: cache-driven watch \
              source never delivers nil events.\n\
            - **Retry loop** — declined Round 2 (S3): by design.\n\n## Agent Performance Retro\n\n- not this\n";
        let items = parse_declined(text);
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].title, "WatchEventLogger nil-object guards");
        assert_eq!(items[0].round, 1);
        assert_eq!(items[0].id, "");
        assert!(items[0].reason.starts_with("cache-driven"));
        assert_eq!((items[1].round, items[1].id.as_str()), (2, "S3"));
        assert_eq!(items[1].reason, "by design.");
    }
}
