//! `deep-review post ID|latest`: a report of a pull request (or GitLab merge request) posted on
//! it (summary comment, review with inline comments, earlier findings' threads resolved),
//! without duplicates.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::forge::post::{self, PostOptions};
use crate::text::printable;

#[derive(Debug, Args)]
pub struct PostArgs {
    /// The report's id as `deep-review list` shows it, or `latest`.
    #[arg(value_name = "ID", default_value = "latest")]
    pub id: String,

    /// Post the report of this run bundle instead of one of the store: `<store>/runs/<id>`, or
    /// a folder with `report.json` and `target.json` (what a review job without write access
    /// hands a posting job in GitHub Actions). The repository is the current one's.
    #[arg(long, value_name = "DIR", conflicts_with = "id")]
    pub bundle: Option<PathBuf>,

    /// The pull request the bundle must be a review of (what the workflow was started for).
    #[arg(long, value_name = "N", requires = "bundle")]
    pub pull_request: Option<u64>,

    /// Print the comments that would be posted; send nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Where the full report can be read (the published HTML, a CI run's artefacts): linked
    /// from the summary comment.
    #[arg(long, value_name = "URL", value_parser = report_url)]
    pub report_url: Option<String>,

    /// The store folder (default: `deep-review/` in the repository's git directory, shared by
    /// its worktrees).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
}

/// `--report-url` takes only web addresses: it becomes a link in a public comment.
pub fn report_url(text: &str) -> Result<String, String> {
    let ok = (text.starts_with("https://") || text.starts_with("http://"))
        && !text
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "<>()[]`\"".contains(c));
    if ok {
        Ok(text.to_string())
    } else {
        Err("give an http(s) address with no spaces, brackets or quotes".to_string())
    }
}

pub fn execute(args: PostArgs) -> anyhow::Result<ExitCode> {
    let options = PostOptions {
        dry_run: args.dry_run,
        report_url: args.report_url,
    };
    let outcome = match &args.bundle {
        Some(dir) => post::post_from_bundle(dir, args.pull_request, &options)?,
        None => {
            let store = super::list::store_at(args.store.as_deref())?;
            post::post_from_store(&store, &args.id, &options)?
        }
    };
    print(&outcome, args.dry_run)?;
    Ok(ExitCode::SUCCESS)
}

/// A dry run's text goes to stdout (it is the output asked for); what a post did goes to
/// stderr, one line each, as `run` reports its progress.
pub fn print(outcome: &post::PostOutcome, dry_run: bool) -> anyhow::Result<()> {
    for line in &outcome.lines {
        if dry_run {
            super::print_out(&format!("{}\n", printable(line)))?;
        } else {
            eprintln!("deep-review: {}", printable(line));
        }
    }
    Ok(())
}
