//! Recording the author's decisions on a stored report (`deep-review resolve`): read the report
//! (its JSON record, else its Markdown), record the decisions ([`rounds::resolve`]), and write
//! the `## Resolution` section into the report's Markdown and JSON (and its HTML page).
//!
//! The Markdown is edited in place, not rendered again: a report the user annotated by hand, or
//! one of the reference system, keeps everything but its Resolution section.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::git::{git_text, resolve_commit};
use crate::report::markdown_read::read_round_report;
use crate::report::{self, Format};
use crate::rounds::history::{self, ReadRound};
use crate::rounds::resolve::{self, Decidable, Decision, Proposal};
use crate::store::Store;
use crate::types::{Action, CommitInfo, Report, Resolution};

/// What to record.
#[derive(Debug, Clone, Default)]
pub struct ResolveRequest {
    /// The report's id, or `latest`.
    pub id: String,
    pub decisions: Vec<Decision>,
    /// Commits that carry the changes, as the user names them (`abc1234`, `HEAD`).
    pub commits: Vec<String>,
    /// `--auto`: the newer head to compare the findings' code with.
    pub auto_head: Option<String>,
    /// The repository the commits are in (for `--commit` and `--auto`).
    pub repo: Option<PathBuf>,
    /// Show what would be recorded; write nothing.
    pub dry_run: bool,
}

/// What was recorded.
#[derive(Debug, Clone)]
pub struct ResolveOutcome {
    pub id: String,
    /// The report's Resolution as it now stands.
    pub resolution: Resolution,
    /// `--auto`'s Fixed proposals, recorded with the rest.
    pub proposed: Vec<Proposal>,
    /// Findings `--auto` left for the author to decide.
    pub open: Vec<Proposal>,
    /// One sentence about `--auto` when it compared nothing (same head).
    pub note: Option<String>,
    /// The files written (none for a dry run, or when there was nothing to record).
    pub written: Vec<PathBuf>,
}

/// Records `request`'s decisions in report `request.id` of `store`.
pub fn resolve(store: &Store, request: &ResolveRequest) -> anyhow::Result<ResolveOutcome> {
    let id = store.resolve_report_id(&request.id)?;
    let json_path = store.report_path(&id, "json");
    let md_path = store.report_path(&id, "md");
    let (report, read, decidable, existing) = if json_path.is_file() {
        let report = store.read_report(&id)?;
        let read = history::from_report(&report);
        let decidable = decidable_of(&read);
        let existing = report.resolution.clone();
        (Some(report), read, decidable, existing)
    } else {
        let src = read_round_report(&md_path)
            .with_context(|| format!("cannot read the report {}", md_path.display()))?;
        let read = history::from_source(&src);
        (None, read.clone(), decidable_of(&read), src.resolution)
    };

    let mut decisions = request.decisions.clone();
    let mut commits = Vec::new();
    for rev in &request.commits {
        commits.push(commit_info(repo_of(request)?, rev)?);
    }
    let mut proposed = Vec::new();
    let mut open = Vec::new();
    let mut note = None;
    if let Some(now_rev) = &request.auto_head {
        let repo = repo_of(request)?;
        let Some(then) = read.round.head.clone() else {
            bail!(
                "report {id} does not say which commit it reviewed, so --auto has nothing to \
                 compare with: decide with --fixed, --skipped and the others"
            );
        };
        let then = resolve_commit(repo, &then).with_context(|| {
            format!(
                "the commit report {id} reviewed is not in {}",
                repo.display()
            )
        })?;
        let now = resolve_commit(repo, now_rev)?;
        if now == then {
            note = Some(format!(
                "the report reviewed {} already: there is no newer head to compare with (commit \
                 your fixes, or give --head REV)",
                short(&now)
            ));
        } else {
            let mut decided: HashSet<String> = decisions.iter().map(|d| d.id.clone()).collect();
            if let Some(res) = &existing {
                decided.extend(res.items.iter().map(|i| i.id.to_ascii_uppercase()));
            }
            let (fixed, rest) = resolve::auto(repo, &then, &now, &read.round.findings, &decided)?;
            for p in &fixed {
                decisions.push(Decision {
                    id: p.id.clone(),
                    action: Action::Fixed,
                    reason: format!("--auto: {}", p.why),
                });
            }
            if request.commits.is_empty() && !fixed.is_empty() {
                commits.extend(commits_between(repo, &then, &now)?);
            }
            proposed = fixed;
            open = rest;
        }
    }

    if decisions.is_empty() && commits.is_empty() {
        if request.auto_head.is_some() {
            return Ok(ResolveOutcome {
                id,
                resolution: existing.unwrap_or_default(),
                proposed,
                open,
                note,
                written: Vec::new(),
            });
        }
        bail!(
            "nothing to record: give decisions (--fixed I1,S2, --skipped S3=\"reason\", \
             --test-written, --documented, --commented) or --auto"
        );
    }
    let today = chrono::Local::now().date_naive();
    let resolution = resolve::record(existing.as_ref(), &decidable, &decisions, &commits, today)?;
    let mut written = Vec::new();
    if !request.dry_run {
        written = write(store, &id, report, &resolution)?;
    }
    Ok(ResolveOutcome {
        id,
        resolution,
        proposed,
        open,
        note,
        written,
    })
}

/// The findings a decision can name: the report's findings, then its testing gaps (`T1`...).
fn decidable_of(read: &ReadRound) -> Vec<Decidable> {
    read.round
        .findings
        .iter()
        .filter(|f| !f.carried && !f.id.is_empty())
        .map(|f| Decidable {
            id: f.id.clone(),
            title: f.title.clone(),
        })
        .collect()
}

/// Writes the Resolution into the report's JSON and Markdown, and renders its HTML page again.
fn write(
    store: &Store,
    id: &str,
    report: Option<Report>,
    resolution: &Resolution,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let section = report::markdown::resolution(resolution);
    let md_path = store.report_path(id, "md");
    let mut report = report;
    if let Some(r) = report.as_mut() {
        r.resolution = Some(resolution.clone());
        written.push(store.write_report(id, "json", &report::render(r, Format::Json))?);
    }
    let markdown = match std::fs::read_to_string(&md_path) {
        Ok(text) => resolve::splice_markdown(&text, &section),
        Err(_) => match &report {
            Some(r) => report::render(r, Format::Md),
            None => bail!("cannot read {}", md_path.display()),
        },
    };
    written.push(store.write_report(id, "md", &markdown)?);
    if let Some(r) = &report
        && store.report_path(id, "html").is_file()
    {
        written.push(store.write_report(id, "html", &report::render(r, Format::Html))?);
    }
    Ok(written)
}

fn repo_of(request: &ResolveRequest) -> anyhow::Result<&Path> {
    request.repo.as_deref().ok_or_else(|| {
        anyhow::anyhow!(
            "--commit and --auto read commits: run this inside the repository that was reviewed"
        )
    })
}

/// `abc1234` and its subject, as the Commit row shows it.
fn commit_info(repo: &Path, rev: &str) -> anyhow::Result<CommitInfo> {
    let sha = resolve_commit(repo, rev).context("--commit names no commit")?;
    let subject = git_text(repo, &["log", "-1", "--format=%s", &sha, "--"]).unwrap_or_default();
    Ok(CommitInfo {
        sha: short(&sha),
        subject,
    })
}

/// The commits of `then..now`, oldest first (at most 20): what `--auto` records as the commits
/// that carry the fixes when none are named.
fn commits_between(repo: &Path, then: &str, now: &str) -> anyhow::Result<Vec<CommitInfo>> {
    let range = format!("{then}..{now}");
    let out = git_text(
        repo,
        &[
            "log",
            "--reverse",
            "-n",
            "20",
            "--format=%h%x09%s",
            &range,
            "--",
        ],
    )?;
    Ok(out
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(sha, subject)| CommitInfo {
            sha: sha.to_string(),
            subject: subject.to_string(),
        })
        .collect())
}

fn short(sha: &str) -> String {
    sha.chars().take(7).collect()
}
