//! The command line: one file per subcommand, each turning arguments into calls of the pipeline
//! and printing what comes back.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

pub mod agents;
pub mod bench;
pub mod consolidate;
pub mod docs;
pub mod dry_run;
pub mod list;
pub mod output;
pub mod post;
pub mod publish;
pub mod reference;
pub mod resolve;
pub mod run;
pub mod schema;
pub mod show;
pub mod stats;
pub mod trust;

const EXAMPLES_AND_EXIT_CODES: &str = "\
Examples:
  deep-review run                          review the current branch with every installed agent
  deep-review run main..feature --format sarif --fail-on important
  deep-review run 236 --post               review GitHub pull request #236 and post the review (GITHUB_TOKEN)
  deep-review run !42 --post --format codequality
                                           review GitLab merge request !42 and post (GITLAB_TOKEN)
  deep-review run https://bitbucket.org/ws/repo/pull-requests/7 --post
                                           review a Bitbucket Cloud pull request and post (BITBUCKET_ACCESS_TOKEN)
  deep-review run --uncommitted            review what is not committed yet
  deep-review run --dry-run                print the brief and each agent's command; run nothing
  deep-review list                         the reports in the store, newest first
  deep-review show latest --format json --out -
  deep-review consolidate --raw claude=a.md --raw codex=b.md
  deep-review stats                        each agent's scorecard: findings kept, acted on, declined
  deep-review trust                        trust this repository's .deep-review.toml as it is

Exit codes:
  0    done (the review ran; the gate, if any, passed)
  1    the gate failed: a finding at the --fail-on level or above stands
  2    usage or input error (the message says what to fix)
  3    no review: every agent failed or wrote no review (the report says why)
  124  reading and consolidating passed the run's deadline (run --timeout); agents the
       deadline stopped are named in the report and the run ends 0, 1 or 3 as usual
  130  interrupted (Ctrl-C, SIGTERM, SIGHUP) at any stage: what the agents wrote is kept

Environment:
  DEEP_REVIEW_SANDBOX=auto|landlock|none
       auto (default): Linux: each agent under bubblewrap with Landlock inside, else Landlock
       alone; macOS: Seatbelt (sandbox-exec). With none available, run stops before any agent
       starts; none runs agents unconfined. `deep-review agents` names the layers. Config keys network, network_allow and
       sandbox_sockets: see docs/src/security.md#security-model.

Documentation: docs/src/SUMMARY.md (the book; exit codes: docs/src/local/run.md#exit-codes).
";

/// `--version`: the package version and the commit it was built from (build.rs), so that a bug
/// report names the code that ran.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("DEEP_REVIEW_COMMIT"),
    ")"
);

/// Runs several AI code reviewers on one change, checks their findings against the code and
/// writes one consolidated Deep Review report.
#[derive(Debug, Parser)]
#[command(name = "deep-review", version = VERSION, about, long_about = None, after_help = EXAMPLES_AND_EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Review a change with every enabled agent at once and write the report.
    Run(run::RunArgs),
    /// Consolidate saved raw reviews, an old report's appendix or a run bundle, offline.
    Consolidate(consolidate::ConsolidateArgs),
    /// List the reports in the store (`deep-review/` in the git directory), newest first.
    List(list::ListArgs),
    /// Print one report from the store (`latest` for the newest).
    Show(show::ShowArgs),
    /// Record what was done about a report's findings (Fixed, Skipped, ...) in its Resolution.
    Resolve(resolve::ResolveArgs),
    /// Commit the store's reports to a branch (default `reviews`) for GitHub Pages.
    Publish(publish::PublishArgs),
    /// Post a pull request's (or GitLab merge request's) report on it: a summary comment and
    /// inline comments, once.
    Post(post::PostArgs),
    /// List the agent CLIs found on PATH, with their versions, sandbox layers and network.
    Agents(agents::AgentsArgs),
    /// Trust this repository's `.deep-review.toml` as it is now (its commands and paths apply).
    Trust(trust::TrustArgs),
    /// Each agent's scorecard from what became of its findings (acted on, declined), and the
    /// records learnt from them (descriptive: no run is weighed with them).
    Stats(stats::StatsArgs),
    /// Print the JSON Schema of a raw review, the report, or `stats --format json`.
    Schema(schema::SchemaArgs),
    /// Measure consolidation on a public code-review benchmark's data.
    Bench(bench::BenchArgs),
    /// Print shell completions (bash, zsh, fish, elvish, powershell).
    Completions(docs::CompletionsArgs),
    /// Print the manual page (roff): `deep-review man > deep-review.1`.
    Man,
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

/// The clap definition, for completions and the man page.
pub fn command() -> clap::Command {
    Cli::command()
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
        Command::Publish(args) => publish::execute(args),
        Command::Post(args) => post::execute(args),
        Command::Agents(args) => agents::execute(args),
        Command::Trust(args) => trust::execute(args),
        Command::Stats(args) => stats::execute(args),
        Command::Schema(args) => schema::execute(args),
        Command::Bench(args) => bench::execute(args),
        Command::Completions(args) => docs::completions(args),
        Command::Man => docs::man(),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprint_error(&err);
            ExitCode::from(2)
        }
    }
}

/// "deep-review: error: ..." with each cause that adds something, on stderr. A closed stderr
/// (`run 2>&1 | head -1`) is not a panic: the message is dropped.
fn eprint_error(err: &anyhow::Error) {
    use std::io::Write;
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(
        stderr,
        "deep-review: error: {}",
        crate::text::printable(&err.to_string())
    );
    let mut previous = err.to_string();
    for cause in err.chain().skip(1) {
        // Errors that already quote their source would otherwise say it twice.
        let text = cause.to_string();
        if !previous.contains(&text) {
            let _ = writeln!(stderr, "  caused by: {}", crate::text::printable(&text));
        }
        previous = text;
    }
}
