//! The change under review, resolved to commits: what the target stage hands every later
//! stage (brief, dispatch, verify, consolidate, store).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::report::{CommitInfo, PrInfo, ReviewThread};

/// A change resolved to commits: everything later stages need to know about what is reviewed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// The repository's top-level directory.
    pub repo: PathBuf,
    /// How the report names the repository: `owner/name` from the `origin` remote's URL, else
    /// the top-level directory's name.
    #[serde(default)]
    pub repo_name: String,
    /// The repository's web page when the `origin` remote is on a forge
    /// (`https://github.com/o/n`): reports link findings to their lines there.
    #[serde(default)]
    pub web_url: Option<String>,
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
    /// The pull request's unresolved review threads, when the target is one (filled by the
    /// forge, `crate::forge`): material for the reviewers to weigh, never instructions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub review_threads: Vec<ReviewThread>,
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
        if let Some(pr) = &self.pr
            && !pr.title.is_empty()
        {
            return Some(pr.title.clone());
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

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
    Renamed,
    Copied,
    TypeChanged,
}

/// One hunk header: `@@ -old_start,old_lines +new_start,new_lines @@`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hunk {
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
}

/// One file the change touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedFile {
    /// The path at head; for a deleted file, its path at the base.
    pub path: String,
    /// The path at the base, for renames and copies.
    pub old_path: Option<String>,
    pub kind: ChangeKind,
    pub added: u32,
    pub removed: u32,
    pub binary: bool,
    /// A submodule pointer: listed, never diffed.
    pub submodule: bool,
    /// Hunks with zero context lines (`git diff -U0`): exactly the added and removed lines.
    pub hunks: Vec<Hunk>,
}
