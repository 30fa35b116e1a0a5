//! Reports in the store: read back, listed, found by id. The JSON report is the record; a
//! Markdown report with no JSON beside it (the reference system's, or one copied in) is read
//! with the Markdown reader, so it is listed too.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;

use super::Store;
use crate::types::{Report, Severity, Verdict};

/// The reviewer scorecards page beside the index (`stats.html`), written by `deep-review
/// stats` and after each run; the index links to it when it is there.
pub const STATS_PAGE: &str = "stats";

/// One report as `deep-review list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportEntry {
    pub id: String,
    /// The report's metadata table, when it could be read.
    #[serde(skip)]
    pub meta: Option<crate::types::ReportMeta>,
    /// The change: `PR #236`, the branch, or the label in the id.
    pub target: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Shown findings by severity; `None` when the report could not be read for them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<chrono::NaiveDateTime>,
    /// The files of the report in the store.
    pub files: Vec<PathBuf>,
}

/// What `list` needs of a JSON report: its metadata, verdict and shown findings by severity.
/// The rest (bodies, code, the appendix with every raw review) is skipped while parsing, so
/// listing a store of big reports holds none of them.
struct ReportHead {
    meta: crate::types::ReportMeta,
    verdict: Verdict,
    counts: Counts,
}

fn read_report_head(path: &Path) -> anyhow::Result<ReportHead> {
    #[derive(serde::Deserialize)]
    struct Head {
        meta: crate::types::ReportMeta,
        verdict: Verdict,
        #[serde(default)]
        findings: Vec<FindingHead>,
    }
    #[derive(serde::Deserialize)]
    struct FindingHead {
        severity: Severity,
        #[serde(default)]
        tier: crate::types::Tier,
    }
    let text = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let head: Head = serde_json::from_slice(&text)
        .with_context(|| format!("{} is not a Deep Review JSON report", path.display()))?;
    let mut counts = Counts::default();
    for f in head
        .findings
        .iter()
        .filter(|f| f.tier == crate::types::Tier::Shown)
    {
        match f.severity {
            Severity::Critical => counts.critical += 1,
            Severity::Important => counts.important += 1,
            Severity::Suggestion => counts.suggestion += 1,
        }
    }
    Ok(ReportHead {
        meta: head.meta,
        verdict: head.verdict,
        counts,
    })
}

/// Shown findings by severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub critical: usize,
    pub important: usize,
    pub suggestion: usize,
}

impl Counts {
    pub fn of(report: &Report) -> Counts {
        let mut c = Counts::default();
        for f in report.findings.iter().filter(|f| f.is_shown()) {
            match f.severity {
                Severity::Critical => c.critical += 1,
                Severity::Important => c.important += 1,
                Severity::Suggestion => c.suggestion += 1,
            }
        }
        c
    }
}

/// Orders run ids by time: the id starts with `YYYYMMDD-HHMMSS`, then a label, then maybe a
/// `-2` for a second run in the same second.
pub fn id_order(a: &str, b: &str) -> Ordering {
    let stamp = |id: &str| id.get(..15).unwrap_or(id).to_string();
    stamp(a).cmp(&stamp(b)).then_with(|| a.cmp(b))
}

impl Store {
    /// Every report in the store, newest first.
    pub fn list(&self) -> anyhow::Result<Vec<ReportEntry>> {
        let entries = match std::fs::read_dir(self.dir()) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(e).with_context(|| format!("cannot read {}", self.dir().display()));
            }
        };
        let mut ids: Vec<String> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_str()?.to_string();
                // `<id>.codequality.json` is a view of report `<id>`, not a report.
                if name.ends_with(&format!(".{}", crate::report::CODEQUALITY_EXTENSION)) {
                    return None;
                }
                let id = name
                    .strip_suffix(".json")
                    .or_else(|| name.strip_suffix(".md"))?;
                Some(id.to_string())
            })
            .collect();
        ids.sort_by(|a, b| id_order(b, a));
        ids.dedup();
        Ok(ids.iter().map(|id| self.entry(id)).collect())
    }

    /// The id `latest` stands for, or `id` itself when a report of that id exists.
    pub fn resolve_report_id(&self, id: &str) -> anyhow::Result<String> {
        if id == "latest" {
            return self
                .list()?
                .into_iter()
                .next()
                .map(|e| e.id)
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "no report in {}: run `deep-review run` first",
                        self.dir().display()
                    )
                });
        }
        let id = id.trim_end_matches(".md").trim_end_matches(".json");
        if self.report_path(id, "json").is_file() || self.report_path(id, "md").is_file() {
            Ok(id.to_string())
        } else {
            anyhow::bail!(
                "no report `{id}` in {}: `deep-review list` shows the reports there",
                self.dir().display()
            )
        }
    }

    /// Reads report `id` from its JSON record.
    pub fn read_report(&self, id: &str) -> anyhow::Result<Report> {
        let json = self.report_path(id, "json");
        if !json.is_file() {
            anyhow::bail!(
                "report `{id}` has no JSON record ({}); `deep-review consolidate --from-report {}` \
                 reads its Markdown",
                json.display(),
                self.report_path(id, "md").display()
            );
        }
        read_json_report(&json)
    }

    fn entry(&self, id: &str) -> ReportEntry {
        let files: Vec<PathBuf> = [
            "md",
            "json",
            "html",
            "sarif",
            crate::report::CODEQUALITY_EXTENSION,
        ]
        .iter()
        .map(|ext| self.report_path(id, ext))
        .filter(|p| p.is_file())
        .collect();
        let json = self.report_path(id, "json");
        let from_json = json
            .is_file()
            .then(|| read_report_head(&json).ok())
            .flatten();
        let (meta, verdict, counts) = match from_json {
            Some(head) => (Some(head.meta), Some(head.verdict), Some(head.counts)),
            None => {
                match crate::report::markdown_read::read_round_report(&self.report_path(id, "md")) {
                    Ok(src) => (Some(src.meta), src.verdict, None),
                    Err(_) => (None, None, None),
                }
            }
        };
        let target = meta
            .as_ref()
            .and_then(|m| {
                m.pr.as_ref()
                    .map(|pr| pr.round_label())
                    .or_else(|| m.branch.clone())
            })
            .unwrap_or_else(|| id.get(16..).unwrap_or(id).to_string());
        ReportEntry {
            id: id.to_string(),
            target,
            round: meta.as_ref().and_then(|m| m.round),
            verdict,
            counts,
            date: meta.as_ref().and_then(|m| m.date),
            files,
            meta,
        }
    }
}

impl Store {
    /// Writes `<store>/index.html`: every report that has an HTML page, newest first, grouped
    /// by target.
    pub fn write_index(&self) -> anyhow::Result<std::path::PathBuf> {
        let entries: Vec<crate::report::html::IndexEntry> = self
            .list()?
            .into_iter()
            .filter(|e| self.report_path(&e.id, "html").is_file())
            .filter_map(|e| {
                let (meta, verdict, counts) = (e.meta?, e.verdict?, e.counts?);
                Some(crate::report::html::IndexEntry::new(
                    &meta,
                    verdict,
                    crate::types::SeverityCounts {
                        critical: counts.critical,
                        important: counts.important,
                        suggestion: counts.suggestion,
                    },
                    format!("{}.html", e.id),
                ))
            })
            .collect();
        let stats = self
            .report_path(STATS_PAGE, "html")
            .is_file()
            .then(|| format!("{STATS_PAGE}.html"));
        self.write_report(
            "index",
            "html",
            &crate::report::html::render_index_linking(&entries, stats.as_deref()),
        )
    }
}

/// A JSON report, with an error naming the file when it is not one this version can read.
pub fn read_json_report(path: &Path) -> anyhow::Result<Report> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a Deep Review JSON report this version can read",
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sort_by_time_then_by_run_number() {
        let mut ids = vec![
            "20260324-131047-feat-2",
            "20260101-000000-zzz",
            "20260324-131047-feat",
            "20261201-090000-a",
        ];
        ids.sort_by(|a, b| id_order(a, b));
        assert_eq!(
            ids,
            [
                "20260101-000000-zzz",
                "20260324-131047-feat",
                "20260324-131047-feat-2",
                "20261201-090000-a"
            ]
        );
    }
}
