//! A finding's fix as a forge suggestion (GitHub's ```` ```suggestion ```` block, which the
//! author can commit with one click), only when that is exactly what the fix says.
//!
//! A suggestion replaces the lines the comment is on with the block's lines. So the fix must be
//! a small diff of one hunk whose old side *is* the finding's lines at head (compared line by
//! line; an agent that re-indented the whole snippet, as Markdown lists make them do, is
//! forgiven when the shift is the same on every line, and the new lines get the file's
//! indentation back). Anything else (several hunks, old lines that differ from the file, a fix
//! in words) is not turned into a suggestion: the fix stays in the comment as the agent wrote it.

/// The most lines a suggestion replaces, and the most it writes: a small fix, readable in a
/// comment.
pub const MAX_OLD_LINES: usize = 20;
pub const MAX_NEW_LINES: usize = 30;

/// The replacement for `current` (the finding's lines at head, in order) that `fix_diff`
/// describes, re-indented to the file; `None` when the diff is not exactly a replacement of
/// those lines.
pub fn suggestion(fix_diff: &str, current: &[&str]) -> Option<Vec<String>> {
    let (old, new) = sides(fix_diff)?;
    if old.is_empty() || old.len() != current.len() || old.len() > MAX_OLD_LINES {
        return None;
    }
    if new.len() > MAX_NEW_LINES {
        return None;
    }
    let shift = Shift::between(&old, current)?;
    for (o, c) in old.iter().zip(current) {
        if shift.apply(o)?.trim_end() != c.trim_end() {
            return None;
        }
    }
    let replacement: Vec<String> = new
        .iter()
        .map(|n| shift.apply(n).map(|l| l.trim_end().to_string()))
        .collect::<Option<_>>()?;
    let unchanged = replacement.len() == current.len()
        && replacement
            .iter()
            .zip(current)
            .all(|(r, c)| r.as_str() == c.trim_end());
    (!unchanged).then_some(replacement)
}

/// The old side (context and removed lines) and the new side (context and added lines) of a
/// one-hunk diff; `None` for anything that is not one.
fn sides(diff: &str) -> Option<(Vec<&str>, Vec<&str>)> {
    let mut old = Vec::new();
    let mut new = Vec::new();
    let mut hunks = 0;
    let mut changed = false;
    let mut lines: Vec<&str> = diff.lines().collect();
    // A diff handed over with its fence.
    if lines
        .first()
        .is_some_and(|l| l.trim_start().starts_with("```"))
    {
        lines.remove(0);
        if lines.last().is_some_and(|l| l.trim() == "```") {
            lines.pop();
        }
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    for line in lines {
        if line.starts_with("diff --git")
            || line.starts_with("index ")
            || line.starts_with("--- ")
            || line.starts_with("+++ ")
            || line.starts_with("\\ ")
        {
            if changed || !old.is_empty() {
                return None;
            }
            continue;
        }
        if line.starts_with("@@") {
            hunks += 1;
            if hunks > 1 || !old.is_empty() || !new.is_empty() {
                return None;
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix('-') {
            old.push(rest);
            changed = true;
        } else if let Some(rest) = line.strip_prefix('+') {
            new.push(rest);
            changed = true;
        } else if let Some(rest) = line.strip_prefix(' ') {
            old.push(rest);
            new.push(rest);
        } else if line.is_empty() {
            old.push("");
            new.push("");
        } else {
            return None;
        }
    }
    changed.then_some((old, new))
}

/// The same change of indentation on every line: `strip` removed from the front, `add` put
/// there instead.
#[derive(Debug, Clone, Copy)]
struct Shift<'a> {
    strip: &'a str,
    add: &'a str,
}

impl<'a> Shift<'a> {
    /// The shift that turns the diff's first non-blank old line into the file's line.
    fn between(old: &[&'a str], current: &[&'a str]) -> Option<Shift<'a>> {
        let (o, c) = old
            .iter()
            .zip(current)
            .find(|(o, _)| !o.trim().is_empty())?;
        let o_ws = &o[..o.len() - o.trim_start().len()];
        let c_ws = &c[..c.len() - c.trim_start().len()];
        if let Some(add) = c_ws.strip_suffix(o_ws) {
            Some(Shift { strip: "", add })
        } else {
            o_ws.strip_suffix(c_ws)
                .map(|strip| Shift { strip, add: "" })
        }
    }

    fn apply(&self, line: &str) -> Option<String> {
        if line.trim().is_empty() {
            return Some(String::new());
        }
        Some(format!("{}{}", self.add, line.strip_prefix(self.strip)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replacement_of_exactly_the_lines_is_a_suggestion() {
        let current = ["    let n = s.parse().unwrap();", "    n + 1"];
        let diff = "-    let n = s.parse().unwrap();\n+    let n = s.parse()?;\n     n + 1\n";
        assert_eq!(
            suggestion(diff, &current),
            Some(vec!["    let n = s.parse()?;".into(), "    n + 1".into()])
        );
        // The same fix written without the file's indentation gets it back.
        let diff = "@@ -4,2 +4,2 @@\n-let n = s.parse().unwrap();\n+let n = s.parse()?;\n n + 1";
        assert_eq!(
            suggestion(diff, &current),
            Some(vec!["    let n = s.parse()?;".into(), "    n + 1".into()])
        );
    }

    #[test]
    fn anything_else_is_not() {
        let current = ["a();", "b();"];
        // Old side is not the finding's lines.
        assert_eq!(suggestion("-a();\n+c();", &current), None);
        assert_eq!(suggestion("-x();\n-b();\n+c();", &current), None);
        // Two hunks, prose, no change, too big.
        assert_eq!(
            suggestion(
                "@@ -1 +1 @@\n-a();\n+c();\n@@ -2 +2 @@\n-b();\n+d();",
                &current
            ),
            None
        );
        assert_eq!(suggestion("Replace a with c.", &current), None);
        assert_eq!(suggestion(" a();\n b();", &current), None);
        let big = format!("-a();\n-b();\n{}", "+x();\n".repeat(MAX_NEW_LINES + 1));
        assert_eq!(suggestion(&big, &current), None);
        // Uneven indentation cannot be undone.
        assert_eq!(suggestion("- a();\n-b();\n+c();", &current), None);
    }

    #[test]
    fn deleting_the_lines_is_an_empty_suggestion() {
        assert_eq!(suggestion("-a();\n-b();", &["a();", "b();"]), Some(vec![]));
    }
}
