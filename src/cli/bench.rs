//! `deep-review bench`: scores each tool alone and the consolidation of several tools on a
//! code-review benchmark's split, and prints a table or JSON.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, ValueEnum};

use crate::bench::{self, BenchResult, Figures};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchFormat {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The split's directory: golden_comments/*.json and results/<judge>/{candidates,evaluations}.json.
    #[arg(long, value_name = "DIR")]
    pub dataset: PathBuf,
    /// The judge directory under results/ (needed only when there are several).
    #[arg(long, value_name = "NAME")]
    pub judge: Option<String>,
    /// The tools to consolidate, comma separated (default: all tools of the split).
    #[arg(long, value_name = "a,b,c", value_delimiter = ',')]
    pub agents: Option<Vec<String>>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: BenchFormat,
}

pub fn execute(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let ds = bench::dataset::load(&args.dataset, args.judge.as_deref())?;
    let agents: Option<Vec<String>> = args.agents.map(|v| {
        v.into_iter()
            .map(|a| a.trim().to_string())
            .filter(|a| !a.is_empty())
            .collect()
    });
    let agents = bench::resolve_agents(&ds, agents.as_deref())?;
    let mut result = bench::run(&ds, &agents, &bench::project_consolidator);
    result.leave_one_out = bench::generalize::leave_one_out(&ds, &agents);
    result.wall_time_s = started.elapsed().as_secs_f64();
    match args.format {
        BenchFormat::Json => {
            super::print_out(&format!("{}\n", serde_json::to_string_pretty(&result)?))?
        }
        BenchFormat::Table => super::print_out(&table(&result))?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The human-readable summary: every tool, the best single tool among the consolidated agents,
/// the consolidation, and the F1 difference.
pub fn table(r: &BenchResult) -> String {
    let mut out = String::new();
    let golden = r.consolidated.golden_total;
    let _ = writeln!(
        out,
        "dataset {} · judge {} · {} PRs · {} golden bugs",
        r.dataset,
        r.judge,
        r.prs.len(),
        golden
    );
    let _ = writeln!(
        out,
        "\n{:<40} {:>9} {:>7} {:>7} {:>6} {:>5} {:>6}",
        "", "precision", "recall", "F1", "kept", "TP", "found"
    );
    let mut tools: Vec<(&String, &Figures)> = r.tools.iter().collect();
    tools.sort_by(|a, b| b.1.f1.total_cmp(&a.1.f1).then(a.0.cmp(b.0)));
    for (name, f) in tools {
        row(&mut out, name, f);
    }
    let _ = writeln!(out);
    let best = r.best_tool(&r.agents);
    if let Some((name, f)) = best {
        row(&mut out, &format!("best single ({name})"), f);
    }
    let label = if r.agents.len() == r.tools.len() {
        "consolidated (all tools)".to_string()
    } else {
        format!("consolidated ({})", r.agents.join(","))
    };
    row(&mut out, &label, &r.consolidated);
    if let Some((name, f)) = best {
        let _ = writeln!(
            out,
            "\ndelta F1 (consolidated - {name}): {:+.3}",
            r.consolidated.f1 - f.f1
        );
    }
    if !r.repos.is_empty() {
        let _ = writeln!(
            out,
            "\nper repository (default thresholds)\n{:<14} {:>4} {:>28} {:>16} {:>8}",
            "repository", "PRs", "best single (F1)", "consolidated F1", "delta"
        );
        for f in &r.repos {
            let _ = writeln!(
                out,
                "{:<14} {:>4} {:>28} {:>16.3} {:>+8.3}",
                f.repo,
                f.prs,
                format!("{} {:.3}", f.best_tool, f.best.f1),
                f.consolidated.f1,
                f.delta_f1
            );
        }
    }
    if !r.leave_one_out.is_empty() {
        let _ = writeln!(
            out,
            "\nleave one repository out (thresholds chosen on the others)\n{:<14} {:>22} {:>28} {:>16} {:>8}",
            "held out", "merge / keep chosen", "best single (F1)", "consolidated F1", "delta"
        );
        for h in &r.leave_one_out {
            let _ = writeln!(
                out,
                "{:<14} {:>22} {:>28} {:>16.3} {:>+8.3}",
                h.held_out,
                format!(
                    "{:.2} / {:+.1}",
                    h.tuning.merge_threshold, h.tuning.keep_log_odds
                ),
                format!("{} {:.3}", h.best_tool, h.best.f1),
                h.consolidated.f1,
                h.delta_f1
            );
        }
        let met = r.leave_one_out.iter().all(|h| h.delta_f1 >= 0.05)
            && r.repos.iter().all(|f| f.delta_f1 >= 0.05);
        let _ = writeln!(
            out,
            "target (delta >= +0.05 in every row above): {}",
            if met { "met" } else { "not met" }
        );
    }
    let _ = writeln!(out, "weights: {}", r.weights);
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let _ = writeln!(out, "wall time: {:.2} s", r.wall_time_s);
    out
}

fn row(out: &mut String, label: &str, f: &Figures) {
    let _ = writeln!(
        out,
        "{:<40} {:>9.3} {:>7.3} {:>7.3} {:>6} {:>5} {:>6}",
        label, f.precision, f.recall, f.f1, f.kept, f.true_positives, f.golden_found
    );
}
