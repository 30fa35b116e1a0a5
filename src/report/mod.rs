//! Report stage: [`Report`](crate::types::Report) → Markdown (the reference layout), JSON, a
//! self-contained HTML page and SARIF 2.1.0 for code scanning. The Markdown reader
//! ([`markdown_read`]) sits beside the Markdown writer: a report the tool wrote reads back to its
//! raw reviews, rounds and Resolution, and an old report of the reference system reads the same.

pub mod appendix_marks;
pub mod codequality;
pub mod html;
pub mod json;
pub mod links;
pub mod markdown;
pub mod markdown_read;
pub mod sarif;

use clap::ValueEnum;

/// The store's name for a Code Quality report: `<id>.codequality.json`.
pub const CODEQUALITY_EXTENSION: &str = "codequality.json";

/// The formats a report can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Markdown in the reference Deep Review layout.
    Md,
    /// JSON of the report schema (`deep-review schema report`).
    Json,
    /// One self-contained HTML page: no network, readable without JavaScript.
    Html,
    /// SARIF 2.1.0, for code scanning (GitHub, GitLab, IDEs).
    Sarif,
    /// GitLab's Code Quality report (CodeClimate issues), for the merge request's widget.
    Codequality,
}

impl Format {
    pub fn extension(self) -> &'static str {
        match self {
            Format::Md => "md",
            Format::Json => "json",
            Format::Html => "html",
            Format::Sarif => "sarif",
            Format::Codequality => CODEQUALITY_EXTENSION,
        }
    }
}

/// Writes the report in the given format to `out`: JSON as it is serialized ([`json::write`]),
/// the other formats rendered whole first.
pub fn write(
    report: &crate::types::Report,
    format: Format,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    match format {
        Format::Json => json::write(report, out),
        _ => out.write_all(render(report, format).as_bytes()),
    }
}

/// Renders the report in the given format.
pub fn render(report: &crate::types::Report, format: Format) -> String {
    match format {
        Format::Md => markdown::render(report),
        Format::Json => json::render(report),
        Format::Html => html::render(report),
        Format::Sarif => sarif::render(report),
        Format::Codequality => codequality::render(report),
    }
}
