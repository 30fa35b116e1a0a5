//! `deep-review show ID|latest`: one report from the store, in any format.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::report::{self, Format};

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The report's id as `deep-review list` shows it, or `latest`.
    #[arg(value_name = "ID", default_value = "latest")]
    pub id: String,

    #[arg(long, value_enum, default_value = "md")]
    pub format: Format,

    /// The store folder (default: `deep-review/` in the repository's git directory, shared by
    /// its worktrees).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,

    /// Write the report to this file instead of standard output (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Exit 1 when a shown finding at this level or above stands (a CI gate).
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub fail_on: Option<super::output::FailOn>,
}

pub fn execute(args: ShowArgs) -> anyhow::Result<ExitCode> {
    let store = super::list::store_at(args.store.as_deref())?;
    let id = store.resolve_report_id(&args.id)?;
    let json = store.report_path(&id, "json");
    if !json.is_file() && args.format == Format::Md && args.fail_on.is_none() {
        // A Markdown report with no JSON record (copied in, or the reference system's).
        let md = store.report_path(&id, "md");
        let text = std::fs::read_to_string(&md)
            .with_context(|| format!("cannot read {}", md.display()))?;
        super::output::write_to(args.out.as_deref(), &text)?;
        return Ok(ExitCode::SUCCESS);
    }
    let report = store.read_report(&id)?;
    super::output::write_to(args.out.as_deref(), &report::render(&report, args.format))?;
    Ok(super::output::exit_code(&report, args.fail_on))
}
