//! GitLab's quick actions made inert in text deep-review posts.
//!
//! On GitLab a line of a comment that starts with `/approve`, `/merge`, `/close`,
//! `/assign_reviewer @x` and the like is a command, run with the rights of the token that posted
//! the comment. An agent's text (and the change it read) is someone else's, so no line of what
//! deep-review posts on GitLab may start with `/` and a letter:
//!
//! - outside code, the slash is backslash-escaped (`\/approve`): Markdown shows `/approve`;
//! - inside a fenced code block, where a backslash would show, a zero-width space goes first:
//!   GitLab skips only some fences (three backticks exactly) when it looks for commands, so a
//!   block is not trusted to protect its lines.
//!
//! Applying it twice changes nothing: no line it writes starts with a slash.

/// A line GitLab could read as a quick action: `/` and a letter at its start (after up to three
/// spaces, which GitLab does not allow, but a reader may strip).
pub fn could_run(line: &str) -> bool {
    let text = line.trim_start_matches(' ');
    line.len() - text.len() <= 3
        && text
            .strip_prefix('/')
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| c.is_ascii_alphabetic())
}

/// `text` with every line that could run a quick action made inert.
pub fn inert(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut fence: Option<(char, usize)> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start_matches([' ', '\t']);
        if let Some(run) = fence_run(trimmed) {
            fence = match fence {
                None => Some(run),
                Some((c, n)) if c == run.0 && run.1 >= n && rest_is_blank(trimmed, run.1) => None,
                open => open,
            };
            out.push_str(line);
            continue;
        }
        if could_run(line) {
            let indent = line.len() - line.trim_start_matches(' ').len();
            if fence.is_some() {
                out.push('\u{200B}');
                out.push_str(line);
            } else {
                out.push_str(&line[..indent]);
                out.push('\\');
                out.push_str(&line[indent..]);
            }
            continue;
        }
        out.push_str(line);
    }
    out
}

/// The fence character and length a line opens or closes a code block with.
fn fence_run(trimmed: &str) -> Option<(char, usize)> {
    let c = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = trimmed.chars().take_while(|x| *x == c).count();
    (n >= 3).then_some((c, n))
}

fn rest_is_blank(trimmed: &str, run: usize) -> bool {
    trimmed[run..].trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_at_the_start_of_a_line_are_escaped() {
        let out = inert("Fine.\n/approve\n  /merge now\n    /close\ntext /unassign\n");
        assert_eq!(
            out,
            "Fine.\n\\/approve\n  \\/merge now\n    /close\ntext /unassign\n"
        );
        assert!(!out.lines().any(could_run), "{out}");
    }

    #[test]
    fn commands_in_code_get_a_zero_width_space_and_fences_stay() {
        let text = "```\n/approve\n```\n~~~~\n/assign_reviewer @x\n~~~~\n/label ~bug";
        let out = inert(text);
        assert_eq!(
            out,
            "```\n\u{200B}/approve\n```\n~~~~\n\u{200B}/assign_reviewer @x\n~~~~\n\\/label ~bug"
        );
        assert_eq!(inert(&out), out, "idempotent");
    }

    #[test]
    fn paths_and_comments_are_not_commands() {
        assert!(!could_run("// a comment"));
        assert!(!could_run("/* block */"));
        assert!(!could_run("/ 2"));
        assert!(could_run("/usr/bin/env"));
        assert_eq!(inert("// x\n/* y */\n"), "// x\n/* y */\n");
    }
}
