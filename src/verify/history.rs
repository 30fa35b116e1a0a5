//! What the change did to a range of lines: touched or not, where it was at the merge-base, and
//! which names a range defines (to tell when the change calls code it did not touch).
//!
//! Hunks are `git diff -U0` hunks: they cover exactly the added and removed lines, so a line at
//! head outside every hunk's new range is a line the change did not write.

use std::sync::LazyLock;

use regex::Regex;

use crate::types::Hunk;

/// The last head line a hunk covers; a pure deletion (`new_lines == 0`) sits after `new_start`.
fn new_end(h: &Hunk) -> u32 {
    if h.new_lines == 0 {
        h.new_start
    } else {
        h.new_start + h.new_lines - 1
    }
}

/// Whether the change added or removed lines within head lines `start..=end`: an added line in
/// the range, or lines deleted between two lines of the range.
pub fn touched(hunks: &[Hunk], start: u32, end: u32) -> bool {
    hunks.iter().any(|h| {
        if h.new_lines == 0 {
            // Deleted after head line `new_start`: inside the range when between two of its lines.
            h.new_start >= start && h.new_start < end
        } else {
            h.new_start <= end && new_end(h) >= start
        }
    })
}

/// The merge-base line of an untouched head line: shifted by what the hunks before it added
/// and removed.
pub fn base_line(hunks: &[Hunk], head_line: u32) -> u32 {
    let mut delta: i64 = 0;
    for h in hunks {
        let before = if h.new_lines == 0 {
            h.new_start < head_line
        } else {
            new_end(h) < head_line
        };
        if before {
            delta += i64::from(h.old_lines) - i64::from(h.new_lines);
        }
    }
    u32::try_from(i64::from(head_line) + delta).unwrap_or(0)
}

/// Head line ranges (1-based, inclusive) the change added.
pub fn added_ranges(hunks: &[Hunk]) -> impl Iterator<Item = (u32, u32)> + '_ {
    hunks
        .iter()
        .filter(|h| h.new_lines > 0)
        .map(|h| (h.new_start, new_end(h)))
}

static DEFINITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)
        \b(?:fn|func|def|function|class|struct|enum|interface|trait|type|macro_rules!|sub|module|object)
        \s+
        (?:\([^)]*\)\s*)?          # a Go method receiver
        ([A-Za-z_][A-Za-z0-9_]*)
        |
        \b(?:const|let|var|static)\s+(?:mut\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=\s*(?:async\s*)?(?:function\b|\(|[A-Za-z_][A-Za-z0-9_]*\s*=>)
        ",
    )
    .expect("valid regex")
});

/// Names that `lines` define: functions, methods, types, and functions bound to constants
/// (`const f = (...) =>`). Names of two characters or less are left out: too common to mean
/// anything when found in added lines.
pub fn defined_names(lines: &[String]) -> Vec<String> {
    let mut names = Vec::new();
    for line in lines {
        for cap in DEFINITION.captures_iter(line) {
            if let Some(m) = cap.get(1).or_else(|| cap.get(2)) {
                let name = m.as_str().to_string();
                if name.len() > 2 && !names.contains(&name) {
                    names.push(name);
                }
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(old_start: u32, old_lines: u32, new_start: u32, new_lines: u32) -> Hunk {
        Hunk {
            old_start,
            old_lines,
            new_start,
            new_lines,
        }
    }

    #[test]
    fn touched_by_added_lines_or_deletions_inside() {
        let hunks = [hunk(10, 0, 11, 3), hunk(30, 2, 32, 0)];
        assert!(touched(&hunks, 12, 12));
        assert!(touched(&hunks, 5, 11));
        assert!(!touched(&hunks, 1, 10));
        assert!(!touched(&hunks, 14, 32));
        assert!(touched(&hunks, 31, 33));
        assert!(!touched(&hunks, 33, 40));
    }

    #[test]
    fn base_lines_shift_past_hunks() {
        // 3 lines added after old line 10, 2 removed after new line 32.
        let hunks = [hunk(10, 0, 11, 3), hunk(30, 2, 32, 0)];
        assert_eq!(base_line(&hunks, 5), 5);
        assert_eq!(base_line(&hunks, 20), 17);
        assert_eq!(base_line(&hunks, 40), 39);
    }

    #[test]
    fn definitions_in_several_languages() {
        let lines: Vec<String> = [
            "func (s *Server) handleLogin(w http.ResponseWriter) {",
            "pub fn parse_legacy(input: &str) -> Result<()> {",
            "def load_config(path):",
            "export const makeClient = (opts) => {",
            "class TokenCache:",
            "let x = 1;",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            defined_names(&lines),
            vec![
                "handleLogin",
                "parse_legacy",
                "load_config",
                "makeClient",
                "TokenCache"
            ]
        );
    }
}
