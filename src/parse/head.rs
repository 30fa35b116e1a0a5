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

use std::ops::Range;
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

static SCOPE_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)[*_`]*\(\s*(in[- ]scope|future|pre[- ]existing|persistent|out[- ]of[- ]scope|follow[- ]up)\s*\)[*_`]*",
    )
    .unwrap()
});

static PLAIN_LOC_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[\s(\[])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z0-9]{1,8}(?::\d+(?:[-–]\d+)?(?:,\s*\d+(?:[-–]\d+)?)*|#L\d+(?:-L?\d+)?)?)").unwrap()
});

static RANGE_ONLY_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\d+(?:[-–]\d+)?$").unwrap());

/// `re.captures(text)`, asked only when the pattern matches: a match test allocates nothing,
/// and most lines a reader looks at do not match.
fn captures<'t>(re: &Regex, text: &'t str) -> Option<regex::Captures<'t>> {
    if re.is_match(text) {
        re.captures(text)
    } else {
        None
    }
}

/// Whether `text` contains `word`, ignoring ASCII case.
fn contains_word_ignore_case(text: &str, word: &str) -> bool {
    text.len() >= word.len()
        && text
            .as_bytes()
            .windows(word.len())
            .any(|w| w.eq_ignore_ascii_case(word.as_bytes()))
}

/// The `(word, category)` notes of a text, left to right: `(important, gap)`,
/// `` `(suggestion)` ``, `(critical — security)`. Each is the word, the category and the byte
/// range of the note (with the backticks around it). Read by hand rather than by a regex: every
/// finding's first line is asked, several times.
fn notes(text: &str) -> impl Iterator<Item = (&str, Option<&str>, Range<usize>)> {
    let mut from = 0;
    let mut last_end = 0;
    std::iter::from_fn(move || {
        loop {
            let open = from + text.get(from..)?.find('(')?;
            // A note holds no parenthesis, so only the last `(` before a `)` can open one:
            // each byte is looked at once however many `(` a line holds (a `)` searched from
            // every `(` made a line of 40,000 of them quadratic).
            let next = open + 1 + text[open + 1..].find(['(', ')'])?;
            if text.as_bytes()[next] == b'(' {
                from = next;
                continue;
            }
            if let Some((word, category, end)) = note_at(text, open) {
                // A backtick before the note is its own unless the note before took it.
                let start = if open > last_end && text.as_bytes()[open - 1] == b'`' {
                    open - 1
                } else {
                    open
                };
                from = end;
                last_end = end;
                return Some((word, category, start..end));
            }
            from = open + 1;
        }
    })
}

/// The note that opens at `open` (a `(`): `\(\s*[A-Za-z]+\s*(?:[,/;|—–]\s*[A-Za-z][A-Za-z -]*\s*)?\)`,
/// and a backtick after it. Returns the word, the category and where the note ends.
fn note_at(text: &str, open: usize) -> Option<(&str, Option<&str>, usize)> {
    let rest = &text[open + 1..];
    let close = rest.find(')')?;
    let inner = rest[..close].trim_start();
    let word_len = inner
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(inner.len());
    if word_len == 0 {
        return None;
    }
    let word = &inner[..word_len];
    let after = inner[word_len..].trim_start();
    let category = match after.chars().next() {
        None => None,
        Some(sep @ (',' | '/' | ';' | '|' | '—' | '–')) => {
            let c = after[sep.len_utf8()..].trim();
            let ok = c.starts_with(|ch: char| ch.is_ascii_alphabetic())
                && c.chars()
                    .all(|ch| ch.is_ascii_alphabetic() || ch == ' ' || ch == '-');
            if !ok {
                return None;
            }
            Some(c)
        }
        Some(_) => return None,
    };
    let mut end = open + 1 + close + 1;
    if text.as_bytes().get(end) == Some(&b'`') {
        end += 1;
    }
    Some((word, category, end))
}

/// Finds a `(severity, category)` note in text: the severity word must be one
/// [`Severity::from_str`] knows, so `(e.g., ...)` and `(see above)` never match.
/// Returns the severity, category and the byte range of the note.
pub(crate) fn find_severity(text: &str) -> Option<(Severity, Option<Category>, Range<usize>)> {
    notes(text).find_map(|(word, category, range)| {
        let sev: Severity = word.parse().ok()?;
        Some((sev, category.map(Category::from), range))
    })
}

/// Where the first `(severity, category)` note of a text is, without reading its category.
pub(crate) fn severity_note(text: &str) -> Option<Range<usize>> {
    notes(text)
        .find(|(word, _, _)| word.parse::<Severity>().is_ok())
        .map(|(_, _, range)| range)
}

/// Finds a severity note that ends a paragraph (`... (important, gap)`), the way some
/// reviewers write it after the body instead of on the first line.
pub(crate) fn find_trailing_severity(
    text: &str,
) -> Option<(Severity, Option<Category>, Range<usize>)> {
    let trimmed = text.trim_end().trim_end_matches('.').trim_end();
    if !trimmed.ends_with([')', '`']) {
        return None;
    }
    let (word, category, range) = notes(trimmed).last()?;
    let sev: Severity = word.parse().ok()?;
    (range.end == trimmed.len()).then(|| (sev, category.map(Category::from), range))
}

/// Scope tags in text: `(in-scope)`, `*(future)*`, `` `(pre-existing)` ``.
pub(crate) fn find_scopes(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if !text.contains('(') {
        return out;
    }
    for c in SCOPE_RE.captures_iter(text) {
        let s = c[1].to_ascii_lowercase().replace(' ', "-");
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

pub(crate) fn strip_scopes(text: &str) -> String {
    if !text.contains('(') {
        return text.to_string();
    }
    SCOPE_RE.replace_all(text, "").into_owned()
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
        .is_some_and(|(_, e)| EXTS.iter().any(|x| x.eq_ignore_ascii_case(e)))
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
    // `path:LINE:COL` is the parser's to read (the last number is a column).
    let plain_path = !path.is_empty()
        && !path
            .rsplit_once(':')
            .is_some_and(|(_, l)| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()));
    lines
        .split(',')
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .filter_map(|r| match line_range(r).filter(|_| plain_path) {
            // `12` or `12-20`, the common case, without formatting and parsing again.
            Some((start, end)) => Some(Location::new(path, Some(start), end)),
            None => format!("{path}:{r}").parse::<Location>().ok(),
        })
        .collect()
}

/// `12` → (12, None), `12-20` or `12–20` → (12, Some(20)).
fn line_range(r: &str) -> Option<(u32, Option<u32>)> {
    let (a, b) = match r.split_once(['-', '–']) {
        Some((a, b)) => (a, Some(b)),
        None => (r, None),
    };
    let number = |s: &str| {
        (!s.is_empty() && s.len() <= 9 && s.bytes().all(|c| c.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let start = number(a)?;
    match b {
        Some(b) => Some((start, Some(number(b)?))),
        None => Some((start, None)),
    }
}

/// The locations in free text: code spans that look like paths, else `path:lines` words.
pub(crate) fn locations_in_text(s: &str) -> Vec<Location> {
    static SPAN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`([^`]+)`").unwrap());
    static LINK: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\[([^\]\n]+)\]\(([^)\s]+)\)").unwrap());
    let mut out: Vec<Location> = LINK
        .captures_iter(s)
        .flat_map(|c| link_locations(&c[1], &c[2]))
        .collect();
    let without_links = if out.is_empty() {
        std::borrow::Cow::Borrowed(s)
    } else {
        LINK.replace_all(s, "")
    };
    out.extend(
        SPAN.captures_iter(&without_links)
            .filter(|c| looks_like_location(&c[1]))
            .flat_map(|c| parse_locations(&c[1])),
    );
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
    let lead = BoldLead::find(line);
    let (title_src, rest_src) = title_and_rest(line, &lead, &full, &mut head);
    let title = title_after_ids(&mut head, lead.prefix.trim(), &title_src);
    head.scopes = find_scopes(&full);
    head.title = clean_title(&title, &rest_src);
    // Severity and locations come from what follows the title.
    let mut rest = rest_src;
    severity_from_note(&mut head, &mut rest, &lead.text);
    severity_from_tag_or_label(&mut head, &mut rest);
    head.rest_full = tidy_rest(&rest);
    locations_and_rest(&mut head, line, &lead, &rest);
    head
}

/// The bold lead of a first line: the strong spans at its start, after an optional id like `S1.`.
struct BoldLead {
    /// Index of the first inline of the lead.
    start: usize,
    /// One past the last strong inline of the lead (`start` when there is no bold).
    end: usize,
    /// Where the title inside the bold ends: before a location written in it, else `end`.
    title_end: usize,
    /// The id written before the bold (`S1. ` in `S1. **Title**`), untrimmed; else empty.
    prefix: String,
    /// The plain text of the bold.
    text: String,
    /// The plain text after the bold.
    after: String,
}

impl BoldLead {
    fn find(line: &[&Inline]) -> Self {
        let first_non_ws = line
            .iter()
            .position(|i| !(i.kind == InlineKind::Text && i.text.trim().is_empty()));
        let mut start = first_non_ws.unwrap_or(line.len());
        let mut prefix = String::new();
        if let Some(i) = line.get(start)
            && !i.strong
            && i.kind == InlineKind::Text
            && let Some(m) = ID_RE.find(&i.text)
            && line.get(start + 1).is_some_and(|n| n.strong)
            && m.end() == i.text.len()
        {
            // `S1. **Title**`
            prefix = i.text.to_string();
            start += 1;
        }
        let end = line[start..]
            .iter()
            .position(|i| !i.strong)
            .map(|p| start + p)
            .unwrap_or(line.len());
        // `**S2. Title — `pkg/x.go:12-20`**`: the location written inside the bold title.
        let title_end = trailing_location(&line[start..end])
            .map(|cut| start + cut)
            .unwrap_or(end);
        BoldLead {
            start,
            end,
            title_end,
            prefix,
            text: plain(&line[start..end]),
            after: plain(&line[end..]),
        }
    }

    /// Whether the bold title ends in a location (`**Title — `x.rs:3`**`).
    fn has_location(&self) -> bool {
        self.title_end < self.end
    }
}

/// The title and the rest of the line, before ids, severity and locations come out of them.
/// Marks a bold lead on `head`, and takes the id when the bold holds only it.
fn title_and_rest(
    line: &[&Inline],
    lead: &BoldLead,
    full: &str,
    head: &mut FindingHead,
) -> (String, String) {
    if lead.end <= lead.start {
        return split_title(full);
    }
    head.bold = true;
    head.colon_after_bold =
        lead.after.trim_start().starts_with(':') || lead.text.trim_end().ends_with(':');
    let bt = if lead.has_location() {
        plain(&line[lead.start..lead.title_end])
            .trim()
            .trim_end_matches(TITLE_LOCATION_SEPARATORS)
            .trim()
            .to_string()
    } else {
        lead.text.trim().to_string()
    };
    // `**S1.** Title — ...`: the bold holds only the id.
    if let Some(c) = captures(&ID_RE, &bt)
        && c.get(0).is_some_and(|m| m.end() == bt.len())
    {
        head.id = Some(c[1].to_string());
        head.bold = false;
        split_title(&lead.after)
    } else {
        (bt, lead.after.clone())
    }
}

/// Takes the id (from the prefix, else from the title) or a plain leading number off the title.
fn title_after_ids(head: &mut FindingHead, prefix: &str, title_src: &str) -> String {
    if head.id.is_none()
        && let Some(c) = captures(&ID_RE, prefix)
    {
        head.id = Some(c[1].to_string());
    }
    // The id may lead the title itself: `**S1. Title**`, `C2: Title`.
    let mut title = title_src.trim().to_string();
    if let Some(c) = captures(&ID_RE, &title)
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
        && let Some(c) = captures(&NUM_RE, &title)
        && let Some(m) = c.get(0)
    {
        head.number = c[1].parse().ok();
        title = title[m.end()..].to_string();
    }
    title
}

/// The title without scopes and trailing punctuation; the rest of the line when that leaves nothing.
fn clean_title(title: &str, rest_src: &str) -> String {
    let title = strip_scopes(title);
    let title = title
        .trim()
        .trim_end_matches([':', '.', '—', '–'])
        .trim()
        .to_string();
    if title.is_empty() {
        rest_src.trim().to_string()
    } else {
        title
    }
}

/// The severity note after the title (cut out of `rest`), else one inside a bold title
/// (`**Title (important, gap)**`, cut out of the title).
fn severity_from_note(head: &mut FindingHead, rest: &mut String, bold_text: &str) {
    if let Some((sev, cat, range)) = find_severity(rest) {
        head.severity = Some(sev);
        head.category = cat;
        rest.replace_range(range, "");
    } else if let Some((sev, cat, _)) = find_severity(bold_text)
        && head.bold
    {
        head.severity = Some(sev);
        head.category = cat;
        if let Some(r) = severity_note(&head.title.clone()) {
            head.title.replace_range(r, "");
            head.title = head.title.trim().to_string();
        }
    }
}

/// `[Critical] Title` and `Severity: high` on the first line, when no note gave the severity.
fn severity_from_tag_or_label(head: &mut FindingHead, rest: &mut String) {
    static TAG_RE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*[\[(]([A-Za-z]+)[\])]\s*[:—-]?\s*").unwrap());
    static LABEL_RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\bseverity\s*[:=]\s*\**\s*([A-Za-z]+)\**[.,;]?").unwrap()
    });
    if head.severity.is_none()
        && let Some(c) = captures(&TAG_RE, &head.title)
        && let Ok(sev) = c[1].parse::<Severity>()
        && let Some(m) = c.get(0)
    {
        head.severity = Some(sev);
        head.title = head.title[m.end()..].trim().to_string();
    }
    if head.severity.is_none()
        && contains_word_ignore_case(rest, "severity")
        && let Some(c) = LABEL_RE.captures(rest)
        && let Ok(sev) = c[1].parse::<Severity>()
        && let Some(m) = c.get(0)
    {
        head.severity = Some(sev);
        rest.replace_range(m.range(), "");
    }
}

/// The locations of the line (those inside the bold title first), and the rest without them.
fn locations_and_rest(head: &mut FindingHead, line: &[&Inline], lead: &BoldLead, rest: &str) {
    head.locations = if lead.has_location() {
        locations_in(&line[lead.title_end..lead.end], "").0
    } else {
        Vec::new()
    };
    let (locations, used) = locations_in(&line[lead.end.min(line.len())..], rest);
    head.locations.extend(locations);
    if lead.has_location() {
        dedup_locations(&mut head.locations);
    }
    let rest = remove_in_order(rest, &used);
    // What is left of a list of locations is its commas.
    let rest = if rest.chars().any(char::is_alphanumeric) {
        rest.replace(" , ", " ").replace(", ,", ",")
    } else {
        String::new()
    };
    head.rest = tidy_rest(&rest);
}

/// The rest of a first line without scopes and the separators that led it.
fn tidy_rest(rest: &str) -> String {
    strip_scopes(rest)
        .trim()
        .trim_start_matches(['—', '–', '-', ':', '.'])
        .trim()
        .to_string()
}

/// Splits a line with no bold lead into title and the rest: at the first dash separator, the
/// severity note, or a code span that is clearly a location (`a/b.go`, `x.rs:12`). A code span
/// such as `` `fs::metadata` `` stays in the title.
fn split_title(s: &str) -> (String, String) {
    static SPAN_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r" `([^`]+)`").unwrap());
    // The first dash separator (` — `, ` – `, ` - `), found in one pass.
    let mut cuts: Vec<usize> = s
        .match_indices(['—', '–', '-'])
        .find(|(i, d)| s[..*i].ends_with(' ') && s[i + d.len()..].starts_with(' '))
        .map(|(i, _)| i - 1)
        .into_iter()
        .collect();
    if let Some(r) = severity_note(s) {
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
/// punctuation. Text longer than a title line's notes ever are is not notes: the check stays
/// cheap when it is asked about every span of a long line.
pub(crate) fn only_notes(s: &str) -> bool {
    if s.len() > 2048 {
        return false;
    }
    // Skip `code`, (parenthesised) and [bracketed] groups; an opener without its closer is
    // one character like any other.
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        let closer = match c {
            '`' => Some('`'),
            '(' => Some(')'),
            '[' => Some(']'),
            _ => None,
        };
        if let Some(end) = closer.and_then(|e| rest[1..].find(e)) {
            rest = &rest[1 + end + 1..];
            continue;
        }
        if c.is_alphabetic() {
            return false;
        }
        rest = &rest[c.len_utf8()..];
    }
    true
}

/// Drops repeated locations, keeping the first of each in order: by comparison when there are
/// few (a finding's line names one or two), by hashing when a line names thousands.
pub(crate) fn dedup_locations(v: &mut Vec<Location>) {
    if v.len() <= 16 {
        let mut kept = 0;
        for i in 0..v.len() {
            if !v[..kept].contains(&v[i]) {
                v.swap(kept, i);
                kept += 1;
            }
        }
        v.truncate(kept);
    } else {
        let mut seen = std::collections::HashSet::new();
        v.retain(|l| seen.insert(l.clone()));
    }
}

/// What may separate a title from a location written after it inside the bold.
const TITLE_LOCATION_SEPARATORS: &[char] = &['—', '–', '-', ':', '(', ',', '@', '|', ' '];

/// Runs of inlines read together: the inlines of one link (its text may be split into code and
/// plain text), else one inline each. Returns index ranges into `spans`.
fn groups(spans: &[&Inline]) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for (k, i) in spans.iter().enumerate() {
        if let (Some(last), Some(link)) = (out.last_mut(), &i.link)
            && last.end == k
            && spans[last.start]
                .link
                .as_ref()
                .is_some_and(|l| std::rc::Rc::ptr_eq(l, link))
        {
            last.end = k + 1;
            continue;
        }
        out.push(k..k + 1);
    }
    out
}

/// The locations one group names: a link's (see [`link_locations`]) or a code span that looks
/// like a path.
fn group_locations(group: &[&Inline]) -> Vec<Location> {
    let Some(first) = group.first() else {
        return Vec::new();
    };
    if let Some(url) = &first.link {
        return link_locations(&plain(group), url);
    }
    if first.kind == InlineKind::Code && looks_like_location(first.text.trim()) {
        return parse_locations(first.text.trim());
    }
    Vec::new()
}

/// Where a location that ends a bold title starts (an index into `bold`): the first of the
/// trailing locations, when only notes (punctuation, severity, more locations) follow it and a
/// separator (`—`, `:`, `(`, ...) comes before it. `**Rename `a/b.go` to `c.go`**` keeps its
/// title whole.
fn trailing_location(bold: &[&Inline]) -> Option<usize> {
    let mut cut = None;
    for g in groups(bold).into_iter().rev() {
        let inl = &bold[g.clone()];
        if !group_locations(inl).is_empty() {
            cut = Some(g.start);
            continue;
        }
        if inl.iter().all(|i| {
            i.kind == InlineKind::Code && RANGE_ONLY_RE.is_match(i.text.trim())
                || only_notes(&plain(&[*i]))
        }) {
            continue;
        }
        break;
    }
    let cut = cut.filter(|&c| c > 0)?;
    let before = plain(&bold[..cut]);
    let before = before.trim_end();
    (before.ends_with(|c: char| TITLE_LOCATION_SEPARATORS.contains(&c) && c != ' ')
        && !before
            .trim_end_matches(TITLE_LOCATION_SEPARATORS)
            .trim()
            .is_empty())
    .then_some(cut)
}

/// The location a Markdown link names: `[a.go#L47](...)`, `[a.go](https://host/o/r/blob/main/pkg/a.go#L47-L52)`,
/// `[see here](pkg/a.go#L3)`. The path is the link's repository path when the text is the end
/// of it (`a.go` of `pkg/a.go`); the lines are the text's, else the anchor's.
fn link_locations(text: &str, url: &str) -> Vec<Location> {
    let (url_path, anchor) = match url.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (url, None),
    };
    let lines = anchor.and_then(anchor_lines);
    let repo_path = forge_path(url_path).filter(|p| looks_like_location(p));
    let text = text.trim().trim_matches('`').trim();
    let mut locs = if looks_like_location(text) {
        parse_locations(text)
    } else {
        Vec::new()
    };
    if let Some(rp) = repo_path {
        for l in &mut locs {
            if rp.ends_with(&l.path) && rp[..rp.len() - l.path.len()].ends_with('/') {
                l.path = rp.to_string();
            }
        }
        if locs.is_empty() {
            locs = vec![Location::new(rp, None, None)];
        }
    }
    if let Some(lines) = lines
        && locs.len() == 1
        && locs[0].start.is_none()
    {
        let path = locs[0].path.clone();
        locs = parse_locations(&format!("{path}:{lines}"));
    }
    locs
}

/// `L47` → `47`, `L47-L52` and `L47-52` → `47-52`.
fn anchor_lines(fragment: &str) -> Option<String> {
    static ANCHOR_RE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^L(\d+)(?:-L?(\d+))?").unwrap());
    let c = ANCHOR_RE.captures(fragment)?;
    Some(match c.get(2) {
        Some(end) => format!("{}-{}", &c[1], end.as_str()),
        None => c[1].to_string(),
    })
}

/// The repository path a link points at: a relative link's path, or what follows
/// `/blob/<ref>/` (or `/tree/<ref>/`, `/-/blob/<ref>/`) in a forge URL. Other URLs name no path.
fn forge_path(url_path: &str) -> Option<&str> {
    let p = url_path.split(['?']).next().unwrap_or(url_path);
    if !p.contains("://") {
        let p = p.trim_start_matches("./").trim_start_matches('/');
        return (!p.is_empty()).then_some(p);
    }
    let after_host = p.split_once("://")?.1.split_once('/')?.1;
    let (_, rest) = after_host
        .split_once("/blob/")
        .or_else(|| after_host.split_once("/tree/"))?;
    let (_, path) = rest.split_once('/')?;
    (!path.is_empty()).then_some(path)
}

/// `text` without each of `parts`, taken in order (each at its first place after the last).
fn remove_in_order(text: &str, parts: &[String]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for p in parts {
        if p.is_empty() {
            continue;
        }
        if let Some(i) = text[pos..].find(p.as_str()) {
            out.push_str(&text[pos..pos + i]);
            pos += i + p.len();
        }
    }
    out.push_str(&text[pos..]);
    out
}

/// The locations cited on the line: code spans that look like paths and links to lines (a bare
/// `355-374` after a path adds a range of that path), else plain `path:lines` text. Returns the
/// locations and the text of the spans they came from, as written in `rest_plain`.
fn locations_in(spans: &[&Inline], rest_plain: &str) -> (Vec<Location>, Vec<String>) {
    let mut out: Vec<Location> = Vec::new();
    let mut used: Vec<String> = Vec::new();
    for g in groups(spans) {
        let inl = &spans[g];
        let i = inl[0];
        if i.link.is_some() {
            let locs = group_locations(inl);
            if !locs.is_empty() {
                out.extend(locs);
                used.push(plain(inl));
            }
            continue;
        }
        if i.kind != InlineKind::Code {
            continue;
        }
        let t = i.text.trim();
        if RANGE_ONLY_RE.is_match(t) {
            if let Some(prev) = out.last().map(|l| l.path.clone()) {
                out.extend(parse_locations(&format!("{prev}:{t}")));
                used.push(format!("`{}`", i.text));
            }
            continue;
        }
        if severity_note(t).is_some() {
            continue;
        }
        if looks_like_location(t) {
            out.extend(parse_locations(t));
            used.push(format!("`{}`", i.text));
        }
    }
    if out.is_empty() {
        for c in PLAIN_LOC_RE.captures_iter(rest_plain) {
            let s = &c[1];
            if looks_like_location(s) && !s.starts_with("e.g") {
                out.extend(parse_locations(s));
            }
        }
    }
    dedup_locations(&mut out);
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
    fn severity_notes_are_read_by_hand_as_the_pattern_says() {
        let (sev, cat, r) = find_severity("x `(important, gap)` y").unwrap();
        assert_eq!(
            (sev, cat.unwrap().as_str(), r),
            (Severity::Important, "gap", 2..20)
        );
        let (sev, cat, _) = find_severity("(see above) (critical — security)").unwrap();
        assert_eq!(
            (sev, cat.unwrap().as_str()),
            (Severity::Critical, "security")
        );
        assert!(find_severity("(important gap)").is_none());
        assert!(find_severity("(important, 42)").is_none());
        let (_, cat, _) = find_trailing_severity("Body. (suggestion, missing test )").unwrap();
        assert_eq!(cat.unwrap().as_str(), "missing test");
        // A backtick between two notes belongs to the first.
        let ranges: Vec<Range<usize>> = notes("(a, b)`(c, d)").map(|n| n.2).collect();
        assert_eq!(ranges, [0..7, 7..13]);
        assert!(only_notes(
            " — `a.go:3`, `b.go:4` (important, gap) [Claude]"
        ));
        assert!(!only_notes(" — `a.go:3` in the handler"));
        assert!(!only_notes("(unclosed"));
    }

    #[test]
    fn locations_with_ranges_and_columns() {
        assert_eq!(
            parse_locations("a.go:12:5"),
            vec![Location::new("a.go", Some(12), None)]
        );
        assert_eq!(
            parse_locations("a.go:3–9, 12"),
            vec![
                Location::new("a.go", Some(3), Some(9)),
                Location::new("a.go", Some(12), None)
            ]
        );
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
