//! The changed files of `base..head` with their hunks, from `git diff` (not built yet: types only).

use std::path::Path;

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Hunk {
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
}

/// One file the change touched.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

/// The files changed between `base` and `head` (commit-ishes) in the repository at `repo`,
/// with renames followed.
pub fn changed_files(_repo: &Path, _base: &str, _head: &str) -> anyhow::Result<Vec<ChangedFile>> {
    anyhow::bail!("target::diff::changed_files is not built yet")
}
