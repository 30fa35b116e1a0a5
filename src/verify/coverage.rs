//! Coverage: which changed files each agent reviewed, measured against the change itself
//! rather than taken from the agent's own claim.
//!
//! A changed file counts as reviewed when the agent's coverage summary names it (by full path,
//! a partial path or bare name, a directory that holds it, or a glob such as `src/*.rs`) or
//! when one of the agent's findings cites it: an agent that found a problem in a file read it.

use crate::types::Review;

/// One agent's coverage of the change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    /// Changed files the agent reviewed.
    pub reviewed: usize,
    /// All files considered: the changed files given.
    pub total: usize,
    /// Files of `total` the agent did not name, sorted.
    pub misses: Vec<String>,
}

impl Coverage {
    /// Files reviewed out of all, as the retro counts them.
    pub fn files_reviewed(&self) -> crate::types::FileCount {
        crate::types::FileCount {
            reviewed: self.reviewed,
            total: self.total,
        }
    }
}

/// Coverage of `review` against `files` (the changed paths, e.g.
/// [`super::VerifyOutcome::changed_paths`]).
pub fn coverage_of(review: &Review, files: &[String]) -> Coverage {
    let mut misses = Vec::new();
    for file in files {
        let named = review
            .coverage
            .iter()
            .any(|entry| entry_covers(&entry.path, file));
        let cited = review
            .findings
            .iter()
            .flat_map(|f| f.locations.iter())
            .any(|loc| paths_match(&loc.path, file));
        if !named && !cited {
            misses.push(file.clone());
        }
    }
    misses.sort();
    misses.dedup();
    Coverage {
        reviewed: files.len() - misses.len(),
        total: files.len(),
        misses,
    }
}

/// Whether a coverage entry as written (`src/a.rs`, `a.rs:10-20`, `src/verify/`,
/// `src/verify/*`, `src/**/*.rs`) covers `file`.
fn entry_covers(entry: &str, file: &str) -> bool {
    let entry = strip_lines(clean(entry));
    if entry.is_empty() {
        return false;
    }
    if entry.contains('*') {
        return glob_matches(entry, clean(file));
    }
    if let Some(dir) = entry.strip_suffix('/') {
        let file = clean(file);
        return file.starts_with(&format!("{dir}/")) || file.contains(&format!("/{dir}/"));
    }
    paths_match(entry, file)
}

/// True when two spellings of a path name the same file: equal, or one a suffix of the other
/// at a `/` boundary (`app.go` and `pkg/app.go`).
pub fn paths_match(a: &str, b: &str) -> bool {
    let a = clean(a);
    let b = clean(b);
    if a == b {
        return true;
    }
    let (short, long) = if a.len() < b.len() { (a, b) } else { (b, a) };
    !short.is_empty() && long.ends_with(short) && long[..long.len() - short.len()].ends_with('/')
}

fn clean(p: &str) -> &str {
    p.trim().trim_matches('`').trim().trim_start_matches("./")
}

/// `a.rs:10-20` → `a.rs`; a path with no line suffix is returned as is.
fn strip_lines(p: &str) -> &str {
    match p.rsplit_once(':') {
        Some((path, lines))
            if !path.is_empty()
                && !lines.is_empty()
                && lines
                    .chars()
                    .all(|c| c.is_ascii_digit() || matches!(c, '-' | '–' | ',' | ' ')) =>
        {
            path
        }
        _ => p,
    }
}

/// A small glob: `*` matches within one path segment, `**` across segments. A pattern without
/// a `/` matches the file name alone (`*.rs`).
fn glob_matches(pattern: &str, path: &str) -> bool {
    if !pattern.contains('/') {
        let name = path.rsplit('/').next().unwrap_or(path);
        return glob(pattern.as_bytes(), name.as_bytes());
    }
    glob(pattern.as_bytes(), path.as_bytes())
        || (!pattern.starts_with('/') && {
            // A relative pattern may also match below some directory: `verify/*.rs`.
            path.match_indices('/')
                .any(|(at, _)| glob(pattern.as_bytes(), &path.as_bytes()[at + 1..]))
        })
}

fn glob(p: &[u8], s: &[u8]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some(b'*') if p.get(1) == Some(&b'*') => {
            let rest = p[2..].strip_prefix(b"/").unwrap_or(&p[2..]);
            (0..=s.len()).any(|i| glob(rest, &s[i..]))
        }
        Some(b'*') => (0..=s.len())
            .take_while(|&i| i == 0 || s[i - 1] != b'/')
            .any(|i| glob(&p[1..], &s[i..])),
        Some(&c) => s.first() == Some(&c) && glob(&p[1..], &s[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_as_reviewers_write_them() {
        assert!(entry_covers("`src/a.rs`", "src/a.rs"));
        assert!(entry_covers("a.rs:10-20", "src/a.rs"));
        assert!(entry_covers("src/verify/", "src/verify/mod.rs"));
        assert!(entry_covers("verify/", "src/verify/mod.rs"));
        assert!(entry_covers("src/verify/*", "src/verify/mod.rs"));
        assert!(!entry_covers("src/verify/*", "src/verify/deep/x.rs"));
        assert!(entry_covers("src/**/*.rs", "src/verify/deep/x.rs"));
        assert!(entry_covers("*.rs", "src/verify/deep/x.rs"));
        assert!(entry_covers("verify/*.rs", "src/verify/mod.rs"));
        assert!(!entry_covers("*.go", "src/verify/mod.rs"));
        assert!(!entry_covers("a.rs", "src/ba.rs"));
        assert!(!entry_covers("", "src/a.rs"));
    }

    #[test]
    fn paths_match_at_slash_boundaries() {
        assert!(paths_match("app.go", "pkg/app.go"));
        assert!(paths_match("./pkg/app.go", "pkg/app.go"));
        assert!(!paths_match("p.go", "pkg/app.go"));
    }
}
