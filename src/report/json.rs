//! The report as JSON: the serde form of [`Report`](crate::types::Report), pretty-printed.

use crate::types::Report;

pub fn render(report: &Report) -> String {
    // Serializing plain data with string keys cannot fail.
    let mut text = serde_json::to_string_pretty(report)
        .unwrap_or_else(|e| format!("{{\"error\": \"the report could not be serialized: {e}\"}}"));
    text.push('\n');
    text
}
