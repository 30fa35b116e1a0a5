//! Quoted text that is not code: a commit message or a sentence put in a code block. Such a
//! quote cannot be grounded in the files, and is not evidence against the finding either.

use super::fold;

/// Words that start lines of code far more often than sentences.
const CODE_STARTS: &[&str] = &[
    "return", "if", "for", "while", "def", "fn", "func", "function", "let", "var", "const",
    "import", "from", "class", "select", "with", "else", "elif", "raise", "throw", "yield",
    "await", "async", "pub", "use", "package", "case", "switch", "try", "except", "catch",
];

/// Whether a quote reads as prose rather than code: most of its lines are sentences (at least
/// three words, nearly all of them plain words such as `Fix`, `retry,` or `(#123)`), one of them
/// looks like a sentence (it starts with a capital letter or ends with a full stop), no line
/// starts with a keyword of code and none has the punctuation of code (`=`, `{`, `;`, `()`,
/// `->` ...).
pub fn reads_as_prose(code: &str) -> bool {
    let lines: Vec<String> = code.lines().map(fold).filter(|l| !l.is_empty()).collect();
    if lines.is_empty() {
        return false;
    }
    let starts_like_code = |l: &String| {
        let first = l.split(' ').next().unwrap_or("");
        CODE_STARTS.contains(&first)
    };
    let sentence_like = |l: &String| {
        l.chars().next().is_some_and(char::is_uppercase) || l.ends_with(['.', '!', '?'])
    };
    if lines.iter().any(starts_like_code) || !lines.iter().any(sentence_like) {
        return false;
    }
    let mut words_total = 0usize;
    let mut prose_lines = 0usize;
    for line in &lines {
        if has_code_punctuation(line) {
            return false;
        }
        let tokens: Vec<&str> = line.split(' ').collect();
        let words = tokens.iter().filter(|t| is_word(t)).count();
        words_total += words;
        if tokens.len() >= 3 && words * 10 >= tokens.len() * 8 {
            prose_lines += 1;
        }
    }
    words_total >= 6 && prose_lines * 10 >= lines.len() * 7
}

/// The change's commit messages, folded and lower-cased line by line, to tell a quoted commit
/// message from quoted code.
#[derive(Debug, Clone, Default)]
pub struct Messages {
    text: String,
}

impl Messages {
    pub fn new(raw: &str) -> Self {
        let mut text = String::with_capacity(raw.len());
        for line in raw.lines() {
            text.push_str(&fold(line).to_lowercase());
            text.push('\n');
        }
        Messages { text }
    }

    /// Whether most of the quote's lines (those of six characters or more) appear in the
    /// messages, whatever their case and spacing: the reviewer quoted a commit message.
    pub fn hold(&self, code: &str) -> bool {
        let lines: Vec<String> = code
            .lines()
            .map(|l| fold(l).to_lowercase())
            .filter(|l| l.chars().count() >= 6)
            .collect();
        if lines.is_empty() {
            return false;
        }
        let found = lines
            .iter()
            .filter(|l| self.text.contains(l.as_str()))
            .count();
        found * 10 >= lines.len() * 6
    }
}

fn has_code_punctuation(line: &str) -> bool {
    line.contains(['=', '{', '}', ';', '[', ']', '<', '>', '|', '&', '$', '\\'])
        || line.contains("()")
        || line.contains("->")
        || line.contains("::")
        || line.ends_with('(')
        || line.ends_with(',') && !line.contains(' ')
}

/// A plain word of prose: letters (with `'` or `-` inside), a number or an issue reference,
/// possibly in parentheses or quotes and followed by punctuation.
fn is_word(token: &str) -> bool {
    let t = token
        .trim_start_matches(['(', '"', '\'', '`', '*', '_'])
        .trim_end_matches([')', '"', '\'', '`', '*', '_', '.', ',', ';', ':', '!', '?']);
    if t.is_empty() {
        return false;
    }
    let t = t.strip_prefix('#').unwrap_or(t);
    t.chars()
        .all(|c| c.is_alphabetic() || c == '\'' || c == '-')
        && t.chars().next().is_some_and(char::is_alphabetic)
        || t.chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_messages_and_sentences_are_prose() {
        assert!(reads_as_prose(
            "Fix retry loop for busy servers (#123)\n\nThe client retried forever when the\nserver answered 503. Stop after five attempts."
        ));
        assert!(reads_as_prose("This function is never called by anyone."));
    }

    #[test]
    fn code_is_not() {
        for code in [
            "return value if value else default",
            "if err != nil {\n\treturn err\n}",
            "for x in items:\n    total += x",
            "SELECT name FROM users WHERE id = 1",
            "import os\nimport sys",
            "fetch(url)",
        ] {
            assert!(!reads_as_prose(code), "{code}");
        }
    }

    #[test]
    fn a_quote_from_the_commit_messages() {
        let messages = Messages::new(
            "Retry busy servers\n\nThe client now retries 503 answers\nup to five times.\n",
        );
        assert!(messages.hold("retry busy servers\nThe client now  retries 503 answers"));
        assert!(!messages.hold("let x = retry();"));
        assert!(!messages.hold("ok"));
    }
}
