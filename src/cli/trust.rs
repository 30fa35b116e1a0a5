//! `deep-review trust`: trust this repository's `.deep-review.toml` as it is now, after reading
//! it. Until then its keys that run programs or read files are ignored; after any change to the
//! file they are ignored again until it is trusted again (direnv's and mise's model).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::config::{self, REPO_CONFIG_FILE, trust};
use crate::text::printable;

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The repository (any directory inside it).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,

    /// Forget the trust instead: the file's commands and paths are ignored again.
    #[arg(long)]
    pub revoke: bool,
}

/// Whether `text` is the repository config as HEAD commits it: what a run of a change based on
/// HEAD reads.
fn committed_as_is(root: &std::path::Path, text: &str) -> bool {
    crate::git::git_bytes(
        root,
        &["cat-file", "blob", &format!("HEAD:{REPO_CONFIG_FILE}")],
    )
    .is_ok_and(|committed| committed == text.as_bytes())
}

pub fn execute(args: TrustArgs) -> anyhow::Result<ExitCode> {
    if let Some(refusal) = crate::target::environment::ownership_refusal(&args.repo) {
        anyhow::bail!(refusal);
    }
    let root = crate::git::git_text(&args.repo, &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .map_err(|_| {
            anyhow::anyhow!(
                "{} is not inside a git repository: run `deep-review trust` in the repository whose {REPO_CONFIG_FILE} you trust",
                args.repo.display()
            )
        })?;
    let file = root.join(REPO_CONFIG_FILE);
    if args.revoke {
        let had = trust::revoke(&file)?;
        crate::say!(
            "deep-review: {} {}",
            file.display(),
            if had {
                "is no longer trusted"
            } else {
                "was not trusted"
            }
        );
        return Ok(ExitCode::SUCCESS);
    }
    let meta = std::fs::symlink_metadata(&file).with_context(|| {
        format!(
            "{} does not exist: there is nothing to trust",
            file.display()
        )
    })?;
    if meta.file_type().is_symlink() {
        anyhow::bail!(
            "{} is a symlink: deep-review never reads a symlinked config; make it a plain file",
            file.display()
        );
    }
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read {}", file.display()))?;
    // The same parser as a run: a file that would fail then is refused now.
    let names: Vec<&str> = config::KNOWN_AGENTS.iter().map(|a| a.0).collect();
    let (_, keys) = config::parse_layer(&text, &file, &names)?.without_execution(&names);
    let store = trust::trust(&file, &text)?;
    if !committed_as_is(&root, &text) {
        // A run reads the file at the merge-base of the change it reviews, never the working
        // tree (a change must not steer its own review), so this text applies once committed.
        crate::say!(
            "deep-review: trusted {} as it is now (sha256 {}, recorded in {}); it differs from \
             the committed file, and a run reads the file at the merge-base of the change it \
             reviews: this version applies once it is committed and a review's base holds it",
            file.display(),
            &trust::hash(&text)[..12],
            store.display()
        );
    } else if keys.is_empty() {
        crate::say!(
            "deep-review: trusted {} (it sets nothing that runs or reads files)",
            file.display()
        );
    } else {
        crate::say!(
            "deep-review: trusted {}: {} now apply (sha256 {}, recorded in {})",
            file.display(),
            printable(&keys.join(", ")),
            &trust::hash(&text)[..12],
            store.display()
        );
    }
    crate::say!(
        "deep-review: any change to the file needs `deep-review trust` again; a change under review that edits it never counts"
    );
    Ok(ExitCode::SUCCESS)
}
