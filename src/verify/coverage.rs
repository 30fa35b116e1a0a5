//! Coverage: which changed files each agent says it reviewed.

use crate::model::Review;

/// One agent's coverage of the change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    /// Changed files the agent's coverage summary names.
    pub reviewed: usize,
    /// All files considered: the changed files when known, else the union of coverage entries.
    pub total: usize,
    /// Files of `total` the agent did not name, sorted.
    pub misses: Vec<String>,
}

impl Coverage {
    pub fn files_reviewed(&self) -> String {
        format!("{}/{}", self.reviewed, self.total)
    }
}

/// Coverage of `review` against `files`: a file counts as reviewed when a coverage entry names
/// it (by full path, or by a path that ends with it or that it ends with).
pub fn coverage_of(review: &Review, files: &[String]) -> Coverage {
    let mut misses = Vec::new();
    for file in files {
        let named = review
            .coverage
            .iter()
            .any(|entry| paths_match(&entry.path, file));
        if !named {
            misses.push(file.clone());
        }
    }
    misses.sort();
    Coverage {
        reviewed: files.len() - misses.len(),
        total: files.len(),
        misses,
    }
}

/// True when two spellings of a path name the same file: equal, or one a suffix of the other
/// at a `/` boundary (`app.go` and `pkg/app.go`).
pub fn paths_match(a: &str, b: &str) -> bool {
    let a = a.trim().trim_matches('`').trim_start_matches("./");
    let b = b.trim().trim_matches('`').trim_start_matches("./");
    if a == b {
        return true;
    }
    let (short, long) = if a.len() < b.len() { (a, b) } else { (b, a) };
    !short.is_empty() && long.ends_with(short) && long[..long.len() - short.len()].ends_with('/')
}
