//! The agents' scorecards (`deep-review stats`) as the page's template reads them: every figure
//! already formatted, and the chart as plain numbers for inline SVG (drawn with presentation
//! attributes and the stylesheet's classes, so the page's Content-Security-Policy needs
//! nothing beyond its own style).

use serde::Serialize;

use crate::consolidate::confidence::{miss_log_ratio, raise_log_ratio};
use crate::types::Reliability;
use crate::types::outcomes::{AgentStats, FindingOutcome, Outcome, ProvenanceKind, Stats};

/// The most findings the page lists one by one (the JSON holds them all).
pub const MAX_FINDINGS_LISTED: usize = 2_000;

#[derive(Serialize)]
pub struct StatsView {
    pub summary: String,
    pub sources: String,
    pub warnings: Vec<String>,
    pub chart: Chart,
    pub agents: Vec<RowView>,
    pub by_category: Vec<RowView>,
    pub by_severity: Vec<RowView>,
    pub records: Option<RecordsView>,
    pub agreement: Option<RecordsView>,
    pub findings: Vec<FindingView>,
    pub findings_left_out: usize,
}

/// Stacked bars: each agent's findings, acted on, declined, and without a decision.
#[derive(Serialize)]
pub struct Chart {
    pub width: u32,
    pub height: u32,
    pub label_width: u32,
    pub bars: Vec<Bar>,
}

#[derive(Serialize)]
pub struct Bar {
    pub label: String,
    pub y: u32,
    pub text_y: u32,
    pub acted_w: f64,
    pub declined_x: f64,
    pub declined_w: f64,
    pub undecided_x: f64,
    pub undecided_w: f64,
    pub count_x: f64,
    /// "5 findings: 3 acted on, 1 declined, 1 no decision"
    pub title: String,
    pub counts: String,
}

#[derive(Serialize)]
pub struct RowView {
    pub agent: String,
    pub group: String,
    pub reviews: String,
    pub findings: usize,
    pub kept: usize,
    pub kept_only_it: usize,
    pub grounded: String,
    pub acted_on: String,
    pub declined: String,
    pub undecided: usize,
    pub cost_per_review: String,
    pub time_per_review: String,
    pub cost_per_acted_on: String,
    pub time_per_acted_on: String,
}

#[derive(Serialize)]
pub struct RecordsView {
    pub method: String,
    pub basis: String,
    pub rows: Vec<RecordRow>,
}

#[derive(Serialize)]
pub struct RecordRow {
    pub agent: String,
    pub category: String,
    pub acted_on: String,
    pub p_raise_real: String,
    pub p_raise_spurious: String,
    /// What raising a finding adds to its log-odds beyond the pool's, and what its silence
    /// takes: `+0.84` / `−0.20`.
    pub raise_weight: String,
    pub silence_weight: String,
}

#[derive(Serialize)]
pub struct FindingView {
    pub change: String,
    pub report: String,
    pub id: String,
    pub title: String,
    pub agents: String,
    pub outcome: &'static str,
    pub outcome_class: &'static str,
    pub source: String,
}

const BAR_HEIGHT: u32 = 22;
const BAR_GAP: u32 = 10;
const LABEL_WIDTH: u32 = 170;
const BAR_SPACE: f64 = 420.0;

pub fn build(stats: &Stats) -> StatsView {
    let shown: Vec<&FindingOutcome> = stats.findings.iter().take(MAX_FINDINGS_LISTED).collect();
    StatsView {
        summary: format!(
            "{} of {}, {} by {}.",
            crate::text::plural(stats.reports, "report", "reports"),
            crate::text::plural(stats.changes, "change", "changes"),
            crate::text::plural(stats.findings.len(), "finding", "findings"),
            crate::text::plural(stats.agents.len(), "agent", "agents"),
        ),
        sources: stats.sources.join(" and "),
        warnings: stats.warnings.clone(),
        chart: chart(&stats.agents),
        agents: stats.agents.iter().map(|a| row(a, String::new())).collect(),
        by_category: stats
            .by_category
            .iter()
            .map(|a| row(a, a.category.clone().unwrap_or_default()))
            .collect(),
        by_severity: stats
            .by_severity
            .iter()
            .map(|a| row(a, a.severity.map(|s| s.to_string()).unwrap_or_default()))
            .collect(),
        records: stats.reliability.as_ref().map(|r| records(r, stats)),
        agreement: stats
            .agreement
            .as_ref()
            .map(|a| records(&a.reliability, stats)),
        findings: shown.into_iter().map(finding).collect(),
        findings_left_out: stats.findings.len().saturating_sub(MAX_FINDINGS_LISTED),
    }
}

fn chart(agents: &[AgentStats]) -> Chart {
    let most = agents.iter().map(|a| a.findings).max().unwrap_or(0).max(1) as f64;
    let scale = BAR_SPACE / most;
    let bars = agents
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let y = BAR_GAP + i as u32 * (BAR_HEIGHT + BAR_GAP);
            let acted_w = a.acted_on as f64 * scale;
            let declined_w = a.declined as f64 * scale;
            let undecided_w = a.undecided as f64 * scale;
            let x0 = LABEL_WIDTH as f64;
            Bar {
                label: a.display.clone(),
                y,
                text_y: y + BAR_HEIGHT / 2 + 5,
                acted_w,
                declined_x: x0 + acted_w,
                declined_w,
                undecided_x: x0 + acted_w + declined_w,
                undecided_w,
                count_x: x0 + acted_w + declined_w + undecided_w + 6.0,
                title: format!(
                    "{}: {}: {} acted on, {} declined, {} with no decision",
                    a.display,
                    crate::text::plural(a.findings, "finding", "findings"),
                    a.acted_on,
                    a.declined,
                    a.undecided
                ),
                counts: format!("{} / {} / {}", a.acted_on, a.declined, a.undecided),
            }
        })
        .collect::<Vec<_>>();
    Chart {
        width: LABEL_WIDTH + BAR_SPACE as u32 + 110,
        height: BAR_GAP + bars.len() as u32 * (BAR_HEIGHT + BAR_GAP),
        label_width: LABEL_WIDTH,
        bars,
    }
}

fn pct(rate: Option<f64>) -> String {
    rate.map_or_else(|| "—".to_string(), |r| format!("{:.0}%", r * 100.0))
}

fn count_and_rate(n: usize, rate: Option<f64>) -> String {
    match rate {
        Some(r) => format!("{n} ({:.0}%)", r * 100.0),
        None => n.to_string(),
    }
}

fn usd(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_string(), crate::cost::usd)
}

fn seconds(v: Option<f64>) -> String {
    v.map_or_else(
        || "—".to_string(),
        |s| crate::text::duration_short(crate::text::seconds(s)),
    )
}

fn row(a: &AgentStats, group: String) -> RowView {
    RowView {
        agent: a.display.clone(),
        group,
        reviews: a.reviews.map_or_else(String::new, |r| r.to_string()),
        findings: a.findings,
        kept: a.kept,
        kept_only_it: a.kept_only_it,
        grounded: match a.grounded_rate {
            Some(_) => format!("{} ({} of {})", pct(a.grounded_rate), a.grounded, a.checked),
            None => "—".to_string(),
        },
        acted_on: count_and_rate(a.acted_on, a.acted_on_rate),
        declined: count_and_rate(a.declined, a.declined_rate),
        undecided: a.undecided,
        cost_per_review: usd(a.cost_per_review),
        time_per_review: seconds(a.seconds_per_review),
        cost_per_acted_on: usd(a.cost_per_acted_on),
        time_per_acted_on: seconds(a.seconds_per_acted_on),
    }
}

fn records(table: &Reliability, stats: &Stats) -> RecordsView {
    let display = |name: &str| {
        stats
            .agents
            .iter()
            .find(|a| a.agent == name)
            .map_or_else(|| name.to_string(), |a| a.display.clone())
    };
    RecordsView {
        method: table.method.as_str().to_string(),
        basis: table.basis.clone(),
        rows: table
            .rows
            .iter()
            .map(|r| RecordRow {
                agent: display(&r.agent),
                category: r.category.clone().unwrap_or_else(|| "all".to_string()),
                acted_on: match r.acted_on + r.declined {
                    0 => "none raised".to_string(),
                    n => format!("{} of {n}", r.acted_on),
                },
                p_raise_real: format!("{:.0}%", r.p_raise_real * 100.0),
                p_raise_spurious: format!("{:.0}%", r.p_raise_spurious * 100.0),
                raise_weight: format!(
                    "{:+.2}",
                    raise_log_ratio(r.p_raise_real, r.p_raise_spurious)
                        - raise_log_ratio(r.pool_raise_real, r.pool_raise_spurious)
                ),
                silence_weight: format!(
                    "{:+.2}",
                    -(miss_log_ratio(r.p_raise_real, r.p_raise_spurious)
                        - miss_log_ratio(r.pool_raise_real, r.pool_raise_spurious))
                ),
            })
            .collect(),
    }
}

fn finding(f: &FindingOutcome) -> FindingView {
    let p = &f.provenance;
    let at = |what: &str| {
        format!(
            "{what} in {}{}",
            p.report_id.as_deref().unwrap_or("?"),
            p.round.map(|r| format!(" (round {r})")).unwrap_or_default()
        )
    };
    let action = p.action.as_ref().map(|a| a.as_str()).unwrap_or("");
    FindingView {
        change: f.change.clone(),
        report: f.report_id.clone(),
        id: f.id.clone(),
        title: f.title.clone(),
        agents: f.agents.join(", "),
        outcome: f.outcome.as_str(),
        outcome_class: match f.outcome {
            Outcome::ActedOn => "outcome-acted",
            Outcome::Declined => "outcome-declined",
            Outcome::Unknown => "outcome-unknown",
        },
        source: match p.kind {
            ProvenanceKind::Resolution => at(&format!("{action}, Resolution")),
            ProvenanceKind::LaterRound => at(&format!("{action}, listed by a later round")),
            ProvenanceKind::NotRaisedAgain => at("not raised again, no decision"),
            ProvenanceKind::NoDecision => "no decision recorded".to_string(),
        },
    }
}
