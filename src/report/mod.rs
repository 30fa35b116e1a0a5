//! Report stage: [`Report`](crate::types::Report) → Markdown (the reference layout) and JSON.

pub mod json;
pub mod markdown;

use clap::ValueEnum;

/// The formats a report can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Markdown in the reference Deep Review layout.
    Md,
    /// JSON of the report schema (`deep-review schema report`).
    Json,
}

impl Format {
    pub fn extension(self) -> &'static str {
        match self {
            Format::Md => "md",
            Format::Json => "json",
        }
    }
}

/// Renders the report in the given format.
pub fn render(report: &crate::types::Report, format: Format) -> String {
    match format {
        Format::Md => markdown::render(report),
        Format::Json => json::render(report),
    }
}
