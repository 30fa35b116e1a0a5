//! The two lines that bound the appendix of a report deep-review writes, so a reader knows
//! where the raw reviews end and the report's own sections (its Resolution) begin.
//!
//! The raw reviews are other people's text and may hold anything a report holds: a
//! `## Resolution` table marking a finding Skipped, a "Declined in prior rounds" list, a
//! reviewer heading. Nothing in the text of the last review tells its end from a section
//! appended after it, so the writer marks the end:
//!
//! ```text
//! ## Appendix: Original Reviews
//! <!-- deep-review:appendix 3f9c… -->
//! ### Claude Opus 4.6
//! …
//! <!-- deep-review:appendix-end 3f9c… -->
//! ```
//!
//! The key is a hash of every review in the appendix. A review cannot hold the end line of the
//! appendix it sits in: the line names a hash of that review's own text (a fixed point of
//! SHA-256), so only the writer can write it. Reports without the lines (the reference system's,
//! earlier versions') are split by their headings alone.

use sha2::{Digest, Sha256};

use crate::types::AppendixEntry;

const OPEN: &str = "<!-- deep-review:appendix ";
const END: &str = "<!-- deep-review:appendix-end ";
const CLOSE: &str = " -->";

/// The key of an appendix: the first 128 bits of SHA-256 over every entry's name and text, each
/// length-prefixed (so no two appendices share a key by moving text between entries).
pub fn key(entries: &[AppendixEntry]) -> String {
    let mut hash = Sha256::new();
    for e in entries {
        for part in [e.display.as_bytes(), e.text.as_bytes()] {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part);
        }
    }
    hex::encode(&hash.finalize()[..16])
}

/// The line after the appendix heading.
pub fn open_line(key: &str) -> String {
    format!("{OPEN}{key}{CLOSE}")
}

/// The line after the last review.
pub fn end_line(key: &str) -> String {
    format!("{END}{key}{CLOSE}")
}

/// Where the appendix whose heading line ends at `after_heading` ends, when the writer marked
/// it: the start of its end line, or the end of the text when that line is missing (a report
/// cut short: then everything after the heading is reviews). `None` for an unmarked appendix.
pub fn marked_end(text: &str, after_heading: usize) -> Option<usize> {
    let rest = text.get(after_heading..)?;
    let first = rest.lines().find(|l| !l.trim().is_empty())?;
    let key = first.trim().strip_prefix(OPEN)?.strip_suffix(CLOSE)?.trim();
    if key.is_empty() || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let end = end_line(key);
    let mut at = after_heading;
    for line in rest.split_inclusive('\n') {
        if line.trim() == end {
            return Some(at);
        }
        at += line.len();
    }
    Some(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(display: &str, text: &str) -> AppendixEntry {
        AppendixEntry {
            agent: display.to_lowercase(),
            display: display.into(),
            text: text.into(),
        }
    }

    #[test]
    fn the_end_is_the_line_with_the_key_of_the_opening_line() {
        let key = key(&[entry("A", "review")]);
        let text = format!(
            "## Appendix\n{}\n### A\n\n<!-- deep-review:appendix-end 00 -->\n## Resolution\n{}\n## Resolution\n",
            open_line(&key),
            end_line(&key)
        );
        let end = marked_end(&text, "## Appendix\n".len()).unwrap();
        assert!(text[end..].starts_with(&end_line(&key)));
        // Cut before its end line: all of it is the appendix.
        let cut = &text[..end];
        assert_eq!(marked_end(cut, "## Appendix\n".len()), Some(cut.len()));
        // No opening line: not marked.
        assert_eq!(marked_end("## Appendix\n### A\n", 12), None);
    }

    #[test]
    fn keys_follow_every_entry() {
        let a = key(&[entry("A", "xy"), entry("B", "z")]);
        assert_eq!(a.len(), 32);
        assert_ne!(a, key(&[entry("A", "x"), entry("B", "yz")]));
        assert_ne!(a, key(&[entry("A", "xy"), entry("C", "z")]));
        assert_eq!(a, key(&[entry("A", "xy"), entry("B", "z")]));
    }
}
