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
    /// Also score each repository with agents' records learnt on the other repositories:
    /// from their golden labels (`leave-one-repo-out`), or from their agreement alone
    /// (`agreement`, no label read). `none`: today's figures only.
    #[arg(long, value_enum, default_value = "none")]
    pub learn: bench::learn::Learn,
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
    if let Some((learned, _)) = bench::learn::leave_one_repo_out(&ds, &agents, args.learn, &result)
    {
        result.weights = format!(
            "learned ({}): only the figures under \"agents' records learnt\" use them, each \
             repository's from the other repositories; every other figure uses none",
            match args.learn {
                bench::learn::Learn::Agreement => "agreement, leave one repository out",
                _ => "golden labels, leave one repository out",
            }
        );
        result.learned = Some(learned);
    }
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
    if let Some(l) = &r.learned {
        learned_table(&mut out, l);
    }
    let _ = writeln!(out, "weights: {}", r.weights);
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let _ = writeln!(out, "wall time: {:.2} s", r.wall_time_s);
    out
}

/// The held-out figures with the agents' records learnt on the other repositories.
fn learned_table(out: &mut String, l: &bench::learn::Learned) {
    let source = match l.method {
        bench::learn::Learn::Agreement => "their agreement alone (no label read)",
        _ => "their golden labels",
    };
    let _ = writeln!(
        out,
        "\nagents' records learnt on the other repositories, from {source}\n{:<14} {:<14} {:>9} {:>22} {:>11} {:>11} {:>8}",
        "held out",
        "learnt on",
        "findings",
        "best single (F1)",
        "no records",
        "learned F1",
        "delta"
    );
    for r in &l.repos {
        let _ = writeln!(
            out,
            "{:<14} {:<14} {:>9} {:>22} {:>11.3} {:>11.3} {:>+8.3}",
            r.repo,
            r.learnt_on.join(","),
            r.findings_learnt_from,
            format!("{} {:.3}", r.best_tool, r.best.f1),
            r.unlearned.f1,
            r.learned.f1,
            r.delta_f1
        );
    }
    let _ = writeln!(
        out,
        "{:<39} {:>22} {:>11.3} {:>11.3}",
        "all PRs, each held out", "", l.unlearned.f1, l.learned.f1
    );
    let met = l.repos.iter().all(|r| r.delta_f1 >= 0.05);
    let worst = l
        .repos
        .iter()
        .map(|r| r.delta_f1)
        .fold(f64::INFINITY, f64::min);
    let _ = writeln!(
        out,
        "target (learned delta >= +0.05 for every held-out repository): {}",
        if met {
            "met".to_string()
        } else {
            format!("not met (worst {worst:+.3}, {:.3} short)", 0.05 - worst)
        }
    );
}

fn row(out: &mut String, label: &str, f: &Figures) {
    let _ = writeln!(
        out,
        "{:<40} {:>9.3} {:>7.3} {:>7.3} {:>6} {:>5} {:>6}",
        label, f.precision, f.recall, f.f1, f.kept, f.true_positives, f.golden_found
    );
}
