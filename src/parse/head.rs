//! The first line of a finding or observation: id, bold title, locations, `(severity, category)`
//! and scope tags. Reviewers write this line in many shapes:
//!
//! ```text
//! 1. **Title** — `path:12-20` (important, regression)
//! **S1. Title** — `a.go:3`, `b.go:7` `(suggestion, gap)`
//! S1. **Title** — `kube.go:76-80`, `355-374`
//! **S1.** Title — `a.go:3`
//! - **Title** *(future)* [Agent]
//! ```

use std::sync::LazyLock;

use regex::Regex;

use super::blocks::{Inline, InlineKind, plain};
use crate::types::{Category, Location, Severity};

/// What the first line of a finding says.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FindingHead {
    /// The reviewer's own id (`S1`, `I2`, `C1`), when written.
    pub id: Option<String>,
    /// A plain number leading the line (`1. Title` in a heading or paragraph).
    pub number: Option<u64>,
    pub title: String,
    /// Whether the title came from a bold lead.
    pub bold: bool,
    /// The text right after the bold lead starts with a colon (`**Label**: text`).
    pub colon_after_bold: bool,
    pub locations: Vec<Location>,
    pub severity: Option<Severity>,
    pub category: Option<Category>,
    pub scopes: Vec<String>,
    /// The line after the title, with locations, severity and scopes removed.
    pub rest: String,
    /// The line after the title with only severity and scope notes removed.
    pub rest_full: String,
}

static ID_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*([A-Z]{1,3}-?\d{1,4})(?:[.:)]|\s*$)\s*").unwrap());

static SEV_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"`?\(\s*([A-Za-z]+)\s*(?:[,/;|—–]\s*([A-Za-z][A-Za-z -]*?)\s*)?\)`?").unwrap()
});

static SCOPE_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)[*_`]*\(\s*(in[- ]scope|future|pre[- ]existing|persistent|out[- ]of[- ]scope|follow[- ]up)\s*\)[*_`]*",
    )
    .unwrap()
});

static PLAIN_LOC_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[\s(])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z0-9]{1,8}(?::\d+(?:[-–]\d+)?(?:,\s*\d+(?:[-–]\d+)?)*)?)").unwrap()
});

static RANGE_ONLY_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\d+(?:[-–]\d+)?$").unwrap());

/// Finds a `(severity, category)` note in text: the severity word must be one
/// [`Severity::from_str`] knows, so `(e.g., ...)` and `(see above)` never match.
/// Returns the severity, category and the byte range of the note.
pub(crate) fn find_severity(
    text: &str,
) -> Option<(Severity, Option<Category>, std::ops::Range<usize>)> {
    SEV_RE.captures_iter(text).find_map(|c| {
        let sev: Severity = c.get(1)?.as_str().parse().ok()?;
        let cat = c.get(2).map(|m| Category::from(m.as_str()));
        let m = c.get(0)?;
        Some((sev, cat, m.range()))
    })
}

/// Finds a severity note that ends a paragraph (`... (important, gap)`), the way some
/// reviewers write it after the body instead of on the first line.
pub(crate) fn find_trailing_severity(
    text: &str,
) -> Option<(Severity, Option<Category>, std::ops::Range<usize>)> {
    let trimmed = text.trim_end().trim_end_matches('.').trim_end();
    let (sev, cat, range) = SEV_RE.captures_iter(trimmed).last().and_then(|c| {
        let sev: Severity = c.get(1)?.as_str().parse().ok()?;
        let cat = c.get(2).map(|m| Category::from(m.as_str()));
        Some((sev, cat, c.get(0)?.range()))
    })?;
    (range.end == trimmed.len()).then_some((sev, cat, range))
}

/// Scope tags in text: `(in-scope)`, `*(future)*`, `` `(pre-existing)` ``.
pub(crate) fn find_scopes(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in SCOPE_RE.captures_iter(text) {
        let s = c[1].to_ascii_lowercase().replace(' ', "-");
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

pub(crate) fn strip_scopes(text: &str) -> String {
    SCOPE_RE.replace_all(text, "").to_string()
}

/// Whether a code span looks like a place in the code rather than an identifier:
/// `a/b.go`, `x.rs:12`, `main.go:3-9`.
fn looks_like_location(s: &str) -> bool {
    let s = s.trim();
    if s.is_empty() || s.contains(char::is_whitespace) && !s.contains(", ") {
        return false;
    }
    if s.starts_with('(') || s.contains("()") || s.contains('=') {
        return false;
    }
    let path = s.split([':', '#']).next().unwrap_or(s);
    let has_lines = s
        .split_once(':')
        .or_else(|| s.split_once("#L"))
        .is_some_and(|(_, l)| l.trim_start().starts_with(|c: char| c.is_ascii_digit()));
    let has_ext = path.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && !ext.is_empty()
            && ext.len() <= 8
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
    });
    (has_lines && !path.is_empty())
        || (path.contains('/') && !path.ends_with('/'))
        || (has_ext && ext_is_fileish(path))
}

/// File extensions common enough to call `app.go` a path without a directory.
fn ext_is_fileish(path: &str) -> bool {
    const EXTS: &[&str] = &[
        "go",
        "rs",
        "py",
        "js",
        "ts",
        "tsx",
        "jsx",
        "java",
        "kt",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "cs",
        "rb",
        "php",
        "swift",
        "md",
        "yaml",
        "yml",
        "json",
        "toml",
        "sh",
        "bats",
        "txt",
        "html",
        "css",
        "scss",
        "sql",
        "proto",
        "mod",
        "sum",
        "lock",
        "cfg",
        "ini",
        "xml",
        "vue",
        "svelte",
        "ex",
        "exs",
        "erl",
        "hs",
        "ml",
        "scala",
        "lua",
        "pl",
        "r",
        "dart",
        "zig",
        "nix",
        "tf",
        "gradle",
        "mk",
        "cmake",
        "dockerfile",
    ];
    path.rsplit_once('.')
        .is_some_and(|(_, e)| EXTS.contains(&e.to_ascii_lowercase().as_str()))
}

/// Parses one cited location, which may hold several ranges (`a.go:13-14,30-37`): one
/// [`Location`] per range.
pub(crate) fn parse_locations(s: &str) -> Vec<Location> {
    let s = s.trim().trim_matches('`').trim();
    // GitHub-style anchors: `a.go#L12-L20`, `a.go#L12`.
    let anchored;
    let s = match s.split_once("#L") {
        Some((path, lines)) if lines.starts_with(|c: char| c.is_ascii_digit()) => {
            anchored = format!("{path}:{}", lines.replace('L', ""));
            anchored.as_str()
        }
        _ => s,
    };
    let Some((path, lines)) = s.rsplit_once(':') else {
        return s.parse().into_iter().collect();
    };
    if !lines.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
        return s.parse().into_iter().collect();
    }
    lines
        .split(',')
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .filter_map(|r| format!("{path}:{r}").parse::<Location>().ok())
        .collect()
}

/// The locations in free text: code spans that look like paths, else `path:lines` words.
pub(crate) fn locations_in_text(s: &str) -> Vec<Location> {
    static SPAN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`([^`]+)`").unwrap());
    let mut out: Vec<Location> = SPAN
        .captures_iter(s)
        .filter(|c| looks_like_location(&c[1]))
        .flat_map(|c| parse_locations(&c[1]))
        .collect();
    if out.is_empty() {
        for c in PLAIN_LOC_RE.captures_iter(s) {
            if looks_like_location(&c[1]) {
                out.extend(parse_locations(&c[1]));
            }
        }
    }
    out
}

/// Reads the first line of a finding or observation.
pub(crate) fn parse_head(line: &[&Inline]) -> FindingHead {
    let mut head = FindingHead::default();
    let full = plain(line);

    // Bold lead: the strong spans at the start of the line (after an optional id like `S1.`).
    let first_non_ws = line
        .iter()
        .position(|i| !(i.kind == InlineKind::Text && i.text.trim().is_empty()));
    let mut idx = first_non_ws.unwrap_or(line.len());
    let mut prefix = String::new();
    if let Some(i) = line.get(idx)
        && !i.strong
        && i.kind == InlineKind::Text
        && let Some(m) = ID_RE.find(&i.text)
        && line.get(idx + 1).is_some_and(|n| n.strong)
        && m.end() == i.text.len()
    {
        // `S1. **Title**`
        prefix = i.text.clone();
        idx += 1;
    }
    let bold_end = line[idx..]
        .iter()
        .position(|i| !i.strong)
        .map(|p| idx + p)
        .unwrap_or(line.len());
    let bold_text = plain(&line[idx..bold_end]);
    let after = plain(&line[bold_end..]);

    let (title_src, rest_src) = if bold_end > idx {
        head.bold = true;
        head.colon_after_bold =
            after.trim_start().starts_with(':') || bold_text.trim_end().ends_with(':');
        let bt = bold_text.trim().to_string();
        // `**S1.** Title — ...`: the bold holds only the id.
        if let Some(c) = ID_RE.captures(&bt)
            && c.get(0).is_some_and(|m| m.end() == bt.len())
        {
            head.id = Some(c[1].to_string());
            head.bold = false;
            split_title(&after)
        } else {
            (bt, after)
        }
    } else {
        split_title(&full)
    };
    let prefix = prefix.trim();
    if head.id.is_none()
        && let Some(c) = ID_RE.captures(prefix)
    {
        head.id = Some(c[1].to_string());
    }
    // The id may lead the title itself: `**S1. Title**`, `C2: Title`.
    let mut title = title_src.trim().to_string();
    if let Some(c) = ID_RE.captures(&title)
        && let Some(m) = c.get(0)
        && m.end() < title.len()
    {
        if head.id.is_none() {
            head.id = Some(c[1].to_string());
        }
        title = title[m.end()..].to_string();
    }
    static NUM_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*(\d{1,4})[.)]\s+").unwrap());
    if head.id.is_none()
        && let Some(c) = NUM_RE.captures(&title)
        && let Some(m) = c.get(0)
    {
        head.number = c[1].parse().ok();
        title = title[m.end()..].to_string();
    }
    head.scopes = find_scopes(&full);
    let title = strip_scopes(&title);
    head.title = title
        .trim()
        .trim_end_matches([':', '.', '—', '–'])
        .trim()
        .to_string();
    if head.title.is_empty() {
        head.title = rest_src.trim().to_string();
    }

    // Severity and locations come from what follows the title.
    let mut rest = rest_src.clone();
    if let Some((sev, cat, range)) = find_severity(&rest) {
        head.severity = Some(sev);
        head.category = cat;
        rest.replace_range(range, "");
    } else if let Some((sev, cat, _)) = find_severity(&bold_text)
        && head.bold
    {
        // `**Title (important, gap)**`
        head.severity = Some(sev);
        head.category = cat;
        if let Some((_, _, r)) = find_severity(&head.title.clone()) {
            head.title.replace_range(r, "");
            head.title = head.title.trim().to_string();
        }
    }
    // `[Critical] Title` and `Severity: high` on the first line.
    static TAG_RE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*[\[(]([A-Za-z]+)[\])]\s*[:—-]?\s*").unwrap());
    static LABEL_RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\bseverity\s*[:=]\s*\**\s*([A-Za-z]+)\**[.,;]?").unwrap()
    });
    if head.severity.is_none()
        && let Some(c) = TAG_RE.captures(&head.title)
        && let Ok(sev) = c[1].parse::<Severity>()
        && let Some(m) = c.get(0)
    {
        head.severity = Some(sev);
        head.title = head.title[m.end()..].trim().to_string();
    }
    if head.severity.is_none()
        && let Some(c) = LABEL_RE.captures(&rest)
        && let Ok(sev) = c[1].parse::<Severity>()
        && let Some(m) = c.get(0)
    {
        head.severity = Some(sev);
        rest.replace_range(m.range(), "");
    }
    head.rest_full = strip_scopes(&rest)
        .trim()
        .trim_start_matches(['—', '–', '-', ':', '.'])
        .trim()
        .to_string();
    let (locations, used) = locations_in(&line[bold_end.min(line.len())..], &rest);
    head.locations = locations;
    for u in used {
        rest = rest.replacen(&format!("`{u}`"), "", 1);
    }
    let rest = rest.replace(" , ", " ").replace(", ,", ",");
    head.rest = strip_scopes(&rest)
        .trim()
        .trim_start_matches(['—', '–', '-', ':', '.'])
        .trim()
        .to_string();
    head
}

/// Splits a line with no bold lead into title and the rest: at the first dash separator, the
/// severity note, or a code span that is clearly a location (`a/b.go`, `x.rs:12`). A code span
/// such as `` `fs::metadata` `` stays in the title.
fn split_title(s: &str) -> (String, String) {
    static SPAN_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r" `([^`]+)`").unwrap());
    let mut cuts: Vec<usize> = [" — ", " – ", " - "]
        .iter()
        .filter_map(|sep| s.find(sep))
        .collect();
    if let Some((_, _, r)) = find_severity(s) {
        // Back up over a space and an opening backtick.
        let start = s[..r.start].trim_end_matches('`').trim_end().len();
        cuts.push(start);
    }
    for c in SPAN_RE.captures_iter(s) {
        let t = &c[1];
        let strong = t.contains('/')
            || t.split_once(':')
                .is_some_and(|(_, l)| l.starts_with(|ch: char| ch.is_ascii_digit()));
        // Cut only where the location ends the sentence: `Fix x — a.go:3` or `Fix x `a.go:3``,
        // not `Rename y in `a/b.go` to z`.
        if strong
            && looks_like_location(t)
            && let Some(m) = c.get(0)
            && only_notes(&s[m.end()..])
        {
            cuts.push(m.start());
        }
    }
    match cuts.into_iter().min() {
        Some(i) => (s[..i].to_string(), s[i..].to_string()),
        None => (s.to_string(), String::new()),
    }
}

/// Whether text holds nothing but more locations, severity notes, `[Agent]` tags and
/// punctuation.
pub(crate) fn only_notes(s: &str) -> bool {
    static NOTE_RE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"`[^`]*`|\([^)]*\)|\[[^\]]*\]").unwrap());
    !NOTE_RE
        .replace_all(s, "")
        .chars()
        .any(|c| c.is_alphabetic())
}

/// The locations cited on the line: code spans that look like paths (a bare `355-374` after a
/// path adds a range of that path), else plain `path:lines` text.
fn locations_in(spans: &[&Inline], rest_plain: &str) -> (Vec<Location>, Vec<String>) {
    let mut out: Vec<Location> = Vec::new();
    let mut used: Vec<String> = Vec::new();
    for i in spans.iter().filter(|i| i.kind == InlineKind::Code) {
        let t = i.text.trim();
        if RANGE_ONLY_RE.is_match(t) {
            if let Some(prev) = out.last().map(|l| l.path.clone()) {
                out.extend(parse_locations(&format!("{prev}:{t}")));
                used.push(i.text.clone());
            }
            continue;
        }
        if find_severity(t).is_some() {
            continue;
        }
        if looks_like_location(t) {
            out.extend(parse_locations(t));
            used.push(i.text.clone());
        }
    }
    if out.is_empty() {
        let without_code: String = rest_plain.to_string();
        for c in PLAIN_LOC_RE.captures_iter(&without_code) {
            let s = &c[1];
            if looks_like_location(s) && !s.starts_with("e.g") {
                out.extend(parse_locations(s));
            }
        }
    }
    let mut seen = Vec::new();
    out.retain(|l| {
        let k = l.to_string();
        if seen.contains(&k) {
            false
        } else {
            seen.push(k);
            true
        }
    });
    (out, used)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::blocks::parse_blocks;

    fn head_of(md: &str) -> FindingHead {
        let blocks = parse_blocks(md);
        let b = &blocks[0];
        let p = if b.inlines.is_empty() {
            b.children[0].first_paragraph().unwrap()
        } else {
            b
        };
        let lines = p.lines();
        parse_head(&lines[0])
    }

    #[test]
    fn numbered_bold_title_location_and_severity() {
        let h = head_of("1. **Resource leak** — `pkg/a.go:69-71` (critical, regression)\n");
        assert_eq!(h.title, "Resource leak");
        assert_eq!(
            h.locations,
            vec![Location::new("pkg/a.go", Some(69), Some(71))]
        );
        assert_eq!(h.severity, Some(Severity::Critical));
        assert_eq!(h.category, Some(Category::Regression));
        assert_eq!(h.id, None);
    }

    #[test]
    fn id_inside_bold_and_backticked_severity() {
        let h = head_of("**S1. Missing `x` test** — `a/b.go:1`, `c.go:2-3` `(suggestion, gap)`\n");
        assert_eq!(h.id.as_deref(), Some("S1"));
        assert_eq!(h.title, "Missing `x` test");
        assert_eq!(h.locations.len(), 2);
        assert_eq!(h.severity, Some(Severity::Suggestion));
    }

    #[test]
    fn id_before_bold_and_bare_range() {
        let h = head_of("I2. **Silent failure** — `k.go:76-80`, `355-374` (important, gap)\n");
        assert_eq!(h.id.as_deref(), Some("I2"));
        assert_eq!(h.title, "Silent failure");
        assert_eq!(
            h.locations,
            vec![
                Location::new("k.go", Some(76), Some(80)),
                Location::new("k.go", Some(355), Some(374))
            ]
        );
    }

    #[test]
    fn bold_id_only_and_several_ranges() {
        let h = head_of("**S1.** Fix the thing — `lima.yaml:13-14,30-37`\n");
        assert_eq!(h.id.as_deref(), Some("S1"));
        assert_eq!(h.title, "Fix the thing");
        assert_eq!(h.locations.len(), 2);
        assert_eq!(h.locations[1].start, Some(30));
        assert_eq!(h.severity, None);
    }

    #[test]
    fn scopes_are_read_and_stripped() {
        let h = head_of("- **Async failures cannot reach the user** *(future)* [Claude]\n");
        assert_eq!(h.scopes, vec!["future".to_string()]);
        assert_eq!(h.title, "Async failures cannot reach the user");
        let h = head_of("- **Aggressive hijacking (in-scope)**: text\n");
        assert_eq!(h.scopes, vec!["in-scope".to_string()]);
        assert_eq!(h.title, "Aggressive hijacking");
        assert!(h.colon_after_bold);
    }

    #[test]
    fn severity_tag_and_label_on_the_first_line() {
        let h = head_of("### [Critical] Token compared with `==`\n");
        assert_eq!(h.severity, Some(Severity::Critical));
        assert_eq!(h.title, "Token compared with `==`");
        let h = head_of("1. **Leak** — Severity: high — `a/b.go:3`\n");
        assert_eq!(h.severity, Some(Severity::Critical));
        assert_eq!(h.locations[0].to_string(), "a/b.go:3");
    }

    #[test]
    fn github_anchors_and_links() {
        assert_eq!(
            parse_locations("pkg/a.go#L12-L20"),
            vec![Location::new("pkg/a.go", Some(12), Some(20))]
        );
        let h = head_of("1. **Leak** — [pkg/a.go:12](pkg/a.go#L12) (important, gap)\n");
        assert_eq!(h.locations, vec![Location::new("pkg/a.go", Some(12), None)]);
        let h = head_of("1. **Leak** — `pkg/a.go#L3` (important, gap)\n");
        assert_eq!(h.locations, vec![Location::new("pkg/a.go", Some(3), None)]);
    }

    #[test]
    fn severity_needs_a_known_word() {
        assert!(find_severity("(e.g., connection timeout)").is_none());
        assert!(find_severity("(Apply similarly to `X`)").is_none());
        assert_eq!(
            find_trailing_severity("Fix: add a test. (important, gap)").map(|s| s.0),
            Some(Severity::Important)
        );
        assert!(find_trailing_severity("(important, gap) then more").is_none());
    }
}
