//! Coverage: which changed files each agent reviewed, measured against the change itself
//! rather than taken from the agent's own claim.
//!
//! A changed file counts as reviewed when the agent's coverage summary names it (by full path,
//! a partial path or bare name, a directory that holds it, or a glob such as `src/*.rs`) or
//! when one of the agent's findings cites it: an agent that found a problem in a file read it.

use crate::types::Review;

type FastSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;

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
    let entries: Vec<Entry> = review
        .coverage
        .iter()
        .filter_map(|entry| Entry::new(&entry.path))
        .collect();
    // Every file is compared with every cited path: a set answers for all of them at once
    // (a review of 1,000 findings cites about as many paths, and the files number hundreds).
    let cited = PathSet::new(
        review
            .findings
            .iter()
            .flat_map(|f| f.locations.iter())
            .map(|loc| loc.path.as_str()),
    );
    let mut misses = Vec::new();
    for file in files {
        let named = entries.iter().any(|entry| entry.covers(file));
        if !named && !cited.matches(file) {
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

/// A coverage entry as written (`src/a.rs`, `a.rs:10-20`, `src/verify/`, `src/verify/*`,
/// `src/**/*.rs`), compiled once.
enum Entry {
    /// A glob: `*` within one path segment, `**` across segments (globset, which matches in
    /// time linear in the path whatever the pattern: a hand-written backtracking matcher took
    /// 93 s on one line of twenty `**/`). A pattern without `/` matches the file name alone;
    /// a relative one may match below any directory (`verify/*.rs`).
    Glob(globset::GlobMatcher),
    /// `src/verify/`: every file below that directory.
    Dir(String),
    /// A path, full or partial.
    Path(String),
}

impl Entry {
    fn new(written: &str) -> Option<Entry> {
        let entry = strip_lines(clean(written));
        if entry.is_empty() {
            return None;
        }
        if entry.contains('*') {
            let pattern = if entry.starts_with('/') || entry.starts_with("**/") {
                entry.trim_start_matches('/').to_string()
            } else {
                format!("**/{entry}")
            };
            return globset::GlobBuilder::new(&pattern)
                .literal_separator(true)
                .build()
                .ok()
                .map(|g| Entry::Glob(g.compile_matcher()));
        }
        if let Some(dir) = entry.strip_suffix('/') {
            return Some(Entry::Dir(dir.to_string()));
        }
        Some(Entry::Path(entry.to_string()))
    }

    fn covers(&self, file: &str) -> bool {
        let file = clean(file);
        match self {
            Entry::Glob(glob) => glob.is_match(file),
            Entry::Dir(dir) => {
                file.starts_with(&format!("{dir}/")) || file.contains(&format!("/{dir}/"))
            }
            Entry::Path(path) => paths_match(path, file),
        }
    }
}

/// Whether a coverage entry as written covers `file`.
#[cfg(test)]
fn entry_covers(entry: &str, file: &str) -> bool {
    Entry::new(entry).is_some_and(|e| e.covers(file))
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

/// Paths that answer "does any of you [`paths_match`] this one?" in a few look-ups, whatever
/// their number: each path is kept whole and by every tail that follows a `/`.
#[derive(Debug, Default)]
pub struct PathSet<'a> {
    /// The paths, [`clean`]ed.
    whole: FastSet<&'a str>,
    /// Every part of a path after one of its `/` (`b/c.go` and `c.go` of `a/b/c.go`).
    tails: FastSet<&'a str>,
}

impl<'a> PathSet<'a> {
    pub fn new(paths: impl IntoIterator<Item = &'a str>) -> Self {
        let mut set = PathSet::default();
        for path in paths {
            let path = clean(path);
            if set.whole.insert(path) {
                for (slash, _) in path.match_indices('/') {
                    set.tails.insert(&path[slash + 1..]);
                }
            }
        }
        set
    }

    /// Whether [`paths_match`] holds between `file` and a path of the set: the same path, one
    /// of the set that ends in `/` and `file`, or `file` ending in `/` and one of the set.
    pub fn matches(&self, file: &str) -> bool {
        let file = clean(file);
        self.whole.contains(file)
            || (!file.is_empty() && self.tails.contains(file))
            || file.match_indices('/').any(|(slash, _)| {
                let tail = &file[slash + 1..];
                !tail.is_empty() && self.whole.contains(tail)
            })
    }
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
    fn a_pathological_glob_is_matched_in_linear_time() {
        // Twenty `**/` segments: exponential for a backtracking matcher (hours), instant here.
        let pattern = format!("src/{}x", "**/".repeat(20));
        let file = format!("src/{}y", "a/".repeat(40));
        // An exponential matcher does not return here (nextest's timeout then fails the test).
        assert!(!entry_covers(&pattern, &file));
        assert!(entry_covers(&pattern, "src/a/b/x"));
    }

    /// The set answers as [`paths_match`] against each of its paths would, for every pair of
    /// spellings: equal, suffixes at and off a `/`, `./`, backticks, empty, doubled slashes.
    #[test]
    fn a_path_set_matches_as_paths_match_does() {
        let spellings = [
            "",
            "/",
            "a.go",
            "app.go",
            "pkg/app.go",
            "./pkg/app.go",
            "`pkg/app.go`",
            "x/pkg/app.go",
            "pkg//app.go",
            "/app.go",
            "p.go",
            "pkg/",
            "pkg",
            "a/",
            "src/a/b.rs",
            "a/b.rs",
            "b.rs",
            " b.rs ",
            "ab.rs",
        ];
        for set_paths in [
            &spellings[..],
            &spellings[2..5],
            &spellings[..1],
            &spellings[13..],
        ] {
            let set = PathSet::new(set_paths.iter().copied());
            for file in spellings {
                let expected = set_paths.iter().any(|p| paths_match(p, file));
                assert_eq!(
                    set.matches(file),
                    expected,
                    "{file:?} against {set_paths:?}"
                );
            }
        }
    }

    #[test]
    fn paths_match_at_slash_boundaries() {
        assert!(paths_match("app.go", "pkg/app.go"));
        assert!(paths_match("./pkg/app.go", "pkg/app.go"));
        assert!(!paths_match("p.go", "pkg/app.go"));
    }
}
