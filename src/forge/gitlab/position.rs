//! Where an inline comment goes on a GitLab merge request: a text `position` (the version's
//! base, start and head commits, the file's old and new paths, and the line), built from the
//! merge request's own diff of that version and checked against it. A comment whose lines are
//! not lines of that diff gets no position: it goes to the summary instead, never to GitLab to
//! be refused.
//!
//! GitLab's rules, from its Discussions API: an added line is named by `new_line` alone, an
//! unchanged (context) line by both `old_line` and `new_line`; a comment on several lines
//! anchors on the last and names the first and last in `line_range`, each by its line code
//! (`<sha1 of the path>_<old>_<new>`, where an added line's old number is the old side's
//! counter as GitLab's own diff parser keeps it: the hunk header's old start read literally,
//! so `0` for every line of a new file).

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Value, json};
use sha1::{Digest, Sha1};

/// The commits a version of the merge request's diff is between (its `diff_refs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffRefs {
    pub base_sha: String,
    pub start_sha: String,
    pub head_sha: String,
}

/// One file of a version's diff, as GitLab lists it.
#[derive(Debug, Clone, Deserialize)]
pub struct FileDiff {
    #[serde(default)]
    pub old_path: String,
    #[serde(default)]
    pub new_path: String,
    #[serde(default)]
    pub diff: String,
    #[serde(default)]
    pub deleted_file: bool,
    /// GitLab left the diff out (too large, or collapsed): no line of it can take a comment.
    #[serde(default)]
    pub too_large: Option<bool>,
    #[serde(default)]
    pub collapsed: Option<bool>,
}

/// A line of the new side that the diff shows: its old number when it is unchanged, the old
/// side's next line when it is added, and which hunk it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shown {
    old: u32,
    added: bool,
    hunk: usize,
}

/// The lines of the new side each file's diff shows.
#[derive(Debug, Default)]
pub struct DiffMap {
    files: HashMap<String, (String, HashMap<u32, Shown>)>,
}

impl DiffMap {
    pub fn new(files: &[FileDiff]) -> DiffMap {
        let mut map = DiffMap::default();
        for f in files {
            if f.deleted_file || f.too_large == Some(true) || f.collapsed == Some(true) {
                continue;
            }
            let lines = shown_lines(&f.diff);
            if !lines.is_empty() {
                map.files
                    .insert(f.new_path.clone(), (f.old_path.clone(), lines));
            }
        }
        map
    }

    /// The position of a comment on lines `start..=end` of `path` (new side), or `None` when
    /// those lines are not in one hunk of the diff.
    pub fn position(&self, refs: &DiffRefs, path: &str, start: u32, end: u32) -> Option<Value> {
        let (old_path, lines) = self.files.get(path)?;
        let last = lines.get(&end)?;
        let mut position = json!({
            "position_type": "text",
            "base_sha": refs.base_sha,
            "start_sha": refs.start_sha,
            "head_sha": refs.head_sha,
            "old_path": if old_path.is_empty() { path } else { old_path },
            "new_path": path,
            "new_line": end,
        });
        if !last.added {
            position["old_line"] = json!(last.old);
        }
        if start < end {
            let first = lines.get(&start)?;
            if first.hunk != last.hunk {
                return None;
            }
            position["line_range"] = json!({
                "start": range_point(path, start, first),
                "end": range_point(path, end, last),
            });
        }
        Some(position)
    }
}

fn range_point(path: &str, new: u32, line: &Shown) -> Value {
    let mut point = json!({
        "line_code": line_code(path, line.old, new),
        "type": if line.added { "new" } else { "old" },
        "new_line": new,
    });
    if !line.added {
        point["old_line"] = json!(line.old);
    }
    point
}

/// GitLab's line code: the SHA-1 of the path, then the old and new line numbers.
pub fn line_code(path: &str, old: u32, new: u32) -> String {
    let hex = hex::encode(Sha1::digest(path.as_bytes()));
    format!("{hex}_{old}_{new}")
}

/// The new-side lines of a unified diff's hunks.
fn shown_lines(diff: &str) -> HashMap<u32, Shown> {
    let mut lines = HashMap::new();
    let mut hunk = 0;
    let (mut old, mut new) = (0u32, 0u32);
    let mut in_hunk = false;
    for line in diff.lines() {
        if line.starts_with("@@ ") {
            match hunk_start(line) {
                Some((o, n)) => {
                    (old, new) = (o, n);
                    hunk += 1;
                    in_hunk = true;
                }
                None => in_hunk = false,
            }
            continue;
        }
        if !in_hunk {
            continue;
        }
        match line.as_bytes().first() {
            Some(b'+') => {
                lines.insert(
                    new,
                    Shown {
                        old,
                        added: true,
                        hunk,
                    },
                );
                new += 1;
            }
            Some(b'-') => old += 1,
            Some(b'\\') => {}
            _ => {
                lines.insert(
                    new,
                    Shown {
                        old,
                        added: false,
                        hunk,
                    },
                );
                old += 1;
                new += 1;
            }
        }
    }
    lines
}

/// `@@ -a,b +c,d @@` → `(a, c)`: the old and new line numbers GitLab's diff parser starts a
/// hunk's counters at. It reads both numbers literally, also where a count of 0 makes git's
/// start the line *before* the hunk (`-0,0` of a new file, `-20,0` of a pure insertion): an
/// added line's line code then carries that number, not the one after it. See GitLab's
/// `Gitlab::Diff::Parser#parse` (lib/gitlab/diff/parser.rb: `line_old = line.match(/\-[0-9]*/)`)
/// and `Gitlab::Git.diff_line_code` (`<sha1(path)>_<old>_<new>`).
fn hunk_start(header: &str) -> Option<(u32, u32)> {
    let hunk = crate::target::diff::parse_hunk_header(header)?;
    Some((hunk.old_start, hunk.new_start))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs() -> DiffRefs {
        DiffRefs {
            base_sha: "a".repeat(40),
            start_sha: "b".repeat(40),
            head_sha: "c".repeat(40),
        }
    }

    fn map() -> DiffMap {
        DiffMap::new(&[FileDiff {
            old_path: "src/old.rs".into(),
            new_path: "src/lib.rs".into(),
            diff: "@@ -1,3 +1,4 @@\n fn a() {}\n-fn b() {}\n+fn b2() {}\n+fn c() {}\n fn d() {}\n\\ No newline at end of file\n@@ -20,0 +22,1 @@\n+tail\n".into(),
            deleted_file: false,
            too_large: None,
            collapsed: None,
        }])
    }

    #[test]
    fn added_lines_have_only_a_new_line_and_context_lines_both() {
        let m = map();
        let added = m.position(&refs(), "src/lib.rs", 2, 2).unwrap();
        assert_eq!(added["new_line"], 2);
        assert!(added.get("old_line").is_none(), "{added}");
        assert_eq!(added["old_path"], "src/old.rs");
        let context = m.position(&refs(), "src/lib.rs", 4, 4).unwrap();
        assert_eq!(
            (context["old_line"].as_u64(), context["new_line"].as_u64()),
            (Some(3), Some(4))
        );
        assert_eq!(
            m.position(&refs(), "src/lib.rs", 22, 22).unwrap()["new_line"],
            22
        );
    }

    #[test]
    fn ranges_stay_in_one_hunk_and_name_their_ends_by_line_code() {
        let m = map();
        let range = m.position(&refs(), "src/lib.rs", 1, 3).unwrap();
        let start = &range["line_range"]["start"];
        assert_eq!(start["type"], "old");
        assert_eq!(start["line_code"], line_code("src/lib.rs", 1, 1));
        assert_eq!(
            range["line_range"]["end"]["line_code"],
            line_code("src/lib.rs", 3, 3)
        );
        assert_eq!(range["line_range"]["end"]["type"], "new");
        assert!(
            m.position(&refs(), "src/lib.rs", 4, 22).is_none(),
            "two hunks"
        );
        assert!(
            m.position(&refs(), "src/lib.rs", 5, 5).is_none(),
            "not shown"
        );
        assert!(m.position(&refs(), "other.rs", 1, 1).is_none());
    }

    /// GitLab reads a `-N,0` hunk header literally: every added line of a new file has old
    /// number 0 in its line code, and a pure insertion after old line 20 has 20.
    #[test]
    fn pure_insertions_take_the_old_start_as_gitlab_reads_it() {
        let m = DiffMap::new(&[
            FileDiff {
                old_path: "src/new.rs".into(),
                new_path: "src/new.rs".into(),
                diff: "@@ -0,0 +1,3 @@\n+a\n+b\n+c\n".into(),
                deleted_file: false,
                too_large: None,
                collapsed: None,
            },
            FileDiff {
                old_path: "src/old.rs".into(),
                new_path: "src/old.rs".into(),
                diff: "@@ -20,0 +22,2 @@\n+x\n+y\n".into(),
                deleted_file: false,
                too_large: None,
                collapsed: None,
            },
        ]);
        let new_file = m.position(&refs(), "src/new.rs", 1, 3).unwrap();
        assert_eq!(
            new_file["line_range"]["start"]["line_code"],
            line_code("src/new.rs", 0, 1)
        );
        assert_eq!(
            new_file["line_range"]["end"]["line_code"],
            line_code("src/new.rs", 0, 3)
        );
        let inserted = m.position(&refs(), "src/old.rs", 22, 23).unwrap();
        assert_eq!(
            inserted["line_range"]["start"]["line_code"],
            line_code("src/old.rs", 20, 22)
        );
        assert_eq!(
            inserted["line_range"]["end"]["line_code"],
            line_code("src/old.rs", 20, 23)
        );
    }

    #[test]
    fn line_codes_are_the_sha1_of_the_path_and_both_numbers() {
        assert_eq!(
            line_code("README", 5, 7),
            "69e27356ef629022720d868ab0c0e3394775b6c1_5_7"
        );
    }
}
