//! The report as one self-contained HTML page, and the store's `index.html`.
//!
//! Nothing leaves the file: no CDN, no font, no image; the style and the small optional script
//! (filters, permalinks into collapsed sections, open sections for print) are inline, and a
//! Content-Security-Policy allows exactly those two by hash, so even text that slipped through
//! escaping could neither load nor run anything. Everything in a report is untrusted (agents
//! wrote it, about a change someone else wrote): the templates escape every value
//! (minijinja's auto-escaping), Markdown goes through [`markdown`] (raw HTML shown as text, only
//! web links), and links to the code are built by [`links`](crate::report::links).

mod highlight;
mod markdown;
mod stats;
mod view;

use std::sync::LazyLock;

use base64::Engine as _;
use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value, context};
use sha2::{Digest, Sha256};

use crate::report::links::relative_path_uri;
use crate::types::{Report, SeverityCounts, Verdict};

const REPORT_TEMPLATE: &str = include_str!("templates/report.html");
const INDEX_TEMPLATE: &str = include_str!("templates/index.html");
const STATS_TEMPLATE: &str = include_str!("templates/stats.html");
const STYLE: &str = include_str!("templates/style.css");
const SCRIPT: &str = include_str!("templates/report.js");

/// The page's stylesheet: the layout and the highlighter's palette.
static CSS: LazyLock<String> = LazyLock::new(|| format!("{STYLE}{}", highlight::PALETTE_CSS));

static TEMPLATES: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // The templates are constants of this crate; the unit tests render both, so an error here
    // is a bug caught before release. It is reported in the page rather than as a panic.
    for (name, source) in [
        ("report.html", REPORT_TEMPLATE),
        ("index.html", INDEX_TEMPLATE),
        ("stats.html", STATS_TEMPLATE),
    ] {
        if let Err(e) = env.add_template(name, source) {
            crate::say!("deep-review: internal error in the {name} template: {e:#}");
        }
    }
    env
});

/// `'sha256-…'`: a CSP source that allows exactly this inline style or script.
fn csp_hash(content: &str) -> String {
    let digest = Sha256::digest(content.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The page may use its own inline style and (when given) script, and nothing else: no
/// network, no plugin, no form target, no `<base>`.
fn csp(style: &str, script: Option<&str>) -> String {
    let script = script.map_or_else(|| "'none'".to_string(), csp_hash);
    format!(
        "default-src 'none'; style-src {}; script-src {script}; base-uri 'none'; form-action 'none'",
        csp_hash(style)
    )
}

fn render_template(name: &str, ctx: Value) -> String {
    let rendered = TEMPLATES
        .get_template(name)
        .and_then(|template| template.render(ctx));
    match rendered {
        // Bidi controls and zero-width characters in agents' text (the page's own has none) are
        // shown as `\u{202e}`, never left to reorder or hide what the page says.
        Ok(html) => match crate::text::reveal_invisible(&html) {
            std::borrow::Cow::Borrowed(_) => html,
            std::borrow::Cow::Owned(revealed) => revealed,
        },
        Err(e) => {
            let mut message = String::new();
            highlight::escape(&mut message, &format!("{e:#}"));
            format!(
                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Deep Review: \
                 render error</title></head><body><h1>The report could not be rendered</h1>\
                 <p>Internal error in deep-review's {name} template:</p><pre>{message}</pre>\
                 <p>The Markdown and JSON reports hold the same content.</p></body></html>\n"
            )
        }
    }
}

/// The report as a self-contained HTML page.
pub fn render(report: &Report) -> String {
    let view = view::build(report);
    render_template(
        "report.html",
        context! {
            r => Value::from(minijinja::value::Serde(&view)),
            csp => csp(&CSS, Some(SCRIPT)),
            style_html => Value::from_safe_string(CSS.clone()),
            script_html => Value::from_safe_string(SCRIPT.to_string()),
        },
    )
}

/// One report as the store's index lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexEntry {
    /// The report id, `YYYYMMDD-HHMMSS-<target>`.
    pub id: String,
    /// The file name of the report's HTML page, beside `index.html` (`<id>.html`).
    pub html_file: String,
    pub date: Option<chrono::NaiveDateTime>,
    /// What was reviewed: `pr-236`, a branch; the index groups reports by it.
    pub target: String,
    pub round: Option<u32>,
    pub verdict: Verdict,
    /// Shown findings by severity.
    pub counts: SeverityCounts,
}

impl IndexEntry {
    /// The entry of `report`, whose page is `html_file`. The target is the label in the report's
    /// id (`20260324-131047-pr-236` → `pr-236`), else `pr-<number>`, the branch, or the id.
    pub fn from_report(report: &Report, html_file: impl Into<String>) -> IndexEntry {
        let mut counts = SeverityCounts::default();
        for f in report.findings.iter().filter(|f| f.is_shown()) {
            match f.severity {
                crate::types::Severity::Critical => counts.critical += 1,
                crate::types::Severity::Important => counts.important += 1,
                crate::types::Severity::Suggestion => counts.suggestion += 1,
            }
        }
        IndexEntry::new(&report.meta, report.verdict, counts, html_file)
    }

    /// The entry of a report known by its metadata, verdict and counts of shown findings (the
    /// store lists reports without reading their appendices).
    pub fn new(
        m: &crate::types::ReportMeta,
        verdict: crate::types::Verdict,
        counts: SeverityCounts,
        html_file: impl Into<String>,
    ) -> IndexEntry {
        let mut parts = m.id.splitn(3, '-');
        let from_id = match (parts.next(), parts.next(), parts.next()) {
            (Some(date), Some(time), Some(rest))
                if date.len() == 8
                    && time.len() == 6
                    && date.bytes().chain(time.bytes()).all(|b| b.is_ascii_digit())
                    && !rest.is_empty() =>
            {
                Some(rest.to_string())
            }
            _ => None,
        };
        let target = from_id
            .or_else(|| m.pr.as_ref().map(|pr| pr.label()))
            .or_else(|| m.branch.clone())
            .unwrap_or_else(|| m.id.clone());
        IndexEntry {
            id: m.id.clone(),
            html_file: html_file.into(),
            date: m.date,
            target,
            round: m.round,
            verdict,
            counts,
        }
    }
}

#[derive(serde::Serialize)]
struct IndexGroup {
    target: String,
    anchor: String,
    entries: Vec<IndexRow>,
}

#[derive(serde::Serialize)]
struct IndexRow {
    id: String,
    href: Option<String>,
    date: Option<String>,
    round: Option<u32>,
    verdict: String,
    verdict_class: &'static str,
    critical: usize,
    important: usize,
    suggestion: usize,
}

/// The link to a report's page: a plain file name beside the index, percent-encoded.
fn index_href(html_file: &str) -> Option<String> {
    if html_file.contains('/') || html_file.starts_with('.') {
        return None;
    }
    relative_path_uri(html_file)
}

/// The store's `index.html`: every report with its date, target, round, verdict and counts,
/// grouped by target; the target reviewed most recently first, each group newest first.
pub fn render_index(entries: &[IndexEntry]) -> String {
    render_index_linking(entries, None)
}

/// [`render_index`] with a link to the reviewer scorecards page, `stats_file` beside the index.
pub fn render_index_linking(entries: &[IndexEntry], stats_file: Option<&str>) -> String {
    let mut sorted: Vec<&IndexEntry> = entries.iter().collect();
    // Newest first: by date, then by id (ids start with the time), undated last.
    sorted
        .sort_by(|a, b| (b.date.is_some(), b.date, &b.id).cmp(&(a.date.is_some(), a.date, &a.id)));
    let mut groups: Vec<IndexGroup> = Vec::new();
    let mut group_of: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for e in sorted {
        let index = *group_of.entry(e.target.as_str()).or_insert_with(|| {
            groups.push(IndexGroup {
                target: e.target.clone(),
                anchor: format!("target-{}", groups.len() + 1),
                entries: Vec::new(),
            });
            groups.len() - 1
        });
        groups[index].entries.push(IndexRow {
            id: e.id.clone(),
            href: index_href(&e.html_file),
            date: e.date.map(|d| d.format("%Y-%m-%d %H:%M").to_string()),
            round: e.round,
            verdict: e.verdict.to_string(),
            verdict_class: view::verdict_class(e.verdict),
            critical: e.counts.critical,
            important: e.counts.important,
            suggestion: e.counts.suggestion,
        });
    }
    render_template(
        "index.html",
        context! {
            groups => Value::from(minijinja::value::Serde(&groups)),
            total => entries.len(),
            stats_href => stats_file.and_then(index_href),
            generator => format!("deep-review {}", env!("CARGO_PKG_VERSION")),
            csp => csp(&CSS, None),
            style_html => Value::from_safe_string(CSS.clone()),
        },
    )
}

/// The agents' scorecards (`deep-review stats`) as a self-contained page, with the same
/// discipline as the report page: every value escaped, no script, nothing loaded, the chart
/// inline SVG. `index_file` links back to the store's index beside it.
pub fn render_stats(stats: &crate::types::outcomes::Stats, index_file: Option<&str>) -> String {
    let view = stats::build(stats);
    render_template(
        "stats.html",
        context! {
            s => Value::from(minijinja::value::Serde(&view)),
            index_href => index_file.and_then(index_href),
            generator => format!("deep-review {}", env!("CARGO_PKG_VERSION")),
            csp => csp(&CSS, None),
            style_html => Value::from_safe_string(CSS.clone()),
        },
    )
}

#[cfg(test)]
mod tests;
