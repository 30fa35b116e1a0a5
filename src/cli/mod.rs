//! The command line: one file per subcommand, each turning arguments into calls of the stages.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod agents;
pub mod bench;
pub mod consolidate;
pub mod list;
pub mod resolve;
pub mod run;
pub mod schema;
pub mod show;
pub mod trust;

/// Runs several AI code reviewers on one change, checks their findings against the code and
/// writes one consolidated Deep Review report.
#[derive(Debug, Parser)]
#[command(name = "deep-review", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Review a change with every enabled agent at once and write the report.
    Run(run::RunArgs),
    /// Consolidate saved raw reviews (or an old report's appendix) into one report, offline.
    Consolidate(consolidate::ConsolidateArgs),
    /// List the reports in the store (`.reviews/`), newest first.
    List(list::ListArgs),
    /// Print one report from the store (`latest` for the newest).
    Show(show::ShowArgs),
    /// Record what was done about a report's findings (Fixed, Skipped, ...) in its Resolution.
    Resolve(resolve::ResolveArgs),
    /// List the agent CLIs found on PATH, with their versions.
    Agents(agents::AgentsArgs),
    /// Trust this repository's `.deep-review.toml` as it is now (its commands and paths apply).
    Trust(trust::TrustArgs),
    /// Print the JSON Schema of a raw review or of the report.
    Schema(schema::SchemaArgs),
    /// Measure consolidation on a public code-review benchmark's data.
    Bench(bench::BenchArgs),
}

/// Writes `text` to standard output. A reader that went away (`deep-review ... | head`) is not
/// an error: the output was simply not wanted any further.
pub fn print_out(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("cannot write to standard output"))
        }
        _ => Ok(()),
    }
}

/// Parses the command line and runs it. Errors are printed as one sentence with their causes,
/// never as a panic.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::execute(args),
        Command::Consolidate(args) => consolidate::execute(args),
        Command::List(args) => list::execute(args),
        Command::Show(args) => show::execute(args),
        Command::Resolve(args) => resolve::execute(args),
        Command::Agents(args) => agents::execute(args),
        Command::Trust(args) => trust::execute(args),
        Command::Schema(args) => schema::execute(args),
        Command::Bench(args) => bench::execute(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("deep-review: error: {err}");
            let mut previous = err.to_string();
            for cause in err.chain().skip(1) {
                // Errors that already quote their source would otherwise say it twice.
                let text = cause.to_string();
                if !previous.contains(&text) {
                    eprintln!("  caused by: {text}");
                }
                previous = text;
            }
            ExitCode::from(2)
        }
    }
}
