//! `deep-review schema review|report|stats|config`: the JSON Schemas of what the tool reads and
//! writes.

use std::process::ExitCode;

use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SchemaKind {
    /// One agent's raw review, as `consolidate --raw NAME=FILE.json` reads it.
    Review,
    /// The consolidated report, as `deep-review run --format json` writes it.
    Report,
    /// The agents' scorecards, as `deep-review stats --format json` writes them.
    Stats,
    /// A config file, `.deep-review.toml` or the user's `config.toml` (TOML of this shape).
    Config,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which schema to print.
    pub kind: SchemaKind,
}

pub fn execute(args: SchemaArgs) -> anyhow::Result<ExitCode> {
    let schema = match args.kind {
        SchemaKind::Review => schemars::schema_for!(crate::types::Review),
        SchemaKind::Report => schemars::schema_for!(crate::types::Report),
        SchemaKind::Stats => schemars::schema_for!(crate::outcomes::stats::Stats),
        SchemaKind::Config => crate::config::schema(),
    };
    super::print_out(&format!("{}\n", serde_json::to_string_pretty(&schema)?))?;
    Ok(ExitCode::SUCCESS)
}
