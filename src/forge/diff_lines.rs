//! Which lines of the head a forge lets a review comment on: the lines of the diff's hunks on
//! the new side, that is the changed lines and the context lines around them.
//!
//! The target keeps each file's hunks with no context (`git diff -U0`); forges show (and take
//! comments on) hunks with three lines of context, which git joins when they touch. A range is
//! commentable when it lies inside one such hunk. The diff does not say where a modified file
//! ends, so the context after its last change may be counted past the end: callers post only
//! ranges that verification found at head.

use std::collections::HashMap;

use crate::types::{ChangeKind, ChangedFile};

/// The context lines forges show around a change.
const CONTEXT: u32 = 3;

/// The new-side line ranges of every file's hunks, by path.
#[derive(Debug, Clone, Default)]
pub struct DiffLines {
    ranges: HashMap<String, Vec<(u32, u32)>>,
}

impl DiffLines {
    pub fn new(files: &[ChangedFile]) -> DiffLines {
        let mut ranges = HashMap::new();
        for f in files {
            if f.kind == ChangeKind::Deleted || f.binary || f.submodule {
                continue;
            }
            let mut spans: Vec<(u32, u32)> = Vec::new();
            for h in &f.hunks {
                let (start, end) = if h.new_lines == 0 {
                    // A pure deletion (`+N,0`) sits between lines N and N+1: its context is
                    // N-2..=N before and N+1..=N+3 after (git's `-U3`).
                    (
                        (h.new_start + 1).saturating_sub(CONTEXT).max(1),
                        h.new_start.saturating_add(CONTEXT),
                    )
                } else {
                    let last = h.new_start + h.new_lines - 1;
                    (
                        h.new_start.saturating_sub(CONTEXT).max(1),
                        last.saturating_add(CONTEXT),
                    )
                };
                match spans.last_mut() {
                    Some((_, prev_end)) if start <= prev_end.saturating_add(1) => {
                        *prev_end = (*prev_end).max(end);
                    }
                    _ => spans.push((start, end)),
                }
            }
            if f.kind == ChangeKind::Added
                && let Some(last) = spans.last_mut()
            {
                // A new file's one hunk is the whole file: no context past its last line.
                last.1 = last.1.saturating_sub(CONTEXT);
            }
            if !spans.is_empty() {
                ranges.insert(f.path.clone(), spans);
            }
        }
        DiffLines { ranges }
    }

    /// Lines `start..=end` of `path` lie inside one hunk of the diff.
    pub fn contains(&self, path: &str, start: u32, end: u32) -> bool {
        let (start, end) = (start.min(end), start.max(end));
        self.ranges.get(path).is_some_and(|spans| {
            spans
                .iter()
                .any(|(first, last)| *first <= start && end <= *last)
        })
    }

    /// Whether `path` has any hunk.
    pub fn has_file(&self, path: &str) -> bool {
        self.ranges.contains_key(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Hunk;

    fn file(path: &str, kind: ChangeKind, hunks: &[(u32, u32, u32, u32)]) -> ChangedFile {
        ChangedFile {
            path: path.into(),
            old_path: None,
            kind,
            added: 0,
            removed: 0,
            binary: false,
            submodule: false,
            hunks: hunks
                .iter()
                .map(|&(old_start, old_lines, new_start, new_lines)| Hunk {
                    old_start,
                    old_lines,
                    new_start,
                    new_lines,
                })
                .collect(),
        }
    }

    #[test]
    fn changed_lines_and_their_context_are_commentable() {
        let lines = DiffLines::new(&[
            file(
                "a.rs",
                ChangeKind::Modified,
                &[(10, 1, 10, 2), (40, 2, 41, 0)],
            ),
            file("new.rs", ChangeKind::Added, &[(0, 0, 1, 5)]),
            file("gone.rs", ChangeKind::Deleted, &[(1, 3, 0, 0)]),
        ]);
        assert!(lines.contains("a.rs", 10, 11));
        assert!(lines.contains("a.rs", 7, 14));
        assert!(!lines.contains("a.rs", 6, 10));
        assert!(!lines.contains("a.rs", 15, 15));
        assert!(
            lines.contains("a.rs", 39, 44),
            "around a deletion after line 41, as git's -U3 shows it"
        );
        assert!(!lines.contains("a.rs", 38, 38), "not a line of that hunk");
        assert!(!lines.contains("a.rs", 11, 41), "two hunks apart");
        assert!(lines.contains("new.rs", 1, 5));
        assert!(
            !lines.contains("new.rs", 5, 6),
            "past the end of a new file"
        );
        assert!(!lines.has_file("gone.rs"));
        assert!(!lines.contains("other.rs", 1, 1));
    }

    #[test]
    fn a_deletion_at_the_top_has_only_the_context_after() {
        let lines = DiffLines::new(&[file("a.rs", ChangeKind::Modified, &[(1, 1, 0, 0)])]);
        assert!(lines.contains("a.rs", 1, 3));
        assert!(!lines.contains("a.rs", 4, 4));
    }

    #[test]
    fn hunks_whose_context_touches_are_one() {
        let lines = DiffLines::new(&[file(
            "a.rs",
            ChangeKind::Modified,
            &[(10, 1, 10, 1), (17, 1, 17, 1)],
        )]);
        assert!(lines.contains("a.rs", 9, 18));
    }
}
