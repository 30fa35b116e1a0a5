//! The summary comment kept within what a forge takes in one comment: GitHub refuses a body
//! over 65,536 characters with a 422 ("Body is too long (maximum is 65536 characters)"), GitLab
//! a note over 1,000,000 characters (`Gitlab::Database::MAX_TEXT_SIZE_LIMIT`) with a 400
//! ("Note is too long (maximum is 1000000 characters)"). A summary over the limit loses its tail, never its marker (the first line,
//! which later posts find it by) nor its footer (the report's id); an open code block or
//! `<details>` at the cut is closed, and a sentence says what was cut and where the full report
//! is. A summary within the limit is left byte for byte as it was.

use crate::types::RequestKind;

/// The most characters a comment body may hold on the forge of `kind`.
pub fn max_body_chars(kind: RequestKind) -> usize {
    match kind {
        RequestKind::PullRequest => 65_536,
        RequestKind::MergeRequest => 1_000_000,
    }
}

/// The summary `body` of a report as the forge of `kind` takes it: within
/// [`max_body_chars`].
pub fn summary_for(
    kind: RequestKind,
    body: String,
    report_id: &str,
    report_url: Option<&str>,
) -> String {
    let forge = match kind {
        RequestKind::PullRequest => "GitHub",
        RequestKind::MergeRequest => "GitLab",
    };
    let note = CutNote {
        forge,
        report_id,
        report_url,
    };
    summary(body, max_body_chars(kind), &note)
}

/// What to say where the summary is cut.
pub struct CutNote<'a> {
    pub forge: &'static str,
    pub report_id: &'a str,
    /// Where the full report can be read, when the user gave it.
    pub report_url: Option<&'a str>,
}

/// `body` within `max` characters (see the module's comment).
pub fn summary(body: String, max: usize, note: &CutNote<'_>) -> String {
    let total = body.chars().count();
    if total <= max {
        return body;
    }
    let (text, footer) = match body.rsplit_once('\n') {
        Some((text, last)) if last.starts_with("<sub>") => (text, last),
        _ => (body.as_str(), ""),
    };
    let sentence = cut_sentence(total, max, note);
    // One more for the line break a cut after the text's last line adds.
    let budget = max.saturating_sub(sentence.chars().count() + footer.chars().count() + 1);
    let mut open = Open::default();
    let mut out = String::new();
    let mut used = 0;
    for line in text.split_inclusive('\n') {
        let chars = line.chars().count();
        let mut after = open.clone();
        after.read(line);
        // What this line leaves open must be closed within the limit too.
        if used + chars + after.closing().chars().count() > budget {
            break;
        }
        used += chars;
        open = after;
        out.push_str(line);
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&open.closing());
    out.push_str(&sentence);
    out.push_str(footer);
    out
}

/// The sentence at the cut: how much was cut, why, and where the rest is.
fn cut_sentence(total: usize, max: usize, note: &CutNote<'_>) -> String {
    let id = note.report_id.replace('`', "");
    let rest = match note.report_url {
        Some(url) => format!("[the full report]({url}) has every finding"),
        None => format!("the full report has every finding (`deep-review show {id}`)"),
    };
    format!(
        "\n**This summary is cut here**: it is {total} characters and {} takes at most {max} in a comment; {rest}.\n\n",
        note.forge
    )
}

/// What is open at a point of Markdown: a fenced code block (its fence) and `<details>`.
#[derive(Default, Clone)]
struct Open {
    fence: Option<String>,
    details: usize,
}

impl Open {
    fn read(&mut self, line: &str) {
        let trimmed = line.trim_end();
        if let Some(fence) = &self.fence {
            let closes =
                trimmed.len() >= fence.len() && trimmed.chars().all(|c| fence.starts_with(c));
            if closes {
                self.fence = None;
            }
            return;
        }
        let run = |c: char| trimmed.chars().take_while(|x| *x == c).count();
        for c in ['`', '~'] {
            if run(c) >= 3 {
                self.fence = Some(c.to_string().repeat(run(c)));
                return;
            }
        }
        self.details += trimmed.matches("<details>").count();
        self.details = self
            .details
            .saturating_sub(trimmed.matches("</details>").count());
    }

    /// The lines that close what is open, innermost first.
    fn closing(&self) -> String {
        let mut out = String::new();
        if let Some(fence) = &self.fence {
            out.push_str(fence);
            out.push('\n');
        }
        for _ in 0..self.details {
            out.push_str("\n</details>\n");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note() -> CutNote<'static> {
        CutNote {
            forge: "GitHub",
            report_id: "20260101-000000-pr-7",
            report_url: None,
        }
    }

    #[test]
    fn a_summary_within_the_limit_is_left_as_it_is() {
        let body = "<!-- m -->\nshort\n<sub>footer</sub>".to_string();
        assert_eq!(summary(body.clone(), 100, &note()), body);
    }

    #[test]
    fn a_long_summary_keeps_its_marker_and_footer_and_closes_what_is_open() {
        let mut body =
            "<!-- deep-review:summary -->\n<details><summary>x</summary>\n\n```diff\n".to_string();
        for i in 0..5_000 {
            body.push_str(&format!("+line {i} é\n"));
        }
        body.push_str("```\n</details>\n\n<sub>deep-review · report `r`</sub>");
        for max in [1_000, 1_234, 1_999, 3_000] {
            let n = summary(body.clone(), max, &note()).chars().count();
            assert!(n <= max && n + 20 > max, "{n} for {max}");
        }
        let capped = summary(body, 2_000, &note());
        assert!(
            capped.chars().count() <= 2_000,
            "{}",
            capped.chars().count()
        );
        assert!(capped.starts_with("<!-- deep-review:summary -->\n<details>"));
        assert!(capped.ends_with("<sub>deep-review · report `r`</sub>"));
        let tail = &capped[capped.find("+line").unwrap()..];
        assert!(tail.contains("```\n\n</details>\n"), "{tail}");
        assert!(
            capped.contains("GitHub takes at most 2000 in a comment")
                && capped.contains("`deep-review show 20260101-000000-pr-7`"),
            "{capped}"
        );
    }
}
