//! Untrusted Markdown (finding bodies, summaries, the raw reviews) as safe HTML.
//!
//! pulldown-cmark parses; before its HTML writer runs, every event that could carry markup or
//! reach the network is rewritten: raw HTML becomes text (so `<img onerror=…>` shows as written),
//! an HTML block becomes a code block, links keep only `https:`, `http:`, `mailto:` and `#`
//! targets (any other link is its text alone), images become links to the image (the page loads
//! nothing), and code blocks are highlighted by [`highlight`](super::highlight).

use pulldown_cmark::{
    CodeBlockKind, CowStr, Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd,
};

use super::highlight::{self, Highlighter};
use crate::report::links::is_safe_href;

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// A block of code as the report shows it: highlighted, and numbered from `first_line` when
/// the lines are known.
#[derive(Debug, Clone, Copy, Default)]
pub struct CodeView<'a> {
    pub language: Option<&'a str>,
    /// The file the code comes from: picks the grammar when the fence has no language.
    pub path: Option<&'a str>,
    pub first_line: Option<u32>,
}

/// `<pre class="code"><code>…</code></pre>`, one `<span class="line">` per line.
pub fn code_block(hl: &Highlighter, code: &str, view: CodeView<'_>) -> String {
    let lines = hl.lines(code, view.language, view.path);
    let line_texts: Vec<&str> = code.split('\n').collect();
    let numbered = view.first_line.is_some();
    let mut out = String::with_capacity(code.len() * 2 + 64);
    out.push_str(if numbered {
        "<pre class=\"code numbered\"><code>"
    } else {
        "<pre class=\"code\"><code>"
    });
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let number = view
            .first_line
            .map(|first| first.saturating_add(u32::try_from(i).unwrap_or(u32::MAX)));
        out.push_str(
            match diff_line_class(view.language, line_texts.get(i).copied()) {
                Some(class) => class,
                None => "<span class=\"line\"",
            },
        );
        if let Some(n) = number {
            out.push_str(&format!(" data-n=\"{n}\""));
        }
        out.push('>');
        out.push_str(line);
        out.push_str("</span>");
    }
    out.push_str("</code></pre>");
    out
}

/// In a diff, added and removed lines are set apart across the whole line (not the file
/// headers `+++` and `---`).
fn diff_line_class(language: Option<&str>, line: Option<&str>) -> Option<&'static str> {
    if !language.is_some_and(|l| l.eq_ignore_ascii_case("diff") || l.eq_ignore_ascii_case("patch"))
    {
        return None;
    }
    let line = line?;
    if line.starts_with('+') && !line.starts_with("+++") {
        Some("<span class=\"line line-add\"")
    } else if line.starts_with('-') && !line.starts_with("---") {
        Some("<span class=\"line line-del\"")
    } else {
        None
    }
}

/// Markdown blocks as HTML. `heading_shift` lowers headings (a review's `###` inside the
/// report's own sections), never below `h6`.
pub fn to_html(hl: &Highlighter, markdown: &str, heading_shift: usize) -> String {
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    let events = SafeEvents::new(hl, Parser::new_ext(markdown, options()), heading_shift);
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// Markdown as HTML, without the paragraph around it when it is one paragraph: a note that
/// runs on with its attribution pills.
pub fn to_html_compact(hl: &Highlighter, markdown: &str) -> String {
    let html = to_html(hl, markdown, 3);
    let body = html.trim_end();
    match body
        .strip_prefix("<p>")
        .and_then(|b| b.strip_suffix("</p>"))
    {
        Some(inner) if !inner.contains("<p>") && !inner.contains("</p>") => inner.to_string(),
        _ => html,
    }
}

/// One line of Markdown (a finding's title) as inline HTML: emphasis, code spans and safe links
/// are kept. A line that Markdown would read as anything but one paragraph (`# x`, `- x`, a
/// `<script>` line, which is an HTML block) is shown as plain text, exactly as written.
pub fn inline_to_html(markdown: &str) -> String {
    // A title's code block is never shown, so nothing is highlighted.
    let none = Highlighter::new(0);
    let events: Vec<Event<'_>> =
        SafeEvents::new(&none, Parser::new_ext(markdown, options()), 0).collect();
    let one_paragraph = matches!(events.first(), Some(Event::Start(Tag::Paragraph)))
        && matches!(events.last(), Some(Event::End(TagEnd::Paragraph)))
        && events[1..events.len() - 1].iter().all(|e| match e {
            Event::Start(tag) => !is_block(tag),
            Event::End(end) => !is_block_end(*end),
            Event::Html(_) => false,
            _ => true,
        });
    let mut out = String::with_capacity(markdown.len() + 16);
    if one_paragraph {
        let inline = events[1..events.len() - 1]
            .iter()
            .cloned()
            .map(|e| match e {
                Event::SoftBreak | Event::HardBreak => Event::Text(" ".into()),
                other => other,
            });
        pulldown_cmark::html::push_html(&mut out, inline);
    } else {
        highlight::escape(&mut out, markdown.trim());
    }
    out.trim().to_string()
}

fn is_block(tag: &Tag<'_>) -> bool {
    !matches!(
        tag,
        Tag::Emphasis | Tag::Strong | Tag::Strikethrough | Tag::Link { .. }
    )
}

fn is_block_end(end: TagEnd) -> bool {
    !matches!(
        end,
        TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Link
    )
}

/// The rewriting pass over the parser's events (see the module doc).
struct SafeEvents<'h, 'a, I> {
    hl: &'h Highlighter,
    inner: I,
    heading_shift: usize,
    /// Inside a link whose target was refused (or an image turned into a link that was
    /// refused): its end tag is dropped too. Links cannot nest, so one flag is enough.
    dropping_link: bool,
    /// Inside a code block: its language and text so far.
    code: Option<(Option<String>, String)>,
    _marker: std::marker::PhantomData<&'a ()>,
}

impl<'h, 'a, I: Iterator<Item = Event<'a>>> SafeEvents<'h, 'a, I> {
    fn new(hl: &'h Highlighter, inner: I, heading_shift: usize) -> Self {
        SafeEvents {
            hl,
            inner,
            heading_shift,
            dropping_link: false,
            code: None,
            _marker: std::marker::PhantomData,
        }
    }

    fn shift(&self, level: HeadingLevel) -> HeadingLevel {
        let n = (level as usize + self.heading_shift).min(6);
        HeadingLevel::try_from(n).unwrap_or(HeadingLevel::H6)
    }

    /// The link that replaces a link or image to `dest`, or `None` when `dest` is refused.
    fn link(
        &mut self,
        link_type: LinkType,
        dest: CowStr<'a>,
        title: CowStr<'a>,
    ) -> Option<Event<'a>> {
        let href = match link_type {
            LinkType::Email => format!("mailto:{dest}"),
            _ => dest.to_string(),
        };
        if !is_safe_href(&href) {
            self.dropping_link = true;
            return None;
        }
        Some(Event::Start(Tag::Link {
            link_type: LinkType::Inline,
            dest_url: href.into(),
            title,
            id: CowStr::Borrowed(""),
        }))
    }
}

impl<'a, I: Iterator<Item = Event<'a>>> Iterator for SafeEvents<'_, 'a, I> {
    type Item = Event<'a>;

    fn next(&mut self) -> Option<Event<'a>> {
        loop {
            let event = self.inner.next()?;
            if let Some((lang, text)) = &mut self.code {
                match event {
                    Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) | Event::Code(t) => {
                        text.push_str(&t);
                        continue;
                    }
                    Event::End(TagEnd::CodeBlock | TagEnd::HtmlBlock) => {
                        let html = code_block(
                            self.hl,
                            text,
                            CodeView {
                                language: lang.as_deref(),
                                ..CodeView::default()
                            },
                        );
                        self.code = None;
                        return Some(Event::Html(html.into()));
                    }
                    _ => continue,
                }
            }
            let mapped = match event {
                Event::Html(t) | Event::InlineHtml(t) => Event::Text(t),
                Event::Start(Tag::HtmlBlock) => {
                    self.code = Some((Some("html".into()), String::new()));
                    continue;
                }
                Event::Start(Tag::CodeBlock(kind)) => {
                    let lang = match kind {
                        CodeBlockKind::Fenced(info) => info
                            .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
                            .next()
                            .filter(|l| !l.is_empty())
                            .map(str::to_string),
                        CodeBlockKind::Indented => None,
                    };
                    self.code = Some((lang, String::new()));
                    continue;
                }
                Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    title,
                    ..
                }) => match self.link(link_type, dest_url, title) {
                    Some(link) => link,
                    None => continue,
                },
                Event::Start(Tag::Image {
                    link_type,
                    dest_url,
                    title,
                    ..
                }) => match self.link(link_type, dest_url, title) {
                    Some(link) => link,
                    None => continue,
                },
                Event::End(TagEnd::Link | TagEnd::Image) => {
                    if std::mem::take(&mut self.dropping_link) {
                        continue;
                    }
                    Event::End(TagEnd::Link)
                }
                Event::Start(Tag::Heading { level, .. }) => Event::Start(Tag::Heading {
                    level: self.shift(level),
                    id: None,
                    classes: Vec::new(),
                    attrs: Vec::new(),
                }),
                Event::End(TagEnd::Heading(level)) => {
                    Event::End(TagEnd::Heading(self.shift(level)))
                }
                // Math and footnotes are not enabled; metadata blocks neither. Anything else is
                // markup pulldown-cmark writes itself, escaping the text.
                other => other,
            };
            return Some(mapped);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hl() -> Highlighter {
        Highlighter::new(highlight::PAGE_BUDGET)
    }

    #[test]
    fn raw_html_is_shown_as_text() {
        let html = to_html(
            &hl(),
            "Look: <img src=x onerror=\"alert(1)\"> and <script>alert(2)</script>",
            0,
        );
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;img src=x onerror="), "{html}");
    }

    #[test]
    fn an_html_block_becomes_a_code_block() {
        let html = to_html(
            &hl(),
            "<div onclick=\"x()\">\n<script>alert(1)</script>\n</div>\n",
            0,
        );
        assert!(html.starts_with("<pre class=\"code\">"), "{html}");
        assert!(
            !html.contains("<script") && !html.contains("<div"),
            "{html}"
        );
        assert!(html.contains("alert</span>"), "{html}");
    }

    #[test]
    fn only_safe_links_survive_and_images_load_nothing() {
        let html = to_html(
            &hl(),
            "[a](javascript:alert(1)) [b](https://example.org/x \"t\") [c](data:text/html,x) \
             ![d](https://tracker.example/p.png) ![e](javascript:alert(3)) <mailto:x@y.z> [f](#I1)",
            0,
        );
        assert!(!html.to_ascii_lowercase().contains("javascript"), "{html}");
        assert!(!html.contains("data:"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("<a href=\"https://example.org/x\" title=\"t\">b</a>"),
            "{html}"
        );
        assert!(
            html.contains("<a href=\"https://tracker.example/p.png\">d</a>"),
            "{html}"
        );
        assert!(!html.contains(">a</a>") && html.contains("a "), "{html}");
        assert!(html.contains("href=\"mailto:x@y.z\""), "{html}");
        assert!(html.contains("href=\"#I1\""), "{html}");
        assert!(html.contains(" e "), "{html}");
    }

    #[test]
    fn code_blocks_are_highlighted_and_escaped() {
        let html = to_html(
            &hl(),
            "```go\nfunc f() { s := \"</code></pre><b>\" }\n```\n",
            0,
        );
        assert!(
            html.contains("<span class=\"hl-s\">&lt;&#x2f;code&gt;"),
            "{html}"
        );
        assert_eq!(html.matches("</pre>").count(), 1, "{html}");
        assert!(!html.contains("<b>"), "{html}");
    }

    #[test]
    fn headings_are_shifted_and_capped() {
        let html = to_html(&hl(), "# One\n\n### Three\n\n###### Six\n", 2);
        assert!(html.contains("<h3>One</h3>"), "{html}");
        assert!(html.contains("<h5>Three</h5>"), "{html}");
        assert!(html.contains("<h6>Six</h6>"), "{html}");
    }

    #[test]
    fn titles_keep_inline_markup_only() {
        assert_eq!(
            inline_to_html("`Settled` docstring <b>omits</b> *it*"),
            "<code>Settled</code> docstring &lt;b&gt;omits&lt;/b&gt; <em>it</em>"
        );
        assert_eq!(inline_to_html("# not a heading"), "# not a heading");
        assert_eq!(inline_to_html("- item"), "- item");
        assert_eq!(
            inline_to_html("<script>x</script> in `f`"),
            "&lt;script&gt;x&lt;&#x2f;script&gt; in `f`"
        );
        assert_eq!(inline_to_html(""), "");
    }

    #[test]
    fn numbered_code_counts_from_the_first_line() {
        let html = code_block(
            &hl(),
            "a\nb\nc\n",
            CodeView {
                first_line: Some(10),
                ..CodeView::default()
            },
        );
        assert!(
            html.contains("<span class=\"line\" data-n=\"10\">a</span>"),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"line\" data-n=\"11\">b</span>"),
            "{html}"
        );
        assert!(html.contains("data-n=\"12\">c<"), "{html}");
        assert!(!html.contains("data-n=\"13\""), "{html}");
    }
}
