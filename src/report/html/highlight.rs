//! Code highlighted at render time with syntect (the Sublime Text grammars, pure-Rust regexes).
//!
//! Each token gets one class of a small palette (`hl-k` keyword, `hl-s` string, ...) chosen the
//! way a theme chooses a colour: the most specific scope selector that matches the token's scope
//! stack wins. The page's stylesheet colours the classes for light and dark mode, so the report
//! needs no theme file and no script. Every line comes back as balanced HTML on its own (spans
//! never cross a line), so lines can be numbered and marked one by one.

use std::str::FromStr;
use std::sync::LazyLock;

use std::cell::Cell;
use std::fmt::Write;

use minijinja::HtmlEscape;
use syntect::easy::ScopeRangeIterator;
use syntect::highlighting::ScopeSelectors;
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

/// Lines longer than this are escaped but not highlighted: the grammars' regexes run per line,
/// and a minified or hostile line must not cost more than its length.
const MAX_HIGHLIGHTED_LINE: usize = 1_000;
/// A block is highlighted up to this many bytes; the rest is escaped only.
const MAX_HIGHLIGHTED_BLOCK: usize = 64 * 1024;
/// A page highlights this many bytes of code in all; the rest is escaped only. The grammars
/// cost about half a millisecond a line (fancy-regex backtracks), so a report with megabytes of
/// code in its raw reviews still renders in seconds.
pub const PAGE_BUDGET: usize = 256 * 1024;

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);

/// The palette: a class per kind of token and the scopes it covers (as in a theme).
static PALETTE: LazyLock<Vec<(&'static str, ScopeSelectors)>> = LazyLock::new(|| {
    [
        ("hl-c", "comment, punctuation.definition.comment"),
        ("hl-s", "string, punctuation.definition.string"),
        (
            "hl-k",
            "keyword, storage, keyword.operator.word, variable.language",
        ),
        ("hl-o", "keyword.operator"),
        (
            "hl-n",
            "constant.numeric, constant.language, constant.character, constant.other",
        ),
        (
            "hl-f",
            "entity.name.function, support.function, variable.function",
        ),
        (
            "hl-t",
            "entity.name.type, entity.name.class, entity.name.struct, entity.name.enum, \
             support.type, support.class, storage.type",
        ),
        (
            "hl-a",
            "entity.name.tag, entity.other.attribute-name, meta.mapping.key string",
        ),
        ("hl-i", "markup.inserted"),
        ("hl-d", "markup.deleted"),
        (
            "hl-h",
            "meta.diff.range, meta.diff.header, meta.diff.index, markup.heading",
        ),
    ]
    .into_iter()
    .map(|(class, selectors)| {
        // The selectors above are constants of this file: a typo fails the unit tests.
        let parsed = ScopeSelectors::from_str(selectors).unwrap_or_default();
        (class, parsed)
    })
    .collect()
});

/// The grammar for a fence's language tag (`go`, `rust`, `yaml`, `diff`), else for the file's
/// extension, else none (plain text).
fn syntax_for(language: Option<&str>, path: Option<&str>) -> Option<&'static SyntaxReference> {
    let by_language = language
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .and_then(|l| SYNTAXES.find_syntax_by_token(l));
    let by_path = || {
        let name = path?.rsplit('/').next()?;
        let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or(name);
        SYNTAXES.find_syntax_by_extension(ext)
    };
    by_language.or_else(by_path)
}

/// The palette class for a token with this scope stack, if any selector matches.
fn class_for(stack: &ScopeStack) -> Option<&'static str> {
    PALETTE
        .iter()
        .filter_map(|(class, sel)| sel.does_match(stack.as_slice()).map(|p| (p, *class)))
        .max_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal))
        .map(|(_, class)| class)
}

/// The one escaper of the HTML report (minijinja's, as the templates use): `& < > " ' /`.
pub fn escape(out: &mut String, text: &str) {
    // Writing to a String cannot fail.
    let _ = write!(out, "{}", HtmlEscape(text));
}

/// Highlights code within a budget of bytes shared by a whole page.
#[derive(Debug)]
pub struct Highlighter {
    budget: Cell<usize>,
}

impl Highlighter {
    pub fn new(budget: usize) -> Self {
        Highlighter {
            budget: Cell::new(budget),
        }
    }

    /// `code` as one HTML fragment per line (without the newline), every character escaped,
    /// tokens wrapped in `<span class="hl-…">`. `language` is the fence's tag, `path` the file
    /// it quotes. Past the block's or the page's budget, lines are escaped only.
    pub fn lines(&self, code: &str, language: Option<&str>, path: Option<&str>) -> Vec<String> {
        let code = code.strip_suffix('\n').unwrap_or(code);
        let mut lines = Vec::new();
        let mut state = syntax_for(language, path).map(|s| (ParseState::new(s), ScopeStack::new()));
        let mut budget = MAX_HIGHLIGHTED_BLOCK.min(self.budget.get());
        let start = budget;
        for raw_line in code.split('\n') {
            let line = raw_line.strip_suffix('\r').unwrap_or(raw_line);
            let mut html = String::with_capacity(line.len() + 16);
            if line.len() > MAX_HIGHLIGHTED_LINE || line.len() >= budget {
                state = None;
            }
            match state.as_mut() {
                Some((parse, stack)) => {
                    budget -= line.len() + 1;
                    if !highlight_line(&mut html, line, parse, stack) {
                        // A grammar error: the rest of the block is plain text.
                        html.clear();
                        escape(&mut html, line);
                        state = None;
                    }
                }
                None => escape(&mut html, line),
            }
            lines.push(html);
        }
        self.budget.set(self.budget.get() - (start - budget));
        lines
    }
}

/// Appends one highlighted line; false when the grammar failed on it.
fn highlight_line(
    out: &mut String,
    line: &str,
    parse: &mut ParseState,
    stack: &mut ScopeStack,
) -> bool {
    // The `newlines` grammars expect each line with its newline.
    let with_newline = format!("{line}\n");
    let Ok(ops) = parse.parse_line(&with_newline, &SYNTAXES) else {
        return false;
    };
    for (range, op) in ScopeRangeIterator::new(&ops, &with_newline) {
        if stack.apply(op).is_err() {
            return false;
        }
        let end = range.end.min(line.len());
        if range.start >= end {
            continue;
        }
        let text = &with_newline[range.start..end];
        match class_for(stack) {
            Some(class) => {
                out.push_str("<span class=\"");
                out.push_str(class);
                out.push_str("\">");
                escape(out, text);
                out.push_str("</span>");
            }
            None => escape(out, text),
        }
    }
    true
}

/// The stylesheet rules of the palette, for light and dark pages.
pub const PALETTE_CSS: &str = r#"
.hl-c { color: #6e7781; font-style: italic; }
.hl-s { color: #0a3069; }
.hl-k { color: #cf222e; }
.hl-o { color: #cf222e; }
.hl-n { color: #0550ae; }
.hl-f { color: #8250df; }
.hl-t { color: #953800; }
.hl-a { color: #116329; }
.hl-i { color: #116329; }
.hl-d { color: #82071e; }
.hl-h { color: #0550ae; font-weight: 600; }
@media (prefers-color-scheme: dark) {
  .hl-c { color: #8b949e; }
  .hl-s { color: #a5d6ff; }
  .hl-k, .hl-o { color: #ff7b72; }
  .hl-n { color: #79c0ff; }
  .hl-f { color: #d2a8ff; }
  .hl-t { color: #ffa657; }
  .hl-a { color: #7ee787; }
  .hl-i { color: #aff5b4; }
  .hl-d { color: #ffdcd7; }
  .hl-h { color: #79c0ff; }
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_palette_selector_parses() {
        for (class, sel) in PALETTE.iter() {
            assert!(!sel.selectors.is_empty(), "{class} has no selector");
        }
    }

    #[test]
    fn go_keywords_strings_and_comments_get_their_classes() {
        let lines = Highlighter::new(PAGE_BUDGET).lines(
            "func f() string {\n\t// note\n\treturn \"<b>\"\n}\n",
            Some("go"),
            None,
        );
        assert_eq!(lines.len(), 4);
        assert!(
            lines[0].contains("hl-") && lines[0].contains(">func</span>"),
            "{}",
            lines[0]
        );
        assert!(
            lines[2].contains("<span class=\"hl-k\">return</span>"),
            "{}",
            lines[2]
        );
        assert!(lines[1].contains("hl-c"), "{}", lines[1]);
        assert!(lines[2].contains("&lt;b&gt;"), "{}", lines[2]);
        assert!(!lines.concat().contains("<b>"));
    }

    #[test]
    fn the_language_comes_from_the_path_when_the_fence_has_none() {
        let lines = Highlighter::new(PAGE_BUDGET).lines("fn main() {}", None, Some("src/main.rs"));
        assert!(lines[0].contains("hl-"), "{}", lines[0]);
        let plain =
            Highlighter::new(PAGE_BUDGET).lines("fn main() {}", None, Some("notes.unknown-ext"));
        assert_eq!(plain[0], "fn main() {}");
    }

    #[test]
    fn spans_never_cross_lines() {
        let lines =
            Highlighter::new(PAGE_BUDGET).lines("/* a\n b <i>\n c */ x", Some("rust"), None);
        for line in &lines {
            assert_eq!(
                line.matches("<span").count(),
                line.matches("</span>").count(),
                "{line}"
            );
        }
        assert!(lines[1].contains("&lt;i&gt;"));
    }

    #[test]
    fn diffs_mark_added_and_removed_lines() {
        let lines =
            Highlighter::new(PAGE_BUDGET).lines("@@ -1 +1 @@\n-old\n+new\n", Some("diff"), None);
        assert!(lines[1].contains("hl-d"), "{}", lines[1]);
        assert!(lines[2].contains("hl-i"), "{}", lines[2]);
    }

    #[test]
    fn the_page_budget_is_shared_by_blocks_and_then_spent() {
        let hl = Highlighter::new(35);
        let first = hl.lines("let a = 1;\nlet b = 2;", Some("rust"), None);
        assert!(first.iter().all(|l| l.contains("hl-")), "{first:?}");
        let second = hl.lines("let c = 3;\nlet d = 4;", Some("rust"), None);
        assert!(second[0].contains("hl-"), "{second:?}");
        assert_eq!(second[1], "let d = 4;", "over the budget: escaped only");
        assert_eq!(hl.lines("let e = 5;", Some("rust"), None)[0], "let e = 5;");
    }

    #[test]
    fn a_very_long_line_is_escaped_without_highlighting() {
        let long = format!("let x = \"{}<script>\";", "a".repeat(5_000));
        let lines = Highlighter::new(PAGE_BUDGET).lines(&long, Some("rust"), None);
        assert!(!lines[0].contains("<span"));
        assert!(lines[0].ends_with("&lt;script&gt;&quot;;"), "{}", lines[0]);
    }
}
