//! Code identifiers a finding names in backticks, and which of them exist nowhere.
//!
//! Reviewers put all sorts of things in backticks: identifiers, file names, flags, literal
//! values, whole expressions, plain words. Only spans that look like code identifiers are
//! checked (snake_case, CamelCase, `a.b`, `A::b`, `f()`), so a missing ordinary word or a value
//! is never reported. A qualified name counts as present when each of its parts occurs as a
//! whole word somewhere in the repository at head.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::types::{Finding, Verification};

static BACKTICKED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"`+([^`\n]+?)`+").expect("valid regex"));

/// A path of identifiers joined by `.`, `::`, `->` or `#`, optionally called: `a.b`,
/// `Foo::new()`, `obj->field`, `Class#method(x)`, `println!`.
static SYMBOL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^([A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|->|#)[A-Za-z_][A-Za-z0-9_]*)*)!?(\([^()]*\))?$",
    )
    .expect("valid regex")
});

/// File extensions: a dotted name ending in one of these is a file name, not a field access.
const EXTENSIONS: &[&str] = &[
    "go",
    "rs",
    "py",
    "pyi",
    "js",
    "mjs",
    "cjs",
    "ts",
    "tsx",
    "jsx",
    "md",
    "mdx",
    "yaml",
    "yml",
    "json",
    "jsonc",
    "toml",
    "sh",
    "bash",
    "zsh",
    "fish",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "cxx",
    "java",
    "kt",
    "kts",
    "rb",
    "php",
    "cs",
    "swift",
    "m",
    "mm",
    "txt",
    "lock",
    "html",
    "htm",
    "css",
    "scss",
    "sass",
    "less",
    "sql",
    "proto",
    "xml",
    "ini",
    "cfg",
    "conf",
    "mod",
    "sum",
    "env",
    "gradle",
    "vue",
    "svelte",
    "lua",
    "pl",
    "r",
    "scala",
    "zig",
    "nix",
    "tf",
    "hcl",
    "dockerfile",
    "mk",
    "cmake",
    "bazel",
    "bzl",
    "svg",
    "png",
    "jpg",
    "jpeg",
    "gif",
    "pdf",
    "csv",
    "tsv",
    "log",
    "rst",
    "adoc",
    "ex",
    "exs",
    "erl",
    "hs",
    "ml",
    "dart",
    "groovy",
    "ps1",
    "bat",
    "cmd",
    "sol",
    "graphql",
    "gql",
    "tmpl",
    "tpl",
    "j2",
    "jinja",
    "ipynb",
    "wasm",
    "so",
    "dll",
    "exe",
    "bin",
    "zip",
    "gz",
    "tar",
    "tgz",
    "com",
    "org",
    "net",
    "io",
    "dev",
    "exs",
    "plist",
    "service",
    "socket",
    "timer",
    "patch",
    "diff",
    "example",
    "sample",
    "bak",
    "orig",
];

/// Receiver words every language has: never looked up.
const RECEIVERS: &[&str] = &["self", "Self", "this", "super", "crate", "cls"];

/// A backticked identifier of a finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// As the finding wrote it, trimmed: `validate_token()`.
    pub written: String,
    /// The identifier parts to look up: `["Config", "load"]` for `Config::load()`.
    pub parts: Vec<String>,
}

/// Words that, just before a backticked name, mark it as something proposed rather than
/// something the code has: "add a `validate_input()` helper", "no `Close()`".
const NEAR_PROPOSAL_CUES: &[&str] = &[
    "using ",
    "like ",
    "add ",
    "adding ",
    "new ",
    "rename",
    "call to ",
    "missing ",
    "no ",
    "lacks ",
    "should call",
    "could call",
];

/// Words that, anywhere earlier in the sentence, make a backticked name a proposal: "Replace
/// the plain dict in the cache with an `OrderedDict`", "Consider moving this to `x.y`".
const SENTENCE_PROPOSAL_CUES: &[&str] = &[
    "use ",
    "replace",
    "switch to",
    "switching to",
    "consider",
    "prefer",
    "instead",
    "suggest",
    "recommend",
    "introduce",
    "such as",
    "for example",
    "e.g.",
];

/// How far back (bytes) the near cues are looked for, and the sentence cues at most.
const NEAR_WINDOW: usize = 24;
const SENTENCE_WINDOW: usize = 160;

/// The backticked identifiers of a finding worth looking up: those of its title and
/// explanation that are not file names (`is_file_name`) and that the finding cites rather than
/// proposes. Left out: names in a sentence that proposes them, names only in code blocks of the
/// explanation, and names the fix, a fix paragraph ("Fix: use `x`"), a diff's added lines or
/// the proposed side of the quoted code bring in.
pub fn candidates(f: &Finding, is_file_name: impl Fn(&str) -> bool) -> Vec<Symbol> {
    let (prose, mut proposed) = split_explanation(&f.explanation);
    let text = format!("{}\n{}", f.title, prose);
    for extra in [f.fix.as_deref(), f.fix_diff.as_deref()]
        .into_iter()
        .flatten()
    {
        proposed.push('\n');
        proposed.push_str(extra);
    }
    if let Some(code) = &f.code {
        for line in added_lines(&code.code) {
            proposed.push('\n');
            proposed.push_str(line);
        }
    }
    // Whole words of what the finding proposes, gathered once: a lookup per name, however long
    // the fix.
    let proposed: HashSet<&str> = proposed
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    extract(&text)
        .into_iter()
        .filter(|s| !is_file_name(&s.written))
        .filter(|s| !s.parts.iter().all(|p| proposed.contains(p.as_str())))
        .collect()
}

/// An explanation split into its prose (what it says about the code) and what it proposes: the
/// paragraphs after a fix label (`Fix:`, `**Suggested fix**:`, `Recommendation:`) and the added
/// lines of its diff blocks. Code blocks are taken out of the prose.
fn split_explanation(explanation: &str) -> (String, String) {
    let mut prose = String::new();
    let mut proposed = String::new();
    let mut fence: Option<String> = None;
    let mut in_fix = false;
    for line in explanation.lines() {
        let t = line.trim_start();
        if let Some(lang) = &fence {
            if t.starts_with("```") || t.starts_with("~~~") {
                fence = None;
            } else if lang == "diff" || lang == "patch" {
                if let Some(added) = t.strip_prefix('+').filter(|a| !a.starts_with('+')) {
                    proposed.push_str(added);
                    proposed.push('\n');
                }
            } else if in_fix {
                proposed.push_str(line);
                proposed.push('\n');
            }
            continue;
        }
        if let Some(rest) = t.strip_prefix("```").or_else(|| t.strip_prefix("~~~")) {
            fence = Some(rest.trim().to_ascii_lowercase());
            continue;
        }
        if t.is_empty() {
            in_fix = false;
        } else if is_fix_label(t) {
            in_fix = true;
        }
        let out = if in_fix { &mut proposed } else { &mut prose };
        out.push_str(line);
        out.push('\n');
    }
    (prose, proposed)
}

/// `Fix:`, `**Fix**:`, `- Suggested fix —`, `Recommendation:`, `Proposed change:`.
fn is_fix_label(line: &str) -> bool {
    let t = line
        .trim_start_matches(['-', '*', '_', '>', ' '])
        .to_ascii_lowercase();
    [
        "fix",
        "suggested fix",
        "suggested change",
        "suggestion",
        "proposed fix",
        "proposed change",
        "recommendation",
        "recommended fix",
        "remediation",
        "how to fix",
    ]
    .iter()
    .any(|label| {
        t.strip_prefix(label).is_some_and(|rest| {
            let rest = rest.trim_start_matches(['*', '_']).trim_start();
            rest.starts_with([':', '—', '–']) || rest.starts_with("- ")
        })
    })
}

/// The added lines (`+`, not `+++`) of a quote that has diff markers.
fn added_lines(code: &str) -> impl Iterator<Item = &str> {
    code.lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("++"))
        .map(|l| &l[1..])
}

/// The spans of `text` in backticks that look like code identifiers, in order, one per
/// identifier (`f()` and `f` are one), leaving out names the text proposes rather than cites.
pub fn extract(text: &str) -> Vec<Symbol> {
    let mut out: Vec<Symbol> = Vec::new();
    let mut seen: HashSet<Vec<String>> = HashSet::new();
    for cap in BACKTICKED.captures_iter(text) {
        let (Some(whole), Some(inner)) = (cap.get(0), cap.get(1)) else {
            continue;
        };
        if is_proposal(&text[..whole.start()]) || is_hypothetical(&text[whole.end()..]) {
            continue;
        }
        if let Some(sym) = parse_symbol(inner.as_str().trim())
            && seen.insert(sym.parts.clone())
        {
            out.push(sym);
        }
    }
    out
}

/// Whether the words just after a backticked name make it hypothetical: "where `checked_add`
/// would report it" names something the code could use, not something it has.
fn is_hypothetical(after: &str) -> bool {
    let after = after.trim_start();
    let mut end = after.len().min(8);
    while !after.is_char_boundary(end) {
        end -= 1;
    }
    let lower = after[..end].to_ascii_lowercase();
    ["would ", "could ", "might "]
        .iter()
        .any(|cue| lower.starts_with(cue))
}

/// Whether the text before a backticked name proposes it: a near cue just before it ("add a"),
/// or a proposal verb earlier in its sentence ("Replace ... with").
fn is_proposal(before: &str) -> bool {
    let sentence = sentence_tail(before, SENTENCE_WINDOW);
    let near = sentence_tail(before, NEAR_WINDOW);
    has_cue(&near, NEAR_PROPOSAL_CUES) || has_cue(&sentence, SENTENCE_PROPOSAL_CUES)
}

/// The last `window` bytes of `before`, cut at the start of its sentence, lower-cased.
fn sentence_tail(before: &str, window: usize) -> String {
    let mut start = before.len().saturating_sub(window);
    while !before.is_char_boundary(start) {
        start += 1;
    }
    let tail = &before[start..];
    let mut cut = 0;
    for (at, c) in tail.char_indices() {
        let end_of_sentence = matches!(c, ';' | ':' | '\n')
            || (matches!(c, '.' | '!' | '?')
                && tail[at + 1..].starts_with([' ', '\n'])
                && !tail[..=at].ends_with("e.g.")
                && !tail[..=at].ends_with("i.e."));
        if end_of_sentence {
            cut = at + c.len_utf8();
        }
    }
    tail[cut..].to_ascii_lowercase()
}

fn has_cue(lower: &str, cues: &[&str]) -> bool {
    cues.iter().any(|cue| {
        lower
            .match_indices(cue)
            .any(|(at, _)| at == 0 || !lower.as_bytes()[at - 1].is_ascii_alphabetic())
    })
}

/// Records on `v` the identifiers of `names` with a part in no file at head (`present` holds
/// the parts found), with a note: "not found in the repository at head: `x`".
pub fn record_missing(v: &mut Verification, names: Vec<Symbol>, present: &HashSet<String>) {
    let missing: Vec<String> = names
        .into_iter()
        .filter(|s| s.parts.iter().any(|p| !present.contains(p)))
        .map(|s| s.written)
        .collect();
    if missing.is_empty() {
        return;
    }
    let listed: Vec<String> = missing.iter().map(|s| format!("`{s}`")).collect();
    let said = format!("not found in the repository at head: {}", listed.join(", "));
    v.note = Some(match v.note.take() {
        Some(note) => format!("{note}; {said}"),
        None => said,
    });
    v.symbols_missing = missing;
}

/// One backticked span as a symbol, or `None` when it is not code-like enough to check.
pub fn parse_symbol(written: &str) -> Option<Symbol> {
    let cap = SYMBOL.captures(written)?;
    let path = cap.get(1)?.as_str();
    let called = cap.get(2).is_some() || written.contains('!');
    let qualified = path.contains(['.', ':', '#']) || path.contains("->");
    if qualified && !called && is_file_name(path) {
        return None;
    }
    let parts: Vec<String> = path
        .split(['.', ':', '#', '>'])
        .map(|p| p.trim_end_matches('-'))
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    let looks_like_code = called || qualified || parts.iter().any(|p| is_snake(p) || is_camel(p));
    if !looks_like_code {
        return None;
    }
    let parts: Vec<String> = parts
        .into_iter()
        .filter(|p| p.len() > 1 && !RECEIVERS.contains(&p.as_str()))
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(Symbol {
        written: written.to_string(),
        parts,
    })
}

/// `foo.go`, `config.yaml`, `example.com`: a dotted name whose last part is a file extension.
fn is_file_name(path: &str) -> bool {
    match path.rsplit_once('.') {
        Some((_, ext)) => EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()),
        None => false,
    }
}

/// `load_config`, `MAX_RETRIES`, `__init__`: an underscore between word characters.
fn is_snake(part: &str) -> bool {
    let inner = part.trim_matches('_');
    inner.contains('_') || (part.starts_with("__") && !inner.is_empty())
}

/// `parseConfig`, `HashMap`, `getHTTPClient`: a lower-case letter followed by an upper-case one.
fn is_camel(part: &str) -> bool {
    let bytes = part.as_bytes();
    bytes
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
}

/// Whether `word` occurs in `hay` as a whole word (not inside a longer identifier).
pub fn contains_word(hay: &str, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(at) = hay[from..].find(word) {
        let start = from + at;
        let end = start + word.len();
        let before_ok = hay[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !is_ident(c));
        let after_ok = hay[end..].chars().next().is_none_or(|c| !is_ident(c));
        if before_ok && after_ok {
            return true;
        }
        from = start + word.chars().next().map_or(1, char::len_utf8);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_the_text_says_would_help_is_not_a_citation() {
        let names: Vec<String> = extract(
            "`wrapping_add` turns an overflow into a wrong sum where `checked_add` would report it",
        )
        .into_iter()
        .map(|s| s.written)
        .collect();
        assert_eq!(names, ["wrapping_add"]);
    }

    fn written(text: &str) -> Vec<String> {
        extract(text).into_iter().map(|s| s.written).collect()
    }

    #[test]
    fn code_identifiers_are_picked() {
        let text = "`validate_token()` calls `Config::load` on `self.retryCount`, see `HashMap` \
                    and `MAX_RETRIES`, `ctx.Done()`, `println!`, `obj->next`";
        assert_eq!(
            written(text),
            vec![
                "validate_token()",
                "Config::load",
                "self.retryCount",
                "HashMap",
                "MAX_RETRIES",
                "ctx.Done()",
                "println!",
                "obj->next"
            ]
        );
        let s = parse_symbol("self.retryCount").unwrap();
        assert_eq!(s.parts, vec!["retryCount"]);
        let s = parse_symbol("Config::load()").unwrap();
        assert_eq!(s.parts, vec!["Config", "load"]);
    }

    #[test]
    fn words_files_values_and_expressions_are_not() {
        let text = "`error`, `Config`, `HTTP`, `app_controller.go`, `config.yaml`, `true`, `42`, \
                    `\"$@\"`, `--force`, `a + b`, `src/main.rs`, `example.com`, `v1.2`, `nil`";
        assert!(written(text).is_empty(), "{:?}", written(text));
    }

    #[test]
    fn proposed_names_and_repeats_are_left_out() {
        let text = "`load_cfg()` compares with `==`; use `strings.EqualFold` instead, or add a \
                    `validate_input()` helper. `load_cfg` again.";
        assert_eq!(written(text), vec!["load_cfg()"]);
    }

    #[test]
    fn whole_words_only() {
        assert!(contains_word("let x = load_config();", "load_config"));
        assert!(!contains_word("let x = load_config2();", "load_config"));
        assert!(!contains_word("reload_config()", "load_config"));
        assert!(contains_word("a reload_config load_config", "load_config"));
    }
}
