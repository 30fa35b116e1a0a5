//! Reads a Deep Review report back (stand-in until the parser branch lands).

use std::path::Path;

use crate::model::{ReportMeta, Review, Verdict};

use super::ParseError;

/// What a report holds that consolidation can start from again.
#[derive(Debug, Clone, Default)]
pub struct ReportSource {
    pub meta: ReportMeta,
    pub verdict: Option<Verdict>,
    pub verdict_rationale: String,
    pub reviews: Vec<Review>,
    pub warnings: Vec<String>,
}

pub fn read_report(path: &Path) -> Result<ReportSource, ParseError> {
    let text = std::fs::read_to_string(path).map_err(|source| ParseError::Io {
        path: path.display().to_string(),
        source,
    })?;
    parse_report(&text, &path.display().to_string())
}

pub fn parse_report(_text: &str, path_for_errors: &str) -> Result<ReportSource, ParseError> {
    Err(ParseError::Invalid {
        path: path_for_errors.to_string(),
        line: 1,
        message: "reading reports is not built yet".into(),
    })
}
