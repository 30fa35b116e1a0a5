//! Markdown read line by line, for the decisions a CommonMark parse cannot be trusted with: a
//! review's broken fence or HTML block changes how a CommonMark parser reads everything after
//! it, while these helpers look at one line at a time.

/// The lines of a text with the offset each starts at (each line keeps its `\n`).
pub(crate) fn with_offsets(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut pos = 0;
    text.split_inclusive('\n').map(move |line| {
        let start = pos;
        pos += line.len();
        (start, line)
    })
}

/// A code fence line (indented at most three spaces): its character, the length of its run,
/// and the text after the run (the info string of an opening fence).
pub(crate) fn fence(line: &str) -> Option<(char, usize, &str)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let c = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = trimmed.bytes().take_while(|b| *b == c as u8).count();
    if run < 3 {
        return None;
    }
    let info = &trimmed[run..];
    if c == '`' && info.contains('`') {
        return None;
    }
    Some((c, run, info))
}

/// Tracks code fences over successive lines: the state a line-by-line reader needs to skip
/// fenced code.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Fences {
    open: Option<(char, usize)>,
}

impl Fences {
    /// Reads one line; returns whether it is code or a fence line (not Markdown text).
    pub(crate) fn code(&mut self, line: &str) -> bool {
        match (self.open, fence(line)) {
            (Some((c, n)), Some((lc, ln, rest)))
                if c == lc && ln >= n && rest.trim().is_empty() =>
            {
                self.open = None;
                true
            }
            (Some(_), _) => true,
            (None, Some((c, n, _))) => {
                self.open = Some((c, n));
                true
            }
            (None, None) => false,
        }
    }

    /// Whether a fence is open after the lines read so far.
    pub(crate) fn is_open(&self) -> bool {
        self.open.is_some()
    }
}

/// An ATX heading line (`## Title`, indented at most three spaces): its level and its text,
/// without a closing `##` sequence.
pub(crate) fn atx_heading(line: &str) -> Option<(u8, &str)> {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return None;
    }
    let hashes = t.bytes().take_while(|b| *b == b'#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &t[hashes..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t', '\n', '\r']) {
        return None;
    }
    let text = rest.trim();
    // A closing sequence: `## Title ##`.
    let without_closing = text.trim_end_matches('#');
    let text = if without_closing.len() < text.len()
        && (without_closing.is_empty() || without_closing.ends_with([' ', '\t']))
    {
        without_closing.trim_end()
    } else {
        text
    };
    Some((hashes as u8, text))
}

/// A thematic break: `---`, `***`, `___` (three or more, spaces allowed between).
pub(crate) fn is_thematic_break(line: &str) -> bool {
    let t = line.trim();
    let Some(c) = t.chars().next().filter(|c| matches!(c, '-' | '*' | '_')) else {
        return false;
    };
    let mut n = 0;
    for x in t.chars() {
        if x == c {
            n += 1;
        } else if x != ' ' && x != '\t' {
            return false;
        }
    }
    n >= 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_fences_and_breaks() {
        assert_eq!(
            atx_heading("### Claude Opus 4.6\n"),
            Some((3, "Claude Opus 4.6"))
        );
        assert_eq!(atx_heading("## Resolution ##"), Some((2, "Resolution")));
        assert_eq!(atx_heading("   # x"), Some((1, "x")));
        assert_eq!(atx_heading("    # code"), None);
        assert_eq!(atx_heading("#hashtag"), None);
        assert_eq!(atx_heading("####### seven"), None);
        assert_eq!(fence("```rust\n"), Some(('`', 3, "rust\n")));
        assert_eq!(fence("~~~~"), Some(('~', 4, "")));
        assert_eq!(fence("``` a`b"), None);
        let mut f = Fences::default();
        assert!(!f.code("text"));
        assert!(f.code("````md"));
        assert!(f.code("```"));
        assert!(f.is_open());
        assert!(f.code("````"));
        assert!(!f.is_open());
        assert!(is_thematic_break("- - -"));
        assert!(is_thematic_break("***\n"));
        assert!(!is_thematic_break("--"));
        assert!(!is_thematic_break("-- x"));
    }
}
