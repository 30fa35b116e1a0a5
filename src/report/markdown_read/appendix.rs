//! Splitting a report's "Appendix: Original Reviews" into one raw review per reviewer heading.
//!
//! The reviews are untrusted Markdown: they hold headings of every level, code fences that never
//! close, fences wrapped in fences, `<!--` with no end. A CommonMark parse of the whole report
//! lets one broken review hide the reviewer headings after it, so the split is decided by the
//! appendix's own structure, line by line:
//!
//! - reviewer headings name a reviewer of the Reviewers row (or a known agent CLI when there is
//!   no row) and all have the level of the first, and its form: the reviewer named in full
//!   (`### Claude Opus 4.6`, `### [Claude] — Pass 1`) or by a bare short name (`### Claude`);
//! - a reviewer heading starts a review only where the previous review could end: after a blank
//!   line, a `---` line or another heading, never inside a paragraph;
//! - a heading that repeats an earlier reviewer heading word for word is part of a review
//!   (Claude writing `### Codex GPT 5.4` inside its review): when it comes right after that
//!   same heading it was the previous review's, so the later one starts the review;
//! - a heading naming the same reviewer right under its reviewer heading is the review's
//!   title;
//! - where the writer marked the end of the appendix ([`crate::report::appendix_marks`]), the
//!   appendix ends there and every heading before it is a reviewer heading or a line of a
//!   review, report sections too;
//! - in a report without the mark, a report section (`## Resolution`, `## Agent Performance
//!   Retro`, ...) after the last review ends the appendix, unless a new reviewer heading, a
//!   review section (`## Coverage Summary`) or the same report section again follows it: then
//!   it was a line of a review; so is one inside a code fence.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::parse::lines;
use crate::types::Reviewer;

/// An ATX heading line of the report.
#[derive(Debug)]
pub(super) struct Heading {
    pub(super) level: u8,
    pub(super) text: String,
    /// The heading line, with its `\n` (the review starts after).
    pub(super) range: Range<usize>,
    /// Inside a code fence, as a reader of the whole report sees it. Only the part before the
    /// appendix, which the tool wrote itself, is read with this.
    pub(super) in_fence: bool,
    /// The line before is blank, a thematic break or a heading (or there is none): a review
    /// could end here.
    pub(super) after_break: bool,
}

/// Every ATX heading line of the report, in order.
pub(super) fn headings(text: &str) -> Vec<Heading> {
    let mut out = Vec::new();
    let mut fences = lines::Fences::default();
    let mut after_break = true;
    for (start, line) in lines::with_offsets(text) {
        let in_fence = fences.code(line);
        let heading = if in_fence && lines::fence(line).is_some() {
            None
        } else {
            lines::atx_heading(line)
        };
        if let Some((level, t)) = heading {
            out.push(Heading {
                level,
                text: t.trim_matches(['*', '_']).trim().to_string(),
                range: start..start + line.len(),
                in_fence,
                after_break,
            });
        }
        after_break = heading.is_some() || line.trim().is_empty() || lines::is_thematic_break(line);
    }
    out
}

/// How a reviewer heading names its reviewer; every reviewer heading of an appendix is written
/// the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    /// `[Claude] — Pass 1`
    Tag,
    /// `Claude Opus 4.6`, the display name of the Reviewers row.
    Display,
    /// `Claude`, the reviewer's short name.
    Short,
}

impl Style {
    /// Whether a heading of this style belongs with a first heading of style `first`: a tag
    /// and a display name both name the reviewer in full and mix in hand-edited reports; a bare
    /// short name (`### Codex`) is a reviewer heading only in an appendix that names them so.
    fn fits(self, first: Style) -> bool {
        (self == Style::Short) == (first == Style::Short)
    }
}

/// The reviewer a heading names.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct AgentHeading {
    pub(super) name: String,
    /// The display name from the Reviewers row (or the tag) when there is one.
    pub(super) display: Option<String>,
    pub(super) style: Style,
}

/// The agent CLIs a report without a Reviewers row may name.
const KNOWN_AGENTS: &[&str] = &[
    "claude", "codex", "gemini", "opencode", "copilot", "cursor", "aider", "qwen",
];

/// The names a reviewer heading may start with, in a trie: matching a heading costs its length,
/// however many reviewers the row lists.
pub(super) struct ReviewerNames<'r> {
    reviewers: &'r [Reviewer],
    nodes: Vec<Node>,
}

#[derive(Default)]
struct Node {
    next: HashMap<char, usize>,
    /// Names ending here: (index in the Reviewers row, or none for a known agent CLI; style).
    ends: Vec<(Option<usize>, Style)>,
}

/// What may follow a name in a heading: `Claude Opus 4.6 — Pass 2`, `Claude (effort: high)`.
fn is_name_end(c: Option<char>) -> bool {
    c.is_none_or(|c| matches!(c, ' ' | '(' | ':' | '—' | '–' | '-' | '\t'))
}

impl<'r> ReviewerNames<'r> {
    pub(super) fn new(reviewers: &'r [Reviewer]) -> Self {
        let mut names = ReviewerNames {
            reviewers,
            nodes: vec![Node::default()],
        };
        if reviewers.is_empty() {
            for a in KNOWN_AGENTS {
                names.add(a, None, Style::Short);
            }
        }
        for (i, r) in reviewers.iter().enumerate() {
            names.add(&r.display.to_lowercase(), Some(i), Style::Display);
            names.add(&r.name, Some(i), Style::Short);
        }
        names
    }

    fn add(&mut self, key: &str, reviewer: Option<usize>, style: Style) {
        if key.is_empty() {
            return;
        }
        let mut at = 0;
        for c in key.chars() {
            at = match self.nodes[at].next.get(&c) {
                Some(&n) => n,
                None => {
                    self.nodes.push(Node::default());
                    let n = self.nodes.len() - 1;
                    self.nodes[at].next.insert(c, n);
                    n
                }
            };
        }
        self.nodes[at].ends.push((reviewer, style));
    }

    /// The reviewer a heading names: `[Claude] — Pass 1`, `Claude Opus 4.6`,
    /// `Claude Opus 4.6 — Pass 2`, `Claude`. A display name wins over a short name, and the
    /// first reviewer of the row over later ones.
    pub(super) fn agent_of(&self, text: &str) -> Option<AgentHeading> {
        let t = text.trim();
        if let Some(inner) = t
            .strip_prefix('[')
            .and_then(|r| r.split_once(']'))
            .map(|(n, _)| n)
        {
            let name = super::short_name(inner);
            if name.is_empty() {
                return None;
            }
            let display = self
                .reviewers
                .iter()
                .find(|r| r.name == name)
                .map(|r| r.display.clone());
            if !self.reviewers.is_empty() && display.is_none() {
                return None;
            }
            return Some(AgentHeading {
                name,
                display: display.or_else(|| Some(inner.trim().to_string())),
                style: Style::Tag,
            });
        }
        let lower = t.to_lowercase();
        let mut best: Option<(Option<usize>, Style)> = None;
        let mut at = 0;
        let mut chars = lower.chars().peekable();
        while let Some(c) = chars.next() {
            let Some(&n) = self.nodes[at].next.get(&c) else {
                break;
            };
            at = n;
            if is_name_end(chars.peek().copied()) {
                for &(r, style) in &self.nodes[at].ends {
                    let better = match best {
                        None => true,
                        Some((br, bs)) => {
                            (style == Style::Display && bs == Style::Short)
                                || (style == bs && r < br)
                        }
                    };
                    if better {
                        best = Some((r, style));
                    }
                }
            }
        }
        let (r, style) = best?;
        Some(match r {
            Some(i) => AgentHeading {
                name: self.reviewers[i].name.clone(),
                display: Some(self.reviewers[i].display.clone()),
                style,
            },
            None => AgentHeading {
                name: super::short_name(t),
                display: Some(t.to_string()),
                style,
            },
        })
    }
}

/// The appendix cut into reviews.
#[derive(Debug, Default)]
pub(super) struct Split {
    /// Per review: the index of its heading in the headings, and the reviewer it names.
    pub(super) reviews: Vec<(usize, AgentHeading)>,
    /// Where the last review ends: the report section after the appendix, or the end.
    pub(super) end: usize,
}

/// Finds the reviewer headings after the appendix heading (`first`, an index into `heads`) and
/// the end of the appendix: `marked_end` where the writer marked it. See the module doc for the
/// rules.
pub(super) fn split(
    text: &str,
    heads: &[Heading],
    first: usize,
    names: &ReviewerNames,
    marked_end: Option<usize>,
) -> Split {
    let mut reviews: Vec<(usize, AgentHeading)> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    // The report section that ends the appendix, unless something shows a review goes on.
    let mut end: Option<usize> = None;
    let mut form: Option<(u8, Style)> = None;
    let within = |h: &Heading| marked_end.is_none_or(|e| h.range.start < e);
    for (k, h) in heads
        .iter()
        .enumerate()
        .skip(first)
        .take_while(|(_, h)| within(h))
    {
        if marked_end.is_none() && h.level <= 2 && super::is_report_section(&h.text) {
            if h.in_fence {
                // Code of the last review, as the whole text reads (the writer closes every
                // fence a review leaves open): not a section of the report.
                continue;
            }
            match end {
                // The report's sections come once: an earlier one of the same name was a
                // line of the last review.
                Some(e) if heads[e].text.eq_ignore_ascii_case(&h.text) => end = Some(k),
                None if !reviews.is_empty() => end = Some(k),
                _ => {}
            }
            continue;
        }
        if !h.after_break {
            continue;
        }
        let agent = match form {
            Some((level, _)) if h.level != level => None,
            None if !(2..=4).contains(&h.level) => None,
            _ => names.agent_of(&h.text),
        };
        let Some(agent) = agent.filter(|a| form.is_none_or(|(_, style)| a.style.fits(style)))
        else {
            // A review section after a report section: that section was a line of a review.
            if h.level <= 2 && crate::parse::markdown::is_section_name(&h.text) {
                end = None;
            }
            continue;
        };
        form.get_or_insert((h.level, agent.style));
        let key = h.text.to_lowercase();
        if seen.contains(&key) {
            // The same heading again: the earlier one was inside the review before it when
            // nothing came between them; otherwise this one is inside a review.
            if end.is_none()
                && reviews.len() > 1
                && reviews
                    .last()
                    .is_some_and(|(j, _)| heads[*j].text.to_lowercase() == key)
            {
                let last = reviews.len() - 1;
                reviews[last] = (k, agent);
            }
            continue;
        }
        // `### Claude Opus 4.6 — review of PR 7` right under `### Claude Opus 4.6`: the
        // review's own title.
        if let Some((j, last)) = reviews.last()
            && last.name == agent.name
            && text[heads[*j].range.end..h.range.start]
                .chars()
                .all(|c| c.is_whitespace() || c == '-')
        {
            continue;
        }
        seen.insert(key);
        end = None;
        reviews.push((k, agent));
    }
    Split {
        reviews,
        end: marked_end.unwrap_or_else(|| end.map_or(text.len(), |k| heads[k].range.start)),
    }
}

/// Whether a review's text leaves a code fence open at its end (a wrapped review, whose outer
/// fence holds fences of the same length, is not counted).
pub(super) fn leaves_fence_open(review: &str) -> bool {
    let mut fences = lines::Fences::default();
    let mut first: Option<(char, usize)> = None;
    let mut last_fence: Option<(char, usize)> = None;
    for line in review.lines() {
        fences.code(line);
        if let Some((c, n, rest)) = lines::fence(line) {
            first.get_or_insert((c, n));
            if rest.trim().is_empty() {
                last_fence = Some((c, n));
            } else {
                last_fence = None;
            }
        } else if !line.trim().is_empty() {
            last_fence = None;
        }
    }
    let wrapped = review
        .lines()
        .find(|l| !l.trim().is_empty())
        .and_then(lines::fence)
        .zip(last_fence)
        .is_some_and(|((c, n, _), (lc, ln))| c == lc && ln >= n);
    fences.is_open() && !wrapped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reviewers(row: &str) -> Vec<Reviewer> {
        super::super::parse_reviewers(row)
    }

    #[test]
    fn names_match_by_display_then_short_name() {
        let revs = reviewers("Claude Opus 4.6, Codex GPT 5.4");
        let names = ReviewerNames::new(&revs);
        let a = names.agent_of("Claude Opus 4.6 — Pass 2").unwrap();
        assert_eq!((a.name.as_str(), a.style), ("claude", Style::Display));
        let a = names.agent_of("Codex").unwrap();
        assert_eq!((a.name.as_str(), a.style), ("codex", Style::Short));
        assert_eq!(a.display.as_deref(), Some("Codex GPT 5.4"));
        assert_eq!(
            names.agent_of("[Codex] — Pass 1").unwrap().style,
            Style::Tag
        );
        assert!(names.agent_of("Codexes").is_none());
        assert!(names.agent_of("Gemini 3.1 Pro").is_none());
        let none = ReviewerNames::new(&[]);
        assert_eq!(none.agent_of("Gemini notes").unwrap().name, "gemini");
    }

    #[test]
    fn open_fence_at_the_end_of_a_review() {
        assert!(leaves_fence_open("## A\n```go\nx\n"));
        assert!(!leaves_fence_open("## A\n```go\nx\n```\n"));
        // Wrapped: the outer fence's last line closes it, whatever the inner fences did.
        assert!(!leaves_fence_open(
            "```markdown\n## A\n```go\nx\n```\n```\n"
        ));
    }
}
