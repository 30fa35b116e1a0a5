//! The lines Bitbucket's own diff of a pull request shows, to know before posting which inline
//! comments it would not place: a comment's lines must lie in one hunk of its file on the new
//! side. Read from the pull request's `diff` (unified, as git writes it) and `diffstat`.

use std::collections::HashMap;

/// The new-side line spans of each file's hunks, by path.
#[derive(Debug, Default)]
pub struct Shown {
    spans: HashMap<String, Vec<(u32, u32)>>,
}

impl Shown {
    /// Reads a unified diff; a file whose new side is `/dev/null` (deleted) has no lines.
    pub fn parse(diff: &str) -> Shown {
        let mut spans: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut current: Option<String> = None;
        for line in diff.lines() {
            if line.starts_with("diff --git ") {
                current = None;
            } else if let Some(path) = line.strip_prefix("+++ ") {
                current = path
                    .trim_end()
                    .strip_prefix("b/")
                    .map(|p| p.trim_matches('"').to_string());
            } else if let (Some(path), Some(header)) = (&current, line.strip_prefix("@@ -"))
                && let Some(span) = new_span(header)
            {
                spans.entry(path.clone()).or_default().push(span);
            }
        }
        Shown { spans }
    }

    /// Whether `start..=end` of `path` lies inside one hunk.
    pub fn contains(&self, path: &str, start: u32, end: u32) -> bool {
        self.spans
            .get(path)
            .is_some_and(|s| s.iter().any(|&(a, b)| a <= start && end <= b))
    }
}

/// The new side of a hunk header's `-a,b +c,d @@`: lines `c..=c+d-1` (none when `d` is 0).
fn new_span(header: &str) -> Option<(u32, u32)> {
    let new = header.split(' ').nth(1)?.strip_prefix('+')?;
    let (start, count) = new.split_once(',').unwrap_or((new, "1"));
    let start: u32 = start.parse().ok()?;
    let count: u32 = count.parse().ok()?;
    (count > 0).then(|| (start, start + count - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_on_the_new_side() {
        let diff = "diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n\
                    @@ -1,2 +1,3 @@\n a\n+b\n c\n@@ -10 +11,0 @@\n-x\n\
                    diff --git a/gone.rs b/gone.rs\n--- a/gone.rs\n+++ /dev/null\n@@ -1 +0,0 @@\n-y\n";
        let shown = Shown::parse(diff);
        assert!(shown.contains("src/a.rs", 1, 3));
        assert!(!shown.contains("src/a.rs", 3, 4));
        assert!(!shown.contains("src/a.rs", 11, 11));
        assert!(!shown.contains("gone.rs", 1, 1));
    }
}
