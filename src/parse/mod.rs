//! Parse stage: raw review text → [`Review`]. Tolerant of the ways real reviews drift from the
//! contract; what it cannot place is kept and named in a warning, never dropped.
//!
//! - [`markdown`]: the Markdown reader (the layout reviewers are asked to write, and its drift);
//! - [`json`]: a review given as JSON of the `Review` schema (also inside one ```` ```json ````
//!   fence);
//!
//! An existing Deep Review report is read back beside its writer, in
//! [`crate::report::markdown_read`].
//!
//! What the Markdown reader understands:
//!
//! - sections by name at any heading level or as a bold paragraph (`**Critical Issues**`), with
//!   or without a `Findings` wrapper: Executive Summary, Verdict, Critical Issues, Important
//!   Issues, Suggestions, Design Observations (Concerns, Strengths), Testing Assessment,
//!   Documentation Assessment, Acknowledged Limitations, Unresolved Feedback, Commit Structure,
//!   Coverage Summary, and common synonyms;
//! - a finding per numbered or bulleted item, bold paragraph, `S1.`/`**S1.**` paragraph,
//!   heading below its section's heading, or row of a findings table; later findings of a
//!   section are written like the first, so a bold sentence in a body does not start one;
//! - on a finding's first line: the bold title, backticked locations (`a.go:3`, `a.go:3-9`,
//!   `a.go:13-14,30-37`, a bare `355-374` after a path, `a.go#L3-L9`) and the
//!   `(severity, category)` note, plain or in backticks; the note may also end the body or sit
//!   on the second line, and `Severity:`/`Location:` lines work too; without one, the severity
//!   is the section's;
//! - in the body: the first non-diff code block before `Fix:` is the quoted code, prose is the
//!   explanation, text after `Fix:` is the fix, a ```` ```diff ```` block is the fix diff.

pub(crate) mod blocks;
mod head;
mod ids;
pub mod json;
pub(crate) mod lines;
pub mod markdown;

use std::path::Path;

use crate::types::{ParseWarning, Review};

/// The most findings one review is read for. A careful review of a large change has tens;
/// thousands are a flood (an agent in a loop, or output made to exhaust the run), and each
/// finding costs kilobytes here and more in consolidation, so reading stops after this many
/// with a warning that names the line, and the raw review keeps the rest. It is above the 5,000
/// findings per agent the consolidation benchmark checks for accuracy.
pub const MAX_FINDINGS: usize = 5_000;

/// The most places one finding is read for. A finding names the few places of one defect; a
/// line of thousands (an agent listing every call site, or output made to slow the run) would
/// make every later step that compares a finding's places with another's cost their product,
/// so the rest are left out with a warning, and the raw review keeps them.
pub const MAX_LOCATIONS: usize = 100;

/// The reason given for an agent whose output holds nothing of the review layout: no verdict,
/// no findings section, no summary, no JSON review (a config file, an error page, a chat
/// answer). Such text is that agent's failure, never a review that found nothing.
pub const NOT_A_REVIEW: &str = "not a review: no verdict, findings or summary found";

/// Why a raw review or report could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Invalid {
        path: String,
        line: usize,
        message: String,
    },
}

/// Parses one agent's raw review. JSON (the schema of `deep-review schema review`) when the text
/// is a JSON object, Markdown otherwise. Never fails: problems become warnings on the review,
/// with the text that could not be read kept in `unparsed`.
pub fn parse_review(agent: &str, text: &str) -> Review {
    match json_part(text) {
        Some((json_text, shift)) => {
            let mut review = review_of_json(agent, text, json_text, shift);
            cap_findings(&mut review, MAX_FINDINGS);
            review
        }
        None => markdown::parse_markdown(agent, text),
    }
}

/// [`parse_review`] of a text the review keeps as its raw text: a Markdown review is not
/// copied (for a large review, the copy is most of the memory parsing needs).
pub fn parse_review_owned(agent: &str, text: String) -> Review {
    parse_review_owned_limited(agent, text, MAX_FINDINGS)
}

/// [`parse_review_owned`] reading at most `max_findings` findings of a Markdown review (a JSON
/// review is cut to that many): for measuring the reader on floods larger than
/// [`MAX_FINDINGS`].
pub fn parse_review_owned_limited(agent: &str, text: String, max_findings: usize) -> Review {
    match json_part(&text) {
        Some((json_text, shift)) => {
            let mut review = review_of_json(agent, &text, json_text, shift);
            cap_findings(&mut review, max_findings);
            review
        }
        None => markdown::parse_markdown_owned_limited(agent, text, max_findings),
    }
}

/// Cuts `review` to its first `max` findings when it holds more, with a warning on the review;
/// returns that warning. A JSON review is read whole by serde (the text is at most a run's
/// output) and cut here; a review that comes another way (a JSON report's reviews, a bundle) is
/// cut by the pipeline with this same function, so nothing downstream sees more than `max`.
pub fn cap_findings(review: &mut Review, max: usize) -> Option<String> {
    for finding in &mut review.findings {
        if let Some(message) = cap_locations(finding) {
            review.warnings.push(ParseWarning {
                line: None,
                message,
            });
        }
    }
    let count = review.findings.len();
    if count <= max {
        return None;
    }
    review.findings.truncate(max);
    review.findings.shrink_to_fit();
    let message = format!(
        "the review holds {count} findings: only its first {max} are kept; so many is a flood, not one reviewer's reading of a change, and the raw review keeps the rest"
    );
    review.warnings.push(ParseWarning {
        line: None,
        message: message.clone(),
    });
    Some(message)
}

/// Cuts `finding` to its first [`MAX_LOCATIONS`] places when it cites more; returns the
/// warning that says so.
pub(crate) fn cap_locations(finding: &mut crate::types::Finding) -> Option<String> {
    let count = finding.locations.len();
    if count <= MAX_LOCATIONS {
        return None;
    }
    finding.locations.truncate(MAX_LOCATIONS);
    finding.locations.shrink_to_fit();
    Some(format!(
        "finding {} cites {count} places: only its first {MAX_LOCATIONS} are kept (the raw review keeps the rest)",
        finding.id
    ))
}

/// A JSON review (`json_text`, found `shift` lines into `text`); an invalid one is a review
/// with the error as its warning and the text kept in `unparsed`.
fn review_of_json(agent: &str, text: &str, json_text: &str, shift: usize) -> Review {
    match json::parse_json_review(agent, json_text, "<review>").map_err(|e| shift_line(e, shift)) {
        Ok(mut r) => {
            if r.raw == json_text {
                r.raw = text.to_string();
            }
            r
        }
        Err(e) => {
            let (line, message) = match &e {
                ParseError::Invalid { line, message, .. } => (Some(*line), message.clone()),
                ParseError::Io { .. } => (None, e.to_string()),
            };
            Review {
                agent: agent.to_string(),
                unparsed: vec![text.to_string()],
                not_a_review: Some(format!(
                    "not a review: its JSON is not a review ({message})"
                )),
                warnings: vec![ParseWarning { line, message }],
                raw: text.to_string(),
                ..Review::default()
            }
        }
    }
}

/// The JSON of a review that is a JSON object, or only a ```` ```json ```` block, with the
/// number of lines before it.
fn json_part(text: &str) -> Option<(&str, usize)> {
    if json::looks_like_json(text) {
        return Some((text, 0));
    }
    let body = json::fenced_json(text)?;
    let offset = body.as_ptr() as usize - text.as_ptr() as usize;
    let lines_before = text
        .get(..offset)
        .map(|s| s.matches('\n').count())
        .unwrap_or(0);
    Some((body, lines_before))
}

/// Moves an error's line from the JSON block to the whole text.
fn shift_line(e: ParseError, shift: usize) -> ParseError {
    match e {
        ParseError::Invalid {
            path,
            line,
            message,
        } => ParseError::Invalid {
            path,
            line: line + shift,
            message,
        },
        other => other,
    }
}

/// The first `limit` bytes of the file at `path`, cut after its last whole line when the file
/// is longer, and the file's size when it was cut: a saved review is read no further than a
/// run would have kept of the agent's output, so a huge file cannot take the memory and time of
/// the whole pipeline.
fn read_at_most(path: &Path, limit: u64) -> std::io::Result<(Vec<u8>, Option<u64>)> {
    use std::io::Read as _;
    let file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    let mut bytes = Vec::with_capacity(size.min(limit) as usize);
    // One byte more than the limit tells a longer stream (a pipe has no size) from one that
    // ends there.
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 <= limit {
        return Ok((bytes, None));
    }
    bytes.truncate(limit as usize);
    if let Some(last) = bytes.iter().rposition(|&b| b == b'\n') {
        bytes.truncate(last + 1);
    }
    Ok((bytes, Some(size)))
}

/// The number of the last line of `text`.
fn bytes_lines(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').count().max(1)
}

/// Reads and parses a raw review file. A file that is not UTF-8 is read lossily with a warning;
/// a JSON file with a syntax or shape error is an error naming the file and line. A file longer
/// than a run keeps of an agent's output is read that far, with a warning.
pub fn read_review_file(agent: &str, path: &Path) -> Result<Review, ParseError> {
    let (bytes, size) =
        read_at_most(path, crate::dispatch::DEFAULT_OUTPUT_LIMIT).map_err(|source| {
            ParseError::Io {
                path: path.display().to_string(),
                source,
            }
        })?;
    let (text, lossy_at) = match String::from_utf8(bytes) {
        Ok(t) => (t, None),
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let line = bytes[..valid].iter().filter(|b| **b == b'\n').count() + 1;
            (String::from_utf8_lossy(&bytes).into_owned(), Some(line))
        }
    };
    let mut review = if let Some((json_text, shift)) = json_part(&text) {
        let mut r = json::parse_json_review(agent, json_text, &path.display().to_string())
            .map_err(|e| shift_line(e, shift))
            .map_err(|e| match (e, size) {
                // Cut JSON is not JSON: say why it ends there.
                (
                    ParseError::Invalid {
                        path,
                        line,
                        message,
                    },
                    Some(_),
                ) => ParseError::Invalid {
                    path,
                    line,
                    message: format!(
                        "the file is longer than {} MB, as much as a run keeps of an agent's output, and was read that far, so its JSON ends early ({message})",
                        crate::dispatch::DEFAULT_OUTPUT_LIMIT / (1024 * 1024)
                    ),
                },
                (e, _) => e,
            })?;
        if r.raw == json_text {
            r.raw = text.clone();
        }
        cap_findings(&mut r, MAX_FINDINGS);
        r
    } else {
        markdown::parse_markdown_owned(agent, text)
    };
    if let Some(size) = size {
        review.warnings.insert(
            0,
            ParseWarning {
                line: Some(bytes_lines(&review.raw)),
                message: format!(
                    "{} is longer than {limit} MB{}: only its first {limit} MB were read (as much as a run keeps of an agent's output); the rest is not part of the review",
                    path.display(),
                    if size > 0 {
                        format!(" ({} MB)", size / (1024 * 1024))
                    } else {
                        String::new()
                    },
                    limit = crate::dispatch::DEFAULT_OUTPUT_LIMIT / (1024 * 1024)
                ),
            },
        );
    }
    if let Some(line) = lossy_at {
        review.warnings.insert(
            0,
            ParseWarning {
                line: Some(line),
                message: format!(
                    "{} is not valid UTF-8 from this line on; bad bytes were replaced with U+FFFD",
                    path.display()
                ),
            },
        );
    }
    Ok(review)
}
