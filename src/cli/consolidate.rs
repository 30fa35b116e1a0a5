//! `deep-review consolidate` (not built yet).

use std::process::ExitCode;

use clap::Args;

#[derive(Debug, Args)]
pub struct ConsolidateArgs {}

pub fn execute(_args: ConsolidateArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`deep-review consolidate` is not available yet")
}
