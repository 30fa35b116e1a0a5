//! What the commands share at their end: where a report goes (`--out FILE`, `-` for stdout),
//! the CI gate (`--fail-on`), and the few lines a person reads in the terminal after a run.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::ValueEnum;

use crate::text::{plural, printable_line};
use crate::types::{Report, RunStatus, Severity, Verdict};

/// Exit codes, as `--help` and docs/src/local/run.md#exit-codes document them.
pub const EXIT_GATE: u8 = 1;
pub const EXIT_NO_REVIEW: u8 = 3;
pub const EXIT_INTERRUPTED: u8 = 130;
pub const EXIT_DEADLINE: u8 = 124;

/// `--fail-on LEVEL`: the least severity of a shown finding that fails the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Critical,
    Important,
    Suggestion,
}

impl FailOn {
    fn severity(self) -> Severity {
        match self {
            FailOn::Critical => Severity::Critical,
            FailOn::Important => Severity::Important,
            FailOn::Suggestion => Severity::Suggestion,
        }
    }
}

/// The exit code a finished report gives: 3 for no review, 1 when the gate fails, else 0.
pub fn exit_code(report: &Report, fail_on: Option<FailOn>) -> ExitCode {
    if report.verdict == Verdict::NoReview {
        return ExitCode::from(EXIT_NO_REVIEW);
    }
    match fail_on {
        Some(level) if report.fails_at(level.severity()) => {
            crate::say!(
                "deep-review: failing (--fail-on {}): {} or more severe finding stands",
                level.severity(),
                crate::text::with_article(&level.severity().to_string())
            );
            ExitCode::from(EXIT_GATE)
        }
        _ => ExitCode::SUCCESS,
    }
}

/// Refuses an `--out` file whose folder does not exist, so the mistake shows before the work
/// (a run's agents) rather than after it.
pub fn check_out_path(out: Option<&Path>) -> anyhow::Result<()> {
    let Some(path) = out.filter(|p| *p != Path::new("-")) else {
        return Ok(());
    };
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        anyhow::bail!(
            "--out {}: the folder {} does not exist: create it, or give a file in a folder that \
             exists (nothing was run)",
            path.display(),
            folder.display()
        );
    }
    Ok(())
}

/// Writes `text` to `out`: a file, or standard output for `-` or none; secrets redacted (a
/// saved review given with `--raw` may hold one).
pub fn write_to(out: Option<&Path>, text: &str) -> anyhow::Result<()> {
    let text = crate::redact::redact(text);
    let text = text.as_ref();
    match out {
        Some(path) if path != Path::new("-") => {
            std::fs::write(path, text)
                .with_context(|| format!("cannot write the report to {}", path.display()))?;
            crate::say!("deep-review: wrote {}", path.display());
            Ok(())
        }
        _ => super::print_out(text),
    }
}

/// Writes `report` in `format` to `out` like [`write_to`], a file written as it is rendered
/// ([`report::write`](crate::report::write)) and redacted line by line on its way
/// ([`RedactedLines`](crate::redact::RedactedLines)): a large JSON report is never
/// held whole.
pub fn write_report(
    out: Option<&Path>,
    report: &Report,
    format: crate::report::Format,
) -> anyhow::Result<()> {
    let Some(path) = out.filter(|p| *p != Path::new("-")) else {
        return write_to(out, &crate::report::render(report, format));
    };
    let write = || -> std::io::Result<()> {
        let mut file = crate::redact::RedactedLines::new(std::fs::File::create(path)?);
        crate::report::write(report, format, &mut file)?;
        file.finish().map(drop)
    };
    write().with_context(|| format!("cannot write the report to {}", path.display()))?;
    crate::say!("deep-review: wrote {}", path.display());
    Ok(())
}

/// The end of a run for a person: the verdict with counts, the top findings with their
/// locations, the agents that failed and why, and where the report is.
pub fn run_summary(report: &Report, report_path: Option<&Path>) -> String {
    const TOP: usize = 5;
    let shown: Vec<_> = report.findings.iter().filter(|f| f.is_shown()).collect();
    let count = |s: Severity| shown.iter().filter(|f| f.severity == s).count();
    let mut out = format!(
        "\nVerdict: {} — {} critical, {} important, {}\n",
        report.verdict,
        count(Severity::Critical),
        count(Severity::Important),
        plural(count(Severity::Suggestion), "suggestion", "suggestions")
    );
    for f in shown.iter().take(TOP) {
        let at = f
            .locations
            .first()
            .map(|l| match (l.start, l.end) {
                (Some(s), Some(e)) if e != s => format!(" — {}:{s}-{e}", l.path),
                (Some(s), _) => format!(" — {}:{s}", l.path),
                _ => format!(" — {}", l.path),
            })
            .unwrap_or_default();
        let who: Vec<&str> = f.agents.iter().map(|a| report.display_of(a)).collect();
        out.push_str(&printable_line(&format!(
            "  {} {}{at} [{}]",
            f.id,
            f.title,
            who.join(", ")
        )));
        out.push('\n');
    }
    if shown.len() > TOP {
        out.push_str(&format!("  … and {} more\n", shown.len() - TOP));
    }
    for a in report
        .agents
        .iter()
        .filter(|a| a.status.is_some_and(|s| s != RunStatus::Ok))
    {
        out.push_str(&printable_line(&format!(
            "Failed: {} — {}",
            a.display,
            a.error.as_deref().unwrap_or("no reason was reported")
        )));
        out.push('\n');
    }
    if let Some(path) = report_path {
        out.push_str(&format!("Report: {}\n", path.display()));
    }
    out
}
