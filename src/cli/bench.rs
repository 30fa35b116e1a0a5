//! `deep-review bench` (not built yet).

use std::process::ExitCode;

use clap::Args;

#[derive(Debug, Args)]
pub struct BenchArgs {}

pub fn execute(_args: BenchArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`deep-review bench` is not available yet")
}
