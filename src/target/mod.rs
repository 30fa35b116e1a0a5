//! Target stage: what is reviewed. A branch, `BASE..HEAD` or the current branch, resolved to
//! merge-base, commits and changed files with hunks.
//!
//! Only commits are read (`git rev-parse`, `git merge-base`, `git log`, `git diff` between two
//! commits): the working tree and the index are never looked at or touched, so a dirty checkout
//! is reviewed as its last commit.

pub mod diff;
mod resolve;

pub use diff::{ChangeKind, ChangedFile, Hunk, changed_files};
pub use resolve::resolve;

use std::path::PathBuf;

use crate::model::{CommitInfo, PrInfo};

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
}

/// A change resolved to commits: everything later stages need to know about what is reviewed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Target {
    /// The repository's top-level directory.
    pub repo: PathBuf,
    /// How the report names the repository: `owner/name` from the `origin` remote's URL, else
    /// the top-level directory's name.
    #[serde(default)]
    pub repo_name: String,
    /// The base commit as resolved (full sha): what the change is compared against.
    pub base: String,
    /// The head commit (full sha): what is reviewed.
    pub head: String,
    /// `git merge-base base head` (full sha): the diff is `merge_base..head`, so commits that
    /// landed on the base after the branch forked are not part of the change.
    pub merge_base: String,
    /// How the user named the base (`main`, `origin/main`, a sha).
    pub base_ref: String,
    /// The branch being reviewed, when the head is one (`None` for a detached HEAD or a sha).
    pub branch: Option<String>,
    /// Author of the change: the author of its first commit.
    pub author: Option<String>,
    /// The commits of `merge_base..head`, oldest first, with short shas.
    pub commits: Vec<CommitInfo>,
    pub changed_files: Vec<ChangedFile>,
    pub pr: Option<PrInfo>,
    #[serde(default)]
    pub description: Option<String>,
    /// Names the run: `pr-236` for a pull request, else the branch (or short sha) made safe for
    /// a file name.
    pub label: String,
}

impl Target {
    /// The exact command that shows the change, as the brief tells the reviewers.
    pub fn diff_command(&self) -> String {
        format!("git diff {}..{}", self.merge_base, self.head)
    }

    /// The title of the change: the PR's title, else the subject of its only commit.
    pub fn title(&self) -> Option<String> {
        if let Some(pr) = &self.pr {
            if !pr.title.is_empty() {
                return Some(pr.title.clone());
            }
        }
        match self.commits.as_slice() {
            [only] => Some(only.subject.clone()),
            _ => None,
        }
    }

    /// Sum of added and removed lines over all changed files.
    pub fn line_counts(&self) -> (u64, u64) {
        self.changed_files.iter().fold((0, 0), |(a, r), f| {
            (a + u64::from(f.added), r + u64::from(f.removed))
        })
    }
}

/// A name made safe for a file name: ASCII letters, digits, `.`, `_` and `-`; anything else
/// becomes `-`, runs of `-` collapse, and the ends are trimmed (`feat/x y` → `feat-x-y`).
pub fn safe_label(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
            c
        } else {
            '-'
        };
        if c == '-' && out.ends_with('-') {
            continue;
        }
        out.push(c);
    }
    let trimmed = out.trim_matches(|c| c == '-' || c == '.');
    let mut label: String = trimmed.chars().take(80).collect();
    if label.is_empty() {
        label.push_str("change");
    }
    label
}

#[cfg(test)]
mod tests {
    use super::safe_label;

    #[test]
    fn labels_are_safe_file_names() {
        assert_eq!(safe_label("feat/new thing"), "feat-new-thing");
        assert_eq!(safe_label("user//x..y"), "user-x..y");
        assert_eq!(safe_label("../../etc"), "etc");
        assert_eq!(safe_label("///"), "change");
        assert_eq!(safe_label("ünï"), "n");
    }
}
