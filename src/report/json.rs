//! The report as JSON: the serde form of [`Report`](crate::types::Report), pretty-printed.

use crate::types::Report;

pub fn render(report: &Report) -> String {
    // Serializing plain data with string keys cannot fail.
    let mut text = serde_json::to_string_pretty(report)
        .unwrap_or_else(|e| format!("{{\"error\": \"the report could not be serialized: {e}\"}}"));
    text.push('\n');
    text
}

/// [`render`] written to `out` as it is serialized, never held whole (a report of 10,000
/// findings is 8 MB of JSON): the same bytes.
pub fn write(report: &Report, out: &mut impl std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    out.write_all(b"\n")
}
