//! `deep-review list`: the reports in the store, newest first.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use crate::store::Store;
use crate::text::printable_line;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// One line per report.
    Text,
    /// A JSON array: id, target, round, verdict, counts, date, files.
    Json,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[arg(long, value_enum, default_value = "text")]
    pub format: ListFormat,

    /// The store folder (default: `deep-review/` in the repository's git directory, shared by
    /// its worktrees).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
}

pub fn execute(args: ListArgs) -> anyhow::Result<ExitCode> {
    let store = store_at(args.store.as_deref())?;
    let entries = store.list()?;
    match args.format {
        ListFormat::Json => {
            let mut text = serde_json::to_string_pretty(&entries)?;
            text.push('\n');
            super::print_out(&text)?;
        }
        ListFormat::Text => {
            if entries.is_empty() {
                crate::say!(
                    "deep-review: no report in {} yet: `deep-review run` writes one",
                    store.dir().display()
                );
            }
            super::print_out(&table(&entries))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per report, its columns aligned however long an id or a target is.
fn table(entries: &[crate::store::ReportEntry]) -> String {
    let rows: Vec<[String; 6]> = entries
        .iter()
        .map(|e| {
            [
                printable_line(&e.id),
                e.date
                    .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
                    .unwrap_or_else(|| "-".into()),
                printable_line(&e.target),
                e.round.map(|r| format!("round {r}")).unwrap_or_default(),
                e.verdict
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "-".into()),
                e.counts
                    .map(|c| format!("{}C {}I {}S", c.critical, c.important, c.suggestion))
                    .unwrap_or_default(),
            ]
        })
        .collect();
    let width = |s: &str| unicode_width::UnicodeWidthStr::width(s);
    let mut widths = [0usize; 6];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(width(cell));
        }
    }
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if i + 1 < row.len() {
                line.push_str(&" ".repeat(widths[i] - width(cell) + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The store folder `--store` names, else the store of the repository around the current
/// directory.
pub fn store_at(chosen: Option<&std::path::Path>) -> anyhow::Result<Store> {
    Store::locate(std::path::Path::new("."), chosen)
}
