//! Code identifiers a finding names in backticks, and which of them exist nowhere.
//!
//! Reviewers put all sorts of things in backticks: identifiers, file names, flags, literal
//! values, whole expressions, plain words. Only spans that look like code identifiers are
//! checked (snake_case, CamelCase, `a.b`, `A::b`, `f()`), so a missing ordinary word or a value
//! is never reported. A qualified name counts as present when each of its parts occurs as a
//! whole word somewhere in the repository at head.

use std::sync::LazyLock;

use regex::Regex;

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
/// something the code has: "use `strings.EqualFold`", "add a `validate_input()` helper".
const PROPOSAL_CUES: &[&str] = &[
    "use ",
    "using ",
    "consider",
    "instead",
    "prefer",
    "replace",
    "switch to",
    "such as",
    "e.g.",
    "like ",
    "add ",
    "adding ",
    "introduce",
    "rename",
    "new ",
    "call to ",
    "missing ",
    "no ",
    "lacks ",
    "should call",
    "could call",
];

/// The spans of `text` in backticks that look like code identifiers, in order, one per
/// identifier (`f()` and `f` are one), leaving out names the text proposes rather than cites.
pub fn extract(text: &str) -> Vec<Symbol> {
    let mut out: Vec<Symbol> = Vec::new();
    for cap in BACKTICKED.captures_iter(text) {
        let (Some(whole), Some(inner)) = (cap.get(0), cap.get(1)) else {
            continue;
        };
        if is_proposal(&text[..whole.start()]) || is_hypothetical(&text[whole.end()..]) {
            continue;
        }
        if let Some(sym) = parse_symbol(inner.as_str().trim())
            && !out.iter().any(|s| s.parts == sym.parts)
        {
            out.push(sym);
        }
    }
    out
}

/// Whether the words just after a backticked name make it hypothetical: "where `checked_add`
/// would report it" names something the code could use, not something it has.
fn is_hypothetical(after: &str) -> bool {
    let lower = after.trim_start().to_ascii_lowercase();
    ["would ", "could ", "might "]
        .iter()
        .any(|cue| lower.starts_with(cue))
}

/// Whether the words just before a backticked name (up to 24 bytes, within the sentence)
/// propose it: "use", "consider", "add a", ...
fn is_proposal(before: &str) -> bool {
    let mut start = before.len().saturating_sub(24);
    while !before.is_char_boundary(start) {
        start += 1;
    }
    let window = &before[start..];
    let window = match window.rfind(['.', ';', ':', '\n']) {
        Some(at) if !window[..=at].ends_with("e.g.") => &window[at + 1..],
        _ => window,
    };
    let lower = window.to_ascii_lowercase();
    PROPOSAL_CUES.iter().any(|cue| {
        lower
            .match_indices(cue)
            .any(|(at, _)| at == 0 || !lower.as_bytes()[at - 1].is_ascii_alphabetic())
    })
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
