//! `deep-review resolve ID|latest`: record what was done about a report's findings, in the
//! `## Resolution` section of its Markdown and JSON. The next round reads it: what was declined
//! is not raised again, what was fixed and comes back is flagged.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::pipeline::resolve::{ResolveRequest, resolve};
use crate::rounds::resolve::{Decision, parse_decisions};
use crate::text::printable_line;
use crate::types::Action;

#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// The report's id as `deep-review list` shows it, or `latest`.
    #[arg(value_name = "ID")]
    pub id: String,

    /// Findings fixed: `I1,S2`. Repeatable.
    #[arg(long, value_name = "IDS")]
    pub fixed: Vec<String>,

    /// A finding declined, with the reason: `S3="cannot happen: the cache never sends nil"`.
    /// Repeat for each. A later round does not raise it again while its code stays as it is.
    #[arg(long, value_name = "ID=REASON")]
    pub skipped: Vec<String>,

    /// Findings now covered by a test: `S4`. Repeatable.
    #[arg(long, value_name = "IDS")]
    pub test_written: Vec<String>,

    /// Findings answered by documentation: `S5`. Repeatable.
    #[arg(long, value_name = "IDS")]
    pub documented: Vec<String>,

    /// Findings answered with a comment rather than a change (declined like `--skipped`):
    /// `S6` or `S6="the reply"`. Repeatable.
    #[arg(long, value_name = "IDS")]
    pub commented: Vec<String>,

    /// The commits that carry the changes (shas or any revision). Repeatable.
    #[arg(long, value_name = "SHA", num_args = 1..)]
    pub commit: Vec<String>,

    /// Propose Fixed for findings whose code (found when the report was made) is gone or
    /// changed at the newer head, read from the commits, and list the rest for you to decide.
    #[arg(long)]
    pub auto: bool,

    /// The newer head `--auto` compares with.
    #[arg(long, value_name = "REV", default_value = "HEAD", requires = "auto")]
    pub head: String,

    /// Print the Resolution that would be recorded; write nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// The store folder (default: `deep-review/` in the repository's git directory, shared by
    /// its worktrees).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
}

pub fn execute(args: ResolveArgs) -> anyhow::Result<ExitCode> {
    let store = super::list::store_at(args.store.as_deref())?;
    let mut decisions: Vec<Decision> = Vec::new();
    for (values, action, flag) in [
        (&args.fixed, Action::Fixed, "--fixed"),
        (&args.skipped, Action::Skipped, "--skipped"),
        (&args.test_written, Action::TestWritten, "--test-written"),
        (&args.documented, Action::Documented, "--documented"),
        (&args.commented, Action::Commented, "--commented"),
    ] {
        for value in values {
            decisions.extend(
                parse_decisions(value, &action)
                    .map_err(|e| anyhow::anyhow!("{flag} {value:?}: {e}"))?,
            );
        }
    }
    let repo = crate::git::git_text(std::path::Path::new("."), &["rev-parse", "--show-toplevel"])
        .ok()
        .map(PathBuf::from);
    let outcome = resolve(
        &store,
        &ResolveRequest {
            id: args.id.clone(),
            decisions,
            commits: args.commit.clone(),
            auto_head: args.auto.then(|| args.head.clone()),
            repo,
            dry_run: args.dry_run,
        },
    )?;
    if let Some(note) = &outcome.note {
        eprintln!("deep-review: --auto: {}", printable_line(note));
    }
    for p in &outcome.proposed {
        eprintln!(
            "deep-review: --auto: {} {} — Fixed: {}",
            p.id,
            printable_line(&p.title),
            p.why
        );
    }
    if !outcome.open.is_empty() {
        eprintln!("deep-review: for you to decide (--fixed, --skipped ID=\"reason\", ...):");
        for p in &outcome.open {
            eprintln!(
                "  {} {} ({})",
                p.id,
                printable_line(&p.title),
                printable_line(&p.why)
            );
        }
    }
    if args.dry_run {
        super::print_out(&crate::report::markdown::resolution(&outcome.resolution))?;
    } else if outcome.written.is_empty() {
        eprintln!("deep-review: nothing recorded in {}", outcome.id);
    } else {
        eprintln!(
            "deep-review: {} recorded in {}",
            crate::text::plural(outcome.resolution.items.len(), "decision", "decisions"),
            outcome.id
        );
        for path in &outcome.written {
            super::print_out(&format!("{}\n", path.display()))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
