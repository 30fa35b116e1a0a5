//! `deep-review run` (not built yet).

use std::process::ExitCode;

use clap::Args;

#[derive(Debug, Args)]
pub struct RunArgs {}

pub fn execute(_args: RunArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`deep-review run` is not available yet")
}
