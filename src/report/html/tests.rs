//! Unit tests of the HTML report: structure, escaping of hostile text, links, the CSP, the index.

use super::*;
use crate::types::{MergedFinding, Tier};

/// A report with every section, tier and badge, a forge, and hostile text in titles, bodies,
/// paths, agent names, categories and the appendix (also used by the browser test).
const SHOWCASE: &str = include_str!("../../../tests/fixtures/report/showcase.json");

fn showcase() -> Report {
    serde_json::from_str(SHOWCASE).expect("the showcase fixture is a report")
}

fn empty_report() -> Report {
    Report {
        verdict: Verdict::MergeAsIs,
        ..Report::default()
    }
}

/// The text between the first `open` and the next `close`.
fn between<'a>(html: &'a str, open: &str, close: &str) -> &'a str {
    let start = html.find(open).unwrap_or_else(|| panic!("no {open}")) + open.len();
    let end = html[start..]
        .find(close)
        .unwrap_or_else(|| panic!("no {close}"))
        + start;
    &html[start..end]
}

/// The `<article>` of finding `id`.
fn card<'a>(html: &'a str, id: &str) -> &'a str {
    let attr = html
        .find(&format!("data-finding-id=\"{id}\""))
        .unwrap_or_else(|| panic!("no card {id}"));
    let start = html[..attr].rfind("<article").unwrap();
    let end = html[start..].find("</article>").unwrap() + start;
    &html[start..end]
}

#[test]
fn every_finding_has_one_card_with_its_id_and_anchor_in_its_section() {
    let report = showcase();
    let html = render(&report);
    for f in &report.findings {
        let attr = format!("data-finding-id=\"{}\"", f.id);
        assert_eq!(html.matches(&attr).count(), 1, "{}", f.id);
        assert!(
            html.contains(&format!("id=\"{}\"", f.id)),
            "anchor of {}",
            f.id
        );
        assert!(
            html.contains(&format!("href=\"#{}\"", f.id)),
            "permalink of {}",
            f.id
        );
    }
    let shown = |f: &MergedFinding| f.tier == Tier::Shown;
    assert_eq!(report.findings.iter().filter(|f| shown(f)).count(), 4);
    // Section order: Critical, Important, Suggestions, Unverified, Low Confidence (collapsed).
    let positions: Vec<usize> = [
        "id=\"critical-issues\"",
        "data-finding-id=\"C1\"",
        "id=\"important-issues\"",
        "data-finding-id=\"I1\"",
        "id=\"suggestions\"",
        "data-finding-id=\"S1\"",
        "id=\"unverified-findings\"",
        "data-finding-id=\"I3\"",
        "id=\"low-confidence\"",
        "<details class=\"low-confidence\">",
        "data-finding-id=\"S2\"",
        "id=\"design-observations\"",
        "id=\"agent-performance-retro\"",
        "id=\"appendix\"",
    ]
    .iter()
    .map(|needle| html.find(needle).unwrap_or_else(|| panic!("no {needle}")))
    .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    assert!(card(&html, "I3").contains("tier-unverified"));
    assert!(card(&html, "S2").contains("tier-low-confidence"));
    assert!(html.contains("<title>Deep Review: 20261202-101500-feature-x</title>"));
}

#[test]
fn hostile_text_is_shown_as_text_and_never_as_markup() {
    let html = render(&showcase());
    // The page's own script is the only one; nothing loads an image or a frame.
    assert_eq!(html.matches("<script").count(), 1, "only the page's script");
    for tag in ["<img", "<iframe", "<link", "<object", "<embed", "<base"] {
        assert!(!html.contains(tag), "{tag} in the page");
    }
    // No element carries an event handler: the report's `onerror=` and `onmouseover=` are text
    // (outside any tag, or inside an attribute value with its quotes escaped).
    let handler = regex::Regex::new(r#"<[a-zA-Z][^>]*\son[a-z]+\s*="#).unwrap();
    assert_eq!(handler.find(&html).map(|m| m.as_str()), None);
    assert!(
        !html.to_ascii_lowercase().contains("javascript:"),
        "a javascript: URL"
    );
    // The title with `<script>` reads as written (a line Markdown would take for an HTML
    // block is shown as plain text).
    let i2 = card(&html, "I2");
    assert!(
        i2.contains("&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;&#x2f;script&gt; Escaping of `&lt;img&gt;` names"),
        "{i2}"
    );
    // The body's raw `<img onerror>` is text.
    assert!(
        i2.contains("&lt;img src=\"https://tracker.example/pixel.png\" onerror="),
        "{i2}"
    );
    // A link to javascript: keeps its text only.
    assert!(i2.contains("Click"), "{i2}");
    // The category that tries to close its attribute is text inside the tag.
    assert!(
        i2.contains("gap&quot; onclick=&quot;document.title="),
        "{i2}"
    );
    // The hostile agent's pill: name escaped, class and filter key safe words.
    assert!(html.contains("Local &lt;i&gt;model&lt;&#x2f;i&gt;"));
    let agents = between(i2, "data-agents=\"", "\"");
    assert!(
        agents
            .split(' ')
            .all(|k| k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')),
        "{agents}"
    );
    // The quoted code closing `</code></pre>` early stays inside the block.
    let code = between(i2, "<pre class=\"code\"><code>", "</code></pre>");
    assert!(
        code.contains("<span class=\"hl-a\">onerror</span>"),
        "{code}"
    );
    assert_eq!(i2.matches("<pre").count(), i2.matches("</pre>").count());
}

#[test]
fn a_path_with_quotes_is_escaped_in_text_and_encoded_in_its_link() {
    let html = render(&showcase());
    let i2 = card(&html, "I2");
    assert!(
        i2.contains("src&#x2f;&quot;quoted&quot; dir&#x2f;it&#x27;s &lt;here&gt;.rs:3-5"),
        "{i2}"
    );
    assert!(
        i2.contains("blob&#x2f;8543b4f05341ea138f67f998d51068e11e0bc8c3&#x2f;src&#x2f;%22quoted%22%20dir&#x2f;it%27s%20%3Chere%3E.rs#L3-L5"),
        "{i2}"
    );
}

#[test]
fn code_links_to_the_forge_lines_and_is_numbered_when_verified_there() {
    let html = render(&showcase());
    let c1 = card(&html, "C1");
    assert!(
        c1.contains("href=\"https:&#x2f;&#x2f;github.com&#x2f;octo&#x2f;widgets&#x2f;blob&#x2f;8543b4f05341ea138f67f998d51068e11e0bc8c3&#x2f;src&#x2f;upload.rs#L10-L15\""),
        "{c1}"
    );
    assert!(
        c1.contains("data-n=\"10\""),
        "grounded and quoted exactly: numbered"
    );
    assert!(c1.contains("data-n=\"15\"") && !c1.contains("data-n=\"16\""));
    assert!(
        c1.contains("line line-add"),
        "the fix diff marks added lines"
    );
    let i1 = card(&html, "I1");
    assert!(
        i1.contains("data-n=\"207\""),
        "relocated: numbered at the corrected line"
    );
    // Unchecked: no numbers.
    assert!(!card(&html, "I2").contains("data-n="));
    // A file verification did not find at head gets no link (it would be the forge's 404).
    let i3 = card(&html, "I3");
    assert!(
        i3.contains("src&#x2f;retry.rs:40-44") && !i3.contains("blob"),
        "{i3}"
    );
    // Commits link to the forge.
    assert!(html.contains("widgets&#x2f;commit&#x2f;2a3c5b2\""));
}

#[test]
fn verification_calibration_and_confidence_are_on_the_cards() {
    let html = render(&showcase());
    let c1 = card(&html, "C1");
    assert!(
        c1.contains("badge badge-ok") && c1.contains(">grounded<"),
        "{c1}"
    );
    assert!(c1.contains("Codex: important → critical"), "{c1}");
    assert!(c1.contains("confidence 97%"), "{c1}");
    assert!(c1.contains("Sources: Claude Opus 4.6 C1 (critical); Codex GPT 5.4 I2 (important)"));
    let i1 = card(&html, "I1");
    assert!(i1.contains(">relocated<") && i1.contains("lines corrected 193 → 207"));
    assert!(i1.contains("known-issue comment"), "{i1}");
    let i3 = card(&html, "I3");
    assert!(i3.contains(">not found in code<") && i3.contains("missing: RetryPolicy::jitter"));
    assert!(i3.contains(">outside the change<"));
    assert!(card(&html, "S2").contains(">pre-existing<"));
}

#[test]
fn text_is_escaped_once() {
    let mut report = empty_report();
    report.summary = "A & B → C".into();
    let html = render(&report);
    assert!(html.contains("A &amp; B → C"));
    assert!(!html.contains("&amp;amp;"));
}

#[test]
fn an_empty_report_renders_with_none_in_every_section() {
    let html = render(&empty_report());
    assert!(html.contains("<title>Deep Review: </title>"));
    assert!(html.matches("<p>None.</p>").count() >= 6, "{html}");
    assert!(!html.contains("data-finding-id=\""));
}

/// Decodes the few entities minijinja writes in attributes.
fn unescape(s: &str) -> String {
    s.replace("&#x27;", "'")
        .replace("&#x2f;", "/")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

#[test]
fn the_policy_allows_exactly_the_inline_style_and_script() {
    let html = render(&showcase());
    let policy = unescape(between(
        &html,
        "http-equiv=\"Content-Security-Policy\" content=\"",
        "\"",
    ));
    assert!(policy.starts_with("default-src 'none';"), "{policy}");
    let style = between(&html, "<style>", "</style>");
    let script = between(&html, "<script>", "</script>");
    assert!(
        policy.contains(&format!("style-src {};", csp_hash(style))),
        "{policy}"
    );
    assert!(
        policy.contains(&format!("script-src {};", csp_hash(script))),
        "{policy}"
    );
    // A known vector of the hash: SHA-256 of "" in base64.
    assert_eq!(
        csp_hash(""),
        "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
    );
}

#[test]
fn markup_reaches_the_page_only_through_fields_built_from_escaped_text() {
    for (name, source) in [
        ("report.html", REPORT_TEMPLATE),
        ("index.html", INDEX_TEMPLATE),
    ] {
        for (i, _) in source.match_indices("|safe") {
            let before = &source[..i];
            let name_start = before
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .map_or(0, |p| p + 1);
            let field = &before[name_start..];
            assert!(
                field.ends_with("_html"),
                "{name}: `{field}|safe`: only *_html fields may skip escaping"
            );
        }
    }
}

fn entry(id: &str, target: &str, date: Option<&str>, verdict: Verdict) -> IndexEntry {
    IndexEntry {
        id: id.into(),
        html_file: format!("{id}.html"),
        date: date.map(|d| chrono::NaiveDateTime::parse_from_str(d, "%Y-%m-%d %H:%M").unwrap()),
        target: target.into(),
        round: Some(1),
        verdict,
        counts: SeverityCounts {
            critical: 1,
            important: 2,
            suggestion: 3,
        },
    }
}

#[test]
fn the_index_groups_by_target_newest_first() {
    let entries = [
        entry(
            "20260101-090000-pr-1",
            "pr-1",
            Some("2026-01-01 09:00"),
            Verdict::Rework,
        ),
        entry(
            "20260301-090000-pr-2",
            "pr-2",
            Some("2026-03-01 09:00"),
            Verdict::MergeAsIs,
        ),
        entry(
            "20260401-090000-pr-1",
            "pr-1",
            Some("2026-04-01 09:00"),
            Verdict::MergeWithFixes,
        ),
        entry("undated", "pr-2", None, Verdict::NoReview),
    ];
    let html = render_index(&entries);
    let pos = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("no {needle}"));
    // pr-1 holds the newest report, so it comes first; inside it, April before January.
    assert!(pos("id=\"target-1\">pr-1") < pos("id=\"target-2\">pr-2"));
    assert!(pos("20260401-090000-pr-1.html") < pos("20260101-090000-pr-1.html"));
    assert!(pos("20260101-090000-pr-1.html") < pos("20260301-090000-pr-2.html"));
    assert!(pos("20260301-090000-pr-2.html") < pos("undated.html"));
    assert_eq!(html.matches("class=\"index-entry\"").count(), 4);
    assert!(html.contains("2026-04-01 09:00"));
    assert!(html.contains("verdict verdict-fixes\">Merge with fixes<"));
    assert!(html.contains("<td class=\"num\">2</td>"));
    assert!(html.contains("4 reports of 2 targets"));
    assert!(!html.contains("<script"), "the index needs no script");
}

#[test]
fn the_index_escapes_names_and_links_only_plain_files() {
    let mut hostile = entry("x", "<script>alert(1)</script>", None, Verdict::Rework);
    hostile.html_file = "../../etc/passwd".into();
    let mut js = entry("y", "t", None, Verdict::Rework);
    js.html_file = "javascript:alert(1)".into();
    let mut spaced = entry("z", "t", None, Verdict::Rework);
    spaced.html_file = "a \"b\".html".into();
    let html = render_index(&[hostile, js, spaced]);
    assert!(!html.contains("<script"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"));
    assert!(!html.contains("passwd"));
    assert!(!html.contains("javascript"));
    assert!(html.contains("href=\"a%20%22b%22.html\""), "{html}");
}

#[test]
fn an_index_entry_takes_its_target_from_the_report_id() {
    let mut report = showcase();
    let e = IndexEntry::from_report(&report, "r.html");
    assert_eq!(e.target, "feature-x");
    assert_eq!(
        (e.counts.critical, e.counts.important, e.counts.suggestion),
        (1, 2, 1),
        "shown findings only"
    );
    assert_eq!(e.verdict, Verdict::Rework);
    report.meta.id = "custom".into();
    assert_eq!(IndexEntry::from_report(&report, "r.html").target, "pr-42");
}
