//! `deep-review agents` (not built yet).

use std::process::ExitCode;

use clap::Args;

#[derive(Debug, Args)]
pub struct AgentsArgs {}

pub fn execute(_args: AgentsArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`deep-review agents` is not available yet")
}
