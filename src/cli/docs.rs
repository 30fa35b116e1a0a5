//! `deep-review completions SHELL` and `deep-review man`: generated from the clap definition
//! (clap_complete, clap_mangen), so they never drift from the real options.

use std::process::ExitCode;

use clap::Args;
use clap_complete::Shell;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

pub fn completions(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut super::command(), "deep-review", &mut out);
    super::print_out(&String::from_utf8_lossy(&out))?;
    Ok(ExitCode::SUCCESS)
}

pub fn man() -> anyhow::Result<ExitCode> {
    let mut out = Vec::new();
    clap_mangen::Man::new(super::command()).render(&mut out)?;
    super::print_out(&String::from_utf8_lossy(&out))?;
    Ok(ExitCode::SUCCESS)
}
