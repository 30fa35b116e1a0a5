//! A pull request's diff as GitHub shows it, made by git from the fake's own repository (GitHub's
//! side of git): the files of `GET /pulls/{n}/files` with their patches (three lines of context,
//! renames found), and the lines a review comment may sit on: the new side of one hunk. A file
//! whose diff GitHub does not render (too large) has no patch, and no line of it takes a comment.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

/// One file of the diff.
#[derive(Debug, Clone)]
pub struct DiffFile {
    pub path: String,
    pub previous: Option<String>,
    pub status: &'static str,
    pub additions: usize,
    pub deletions: usize,
    /// The hunks as text (from the first `@@`), `None` when binary or not rendered.
    pub patch: Option<String>,
    /// Each hunk's new-side lines (context and added), in order.
    pub hunks: Vec<Vec<u32>>,
}

impl DiffFile {
    /// Whether `start..=end` on the new side lies in one hunk, every line of it shown.
    pub fn takes_comment(&self, start: u32, end: u32) -> bool {
        self.patch.is_some()
            && self
                .hunks
                .iter()
                .any(|lines| lines.contains(&start) && lines.contains(&end))
    }

    /// The entry of `GET /pulls/{n}/files`.
    pub fn json(&self, base_url: &str, sha: &str) -> Value {
        let mut v = json!({
            "sha": "0".repeat(40),
            "filename": self.path,
            "status": self.status,
            "additions": self.additions,
            "deletions": self.deletions,
            "changes": self.additions + self.deletions,
            "blob_url": format!("{base_url}/blob/{sha}/{}", self.path),
            "raw_url": format!("{base_url}/raw/{sha}/{}", self.path),
            "contents_url": format!("{base_url}/contents/{}?ref={sha}", self.path),
        });
        if let Some(patch) = &self.patch {
            v["patch"] = json!(patch);
        }
        if let Some(previous) = &self.previous {
            v["previous_filename"] = json!(previous);
        }
        v
    }
}

/// The diff of `base...head` in `git_dir`; `unrendered` paths get no patch, as GitHub gives
/// none for a diff too large to show.
pub fn pull_diff(git_dir: &Path, base: &str, head: &str, unrendered: &[String]) -> Vec<DiffFile> {
    let out = Command::new("git")
        .args(["--git-dir"])
        .arg(git_dir)
        .args([
            "diff",
            "--no-color",
            "--no-ext-diff",
            "-U3",
            "-M",
            &format!("{base}...{head}"),
        ])
        .output()
        .expect("git diff in the fake GitHub's repository");
    assert!(
        out.status.success(),
        "git diff {base}...{head}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut files = Vec::new();
    for chunk in text.split("\ndiff --git ").filter(|c| !c.trim().is_empty()) {
        files.push(file_of(chunk, unrendered));
    }
    files
}

fn file_of(chunk: &str, unrendered: &[String]) -> DiffFile {
    let mut file = DiffFile {
        path: String::new(),
        previous: None,
        status: "modified",
        additions: 0,
        deletions: 0,
        patch: None,
        hunks: Vec::new(),
    };
    let mut patch = String::new();
    let mut in_hunks = false;
    let mut old_path = None;
    let mut new_line = 0u32;
    for line in chunk.lines() {
        if !in_hunks {
            if let Some(p) = line.strip_prefix("+++ b/") {
                file.path = p.to_string();
            } else if let Some(p) = line.strip_prefix("--- a/") {
                old_path = Some(p.to_string());
            } else if let Some(p) = line.strip_prefix("rename from ") {
                file.previous = Some(p.to_string());
                file.status = "renamed";
            } else if let Some(p) = line.strip_prefix("rename to ") {
                file.path = p.to_string();
            } else if line.starts_with("new file mode") {
                file.status = "added";
            } else if line.starts_with("deleted file mode") {
                file.status = "removed";
            }
        }
        if let Some(header) = line.strip_prefix("@@ ") {
            in_hunks = true;
            let new = header.split(' ').nth(1).unwrap_or("+0");
            let start = new
                .trim_start_matches('+')
                .split(',')
                .next()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            new_line = start;
            file.hunks.push(Vec::new());
            patch.push_str(line);
            patch.push('\n');
            continue;
        }
        if !in_hunks {
            continue;
        }
        patch.push_str(line);
        patch.push('\n');
        let hunk = file.hunks.last_mut().expect("a hunk");
        match line.as_bytes().first() {
            Some(b'+') => {
                file.additions += 1;
                hunk.push(new_line);
                new_line += 1;
            }
            Some(b'-') => file.deletions += 1,
            Some(b' ') => {
                hunk.push(new_line);
                new_line += 1;
            }
            _ => {}
        }
    }
    if file.path.is_empty() {
        file.path = old_path.unwrap_or_default();
    }
    if in_hunks && !unrendered.contains(&file.path) {
        file.patch = Some(patch.trim_end_matches('\n').to_string());
    }
    if !in_hunks || unrendered.contains(&file.path) {
        file.hunks.clear();
    }
    file
}
