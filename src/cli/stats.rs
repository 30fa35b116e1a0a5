//! `deep-review stats`: each agent's scorecard over the store's reports (and the branch
//! `publish` writes, when asked), from what became of its findings. A table, JSON
//! (`deep-review schema stats`) or the store's `stats.html`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use crate::outcomes::load;
use crate::outcomes::stats::{self, AgentStats, Stats};
use crate::text::printable_line;
use crate::types::Reliability;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatsFormat {
    /// Tables for the terminal.
    Table,
    /// Everything, every finding's fate included (`deep-review schema stats`).
    Json,
    /// The self-contained page with a chart: written to the store as `stats.html` (linked from
    /// its `index.html`), or to `--out`.
    Html,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    #[arg(long, value_enum, default_value = "table")]
    pub format: StatsFormat,

    /// Write to FILE instead (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Also read the reports `deep-review publish` committed to this branch (`--branch` alone:
    /// `reviews`); a report in both counts once.
    #[arg(long, value_name = "BRANCH", num_args = 0..=1, default_missing_value = "reviews")]
    pub branch: Option<String>,

    /// Also estimate each agent's reliability from agreement alone (Dawid-Skene), beside the
    /// one learnt from decisions.
    #[arg(long)]
    pub agreement: bool,

    /// The store folder (default: `deep-review/` in the repository's git directory, shared by
    /// its worktrees).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,

    /// The repository whose branch `--branch` reads (any directory inside it).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
}

pub fn execute(args: StatsArgs) -> anyhow::Result<ExitCode> {
    let store = super::list::store_at(args.store.as_deref())?;
    let mut loaded = load::from_store(&store, &|_| false);
    if let Some(branch) = &args.branch {
        loaded.merge(load::from_branch(&args.repo, branch)?);
    }
    for w in &loaded.warnings {
        crate::say!("deep-review: warning: {}", printable_line(w));
    }
    let stats = stats::compute(&loaded, args.agreement);
    match args.format {
        StatsFormat::Json => super::output::write_to(
            args.out.as_deref(),
            &format!("{}\n", serde_json::to_string_pretty(&stats)?),
        )?,
        StatsFormat::Table => super::output::write_to(args.out.as_deref(), &table(&stats))?,
        StatsFormat::Html => match &args.out {
            Some(out) => super::output::write_to(
                Some(out),
                &crate::report::html::render_stats(&stats, None),
            )?,
            None => {
                let html = crate::report::html::render_stats(&stats, Some("index.html"));
                let path = store.write_report(crate::store::reports::STATS_PAGE, "html", &html)?;
                store.write_index()?;
                super::print_out(&format!("{}\n", path.display()))?;
            }
        },
    }
    Ok(ExitCode::SUCCESS)
}

/// The scorecards as terminal tables.
pub fn table(s: &Stats) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} of {} read from {}",
        crate::text::plural(s.reports, "report", "reports"),
        crate::text::plural(s.changes, "change", "changes"),
        s.sources.join(" and ")
    );
    if s.agents.is_empty() {
        let _ = writeln!(
            out,
            "no agent has a finding yet: `deep-review run` writes reports"
        );
        return out;
    }
    let _ = writeln!(
        out,
        "\n{:<20} {:>7} {:>8} {:>5} {:>7} {:>14} {:>11} {:>11} {:>6} {:>10} {:>9} {:>11} {:>11}",
        "agent",
        "reviews",
        "findings",
        "kept",
        "only it",
        "grounded",
        "acted on",
        "declined",
        "none",
        "$/review",
        "s/review",
        "$/acted on",
        "s/acted on"
    );
    for a in &s.agents {
        let _ = writeln!(
            out,
            "{:<20} {:>7} {} {:>10} {:>9} {:>11} {:>11}",
            clip(&a.display, 20),
            a.reviews.unwrap_or(0),
            finding_cells(a),
            money(a.cost_per_review),
            secs(a.seconds_per_review),
            money(a.cost_per_acted_on),
            secs(a.seconds_per_acted_on)
        );
    }
    for (title, rows) in [
        ("by category", &s.by_category),
        ("by severity", &s.by_severity),
    ] {
        let _ = writeln!(
            out,
            "\n{title}\n{:<20} {:<12} {:>8} {:>5} {:>7} {:>14} {:>11} {:>11} {:>6}",
            "agent", "", "findings", "kept", "only it", "grounded", "acted on", "declined", "none"
        );
        for a in rows {
            let group = a
                .category
                .clone()
                .or_else(|| a.severity.map(|s| s.to_string()))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{:<20} {:<12} {}",
                clip(&a.display, 20),
                clip(&group, 12),
                finding_cells(a)
            );
        }
    }
    match &s.reliability {
        Some(r) => records(&mut out, "records learnt from the decisions", r, s),
        None => {
            let _ = writeln!(
                out,
                "\nno finding has a decision yet (`deep-review resolve` records decisions)"
            );
        }
    }
    if let Some(a) = &s.agreement {
        records(
            &mut out,
            &format!(
                "from agreement alone (Dawid-Skene, {} iterations{})",
                a.iterations,
                if a.converged { "" } else { ", not converged" }
            ),
            &a.reliability,
            s,
        );
    }
    out
}

fn finding_cells(a: &AgentStats) -> String {
    let share = |n: usize, rate: Option<f64>| match rate {
        Some(r) => format!("{n} ({:.0}%)", r * 100.0),
        None => n.to_string(),
    };
    let grounded = match a.grounded_rate {
        Some(r) => format!("{:.0}% ({}/{})", r * 100.0, a.grounded, a.checked),
        None => "-".to_string(),
    };
    format!(
        "{:>8} {:>5} {:>7} {:>14} {:>11} {:>11} {:>6}",
        a.findings,
        a.kept,
        a.kept_only_it,
        grounded,
        share(a.acted_on, a.acted_on_rate),
        share(a.declined, a.declined_rate),
        a.undecided
    )
}

fn records(out: &mut String, title: &str, r: &Reliability, s: &Stats) {
    use crate::consolidate::confidence::{miss_log_ratio, raise_log_ratio};
    let _ = writeln!(
        out,
        "\n{title}\n{}\n{:<20} {:<12} {:>12} {:>8} {:>10} {:>8} {:>8}",
        printable_line(&r.basis),
        "agent",
        "category",
        "acted on",
        "p(real)",
        "p(spur.)",
        "raised",
        "silent"
    );
    for row in &r.rows {
        let display = s
            .agents
            .iter()
            .find(|a| a.agent == row.agent)
            .map_or(row.agent.as_str(), |a| a.display.as_str());
        let raised = raise_log_ratio(row.p_raise_real, row.p_raise_spurious)
            - raise_log_ratio(row.pool_raise_real, row.pool_raise_spurious);
        let silent = -(miss_log_ratio(row.p_raise_real, row.p_raise_spurious)
            - miss_log_ratio(row.pool_raise_real, row.pool_raise_spurious));
        let _ = writeln!(
            out,
            "{:<20} {:<12} {:>12} {:>7.0}% {:>9.0}% {:>+8.2} {:>+8.2}",
            clip(display, 20),
            clip(row.category.as_deref().unwrap_or("all"), 12),
            match row.acted_on + row.declined {
                0 => "none raised".to_string(),
                n => format!("{} of {n}", row.acted_on),
            },
            row.p_raise_real * 100.0,
            row.p_raise_spurious * 100.0,
            raised,
            silent
        );
    }
}

fn money(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), crate::cost::usd)
}

fn secs(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |s| format!("{s:.1}s"))
}

/// `text` on one line, cut to `width` characters.
fn clip(text: &str, width: usize) -> String {
    let line = printable_line(text);
    if line.chars().count() <= width {
        line.to_string()
    } else {
        let cut: String = line.chars().take(width.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}
