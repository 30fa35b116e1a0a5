//! Target stage: what is reviewed. A branch, `BASE..HEAD` or the current branch, resolved to
//! merge-base, commits and changed files with hunks.
//!
//! Only commits are read (`git rev-parse`, `git merge-base`, `git log`, `git diff` between two
//! commits): the working tree and the index are never looked at or touched, so a dirty checkout
//! is reviewed as its last commit. The one exception is asked for: [`TargetSpec::uncommitted`]
//! snapshots the working tree into a commit object first (see [`uncommitted`]), still without
//! touching the index, the working tree or the stash.
//!
//! The git environments CI gives (shallow clones, checkouts owned by another user, bare
//! repositories, no local base branch) are explained in [`environment`]'s messages.

pub mod diff;
pub mod environment;
mod resolve;
pub mod uncommitted;

pub use diff::changed_files;
pub use resolve::{resolve, resolve_leaving_out, web_url};

use crate::types::PrInfo;

/// What the user asked to review, as written on the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetSpec {
    /// A branch (or any commit-ish), `BASE..HEAD` (`BASE...HEAD` too), or `None` for the current
    /// branch against its upstream's merge-base, else the default branch's.
    pub target: Option<String>,
    /// `--base`: overrides the base that `target` implies.
    pub base: Option<String>,
    /// `--head`: overrides the head that `target` implies.
    pub head: Option<String>,
    /// Pull-request metadata, when a forge told us (the target stage does not talk to forges).
    pub pr: Option<PrInfo>,
    /// The pull request's description, when known.
    pub description: Option<String>,
    /// Review the working tree's changes (staged, unstaged, untracked and not ignored) against
    /// HEAD (or against `base` when given) instead of commits: `run --uncommitted`.
    pub uncommitted: bool,
}

/// The run label of a branch or ref: safe as a file name ([`crate::text::safe_file_name`]).
pub fn safe_label(name: &str) -> String {
    crate::text::safe_file_name(name, "change")
}
