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

    /// The store's root (see `deep-review list --help`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub fn execute(args: ShowArgs) -> anyhow::Result<ExitCode> {
    let store = super::list::store_at(args.out.as_deref())?;
    let id = store.resolve_report_id(&args.id)?;
    let json = store.report_path(&id, "json");
    let text = if !json.is_file() && args.format == Format::Md {
        // A Markdown report with no JSON record (copied in, or the reference system's).
        let md = store.report_path(&id, "md");
        std::fs::read_to_string(&md).with_context(|| format!("cannot read {}", md.display()))?
    } else {
        report::render(&store.read_report(&id)?, args.format)
    };
    super::print_out(&text)?;
    Ok(ExitCode::SUCCESS)
}
