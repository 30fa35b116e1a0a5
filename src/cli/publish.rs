//! `deep-review publish`: commit the store's reports to a branch for GitHub Pages, without
//! touching the working tree or the index.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::store::publish;

#[derive(Debug, Args)]
pub struct PublishArgs {
    /// The branch that receives the reports.
    #[arg(long, default_value = "reviews")]
    pub branch: String,

    /// Push the branch to this remote afterwards (`--push` alone: origin).
    #[arg(long, value_name = "REMOTE", num_args = 0..=1, default_missing_value = "origin")]
    pub push: Option<String>,

    /// The store folder (default: `deep-review/` in the repository's git directory, shared by
    /// its worktrees).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,

    /// The repository (any directory inside it).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
}

pub fn execute(args: PublishArgs) -> anyhow::Result<ExitCode> {
    let root = crate::git::git_text(&args.repo, &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .map_err(|_| {
            anyhow::anyhow!(
                "{} is not inside a git repository: run `deep-review publish` in the reviewed repository",
                args.repo.display()
            )
        })?;
    let store = crate::store::Store::locate(&root, args.store.as_deref())?;
    // The scorecards and the index list every report; make sure they exist before they are
    // committed.
    crate::outcomes::stats::write_page(&store)?;
    store.write_index()?;
    let published = publish::publish(&root, &store, &args.branch)?;
    for (id, sha) in &published.commits {
        let again = if published.updated.contains(id) {
            " (updated)"
        } else {
            ""
        };
        crate::say!(
            "deep-review: {} Review: {id}{again}",
            &sha[..12.min(sha.len())]
        );
    }
    let new = published.commits.len() - published.updated.len();
    let updated = if published.updated.is_empty() {
        String::new()
    } else {
        format!(
            ", {} updated (changed since it was published: a Resolution recorded)",
            published.updated.len()
        )
    };
    crate::say!(
        "deep-review: {}{updated} on branch {}",
        crate::text::plural(new, "new report", "new reports"),
        published.branch
    );
    if let Some(remote) = &args.push {
        publish::push(&root, remote, &args.branch)?;
        crate::say!("deep-review: pushed {} to {remote}", args.branch);
    }
    Ok(ExitCode::SUCCESS)
}
