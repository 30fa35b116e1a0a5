//! `deep-review consolidate`: consolidate saved raw reviews, or the raw reviews in an old
//! report's appendix, into one report. Offline: no agent runs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use crate::git::{git_probe, git_text, resolve_commit};
use crate::parse::read_review_file;
use crate::pipeline;
use crate::report::Format;
use crate::report::markdown_read;
use crate::rounds::{self, History, TargetKey, history};
use crate::text::printable_line;
use crate::types::{Finding, ReportMeta, Resolution, Review, Reviewer};
use crate::verify::VerifyContext;

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("input").required(true).multiple(true).args(["from_report", "raw", "bundle"])))]
pub struct ConsolidateArgs {
    /// A run of the store, by id (as `deep-review list` shows it, or `latest`), or a run
    /// bundle's directory: consolidate that run again from what its agents saved, with no agent
    /// running, verified again when its repository is here.
    #[arg(long, value_name = "ID|DIR", conflicts_with_all = ["from_report", "raw", "repo", "prior"])]
    pub bundle: Option<PathBuf>,

    /// With `--bundle ID`: the store folder that holds the run (default: `deep-review/` in the
    /// repository's git directory).
    #[arg(long, value_name = "DIR", requires = "bundle")]
    pub store: Option<PathBuf>,

    /// A Deep Review report whose "Appendix: Original Reviews" holds the raw reviews to use.
    #[arg(long, value_name = "FILE")]
    pub from_report: Option<PathBuf>,

    /// A raw review of one agent, Markdown or JSON: `claude=review.md`. Repeat for each agent.
    /// A file is read as far as a run keeps of an agent's output (20 MB) and for its first
    /// 5,000 findings; either cut is named in a warning.
    #[arg(long, value_name = "NAME=FILE", value_parser = parse_pair)]
    pub raw: Vec<(String, String)>,

    /// An earlier round of the same change: a report in Markdown or JSON, this tool's or the
    /// reference system's. Repeat for each earlier round. Its findings are matched to this
    /// round's: what its Resolution declined is set aside, what it fixed and is back is flagged.
    #[arg(long, value_name = "FILE")]
    pub prior: Vec<PathBuf>,

    /// How the report names an agent: `claude="Claude Opus 4.6"`. Repeatable.
    #[arg(long, value_name = "NAME=DISPLAY", value_parser = parse_reviewer)]
    pub reviewer: Vec<(String, String)>,

    /// Verify every finding against this git repository (path, lines, quoted code, symbols).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,

    /// The reviewed commit to verify against (with --repo).
    #[arg(long, value_name = "REV", requires = "repo", default_value = "HEAD")]
    pub head: String,

    /// The base of the change (with --repo): its merge-base with --head separates regressions
    /// from pre-existing code, and the changed files measure each agent's coverage.
    #[arg(long, value_name = "REV", requires = "repo")]
    pub base: Option<String>,

    /// Output format.
    #[arg(long, value_enum, default_value = "md")]
    pub format: Format,

    /// Write the report to this file instead of standard output (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Exit 1 when a shown finding at this level or above stands (a CI gate).
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub fail_on: Option<super::output::FailOn>,
}

/// What to verify against: `repo` at `head`, with the merge-base of `base` and `head` as the
/// base when a base is given.
fn verify_context(repo: &Path, head: &str, base: Option<&str>) -> anyhow::Result<VerifyContext> {
    if let Some(refusal) = crate::target::environment::ownership_refusal(repo) {
        bail!("--repo: {refusal}");
    }
    if !repo.join(".git").exists() && git_probe(repo, &["rev-parse", "--git-dir"]).is_none() {
        bail!(
            "--repo {} is not a git repository: give the checkout the reviews were written for",
            repo.display()
        );
    }
    let head_sha = resolve_commit(repo, head).context("--head names no commit")?;
    let base_sha = match base {
        Some(base) => Some({
            let base_sha = resolve_commit(repo, base).context("--base names no commit")?;
            git_text(repo, &["merge-base", &base_sha, &head_sha]).with_context(|| {
                format!(
                    "--base {base} has no merge-base with {head} in {}",
                    repo.display()
                )
            })?
        }),
        None => None,
    };
    Ok(VerifyContext {
        repo: repo.to_path_buf(),
        head: head_sha,
        base: base_sha,
        checkout: None,
    })
}

/// Splits `name=value`; the name is lower-cased (agent names are).
fn parse_pair(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() && !value.trim().is_empty() => Ok((
            name.trim().to_ascii_lowercase(),
            value.trim().trim_matches('"').to_string(),
        )),
        _ => Err(format!(
            "expected NAME=VALUE (e.g. claude=review.md), got {s:?}"
        )),
    }
}

/// `--reviewer NAME=DISPLAY`: the display name on one line of printable characters.
fn parse_reviewer(s: &str) -> Result<(String, String), String> {
    let (name, display) = parse_pair(s)?;
    match crate::text::display_name_problem(&display) {
        Some(problem) => Err(problem),
        None => Ok((name, display)),
    }
}

/// How many parse warnings of one review the terminal shows: a flood of repeated ids would
/// otherwise print thousands of lines; the report keeps them all.
const WARNINGS_SHOWN: usize = 20;

pub fn execute(args: ConsolidateArgs) -> anyhow::Result<ExitCode> {
    if let Some(bundle) = &args.bundle {
        let analysis = pipeline::from_bundle(&bundle_dir(bundle, args.store.as_deref())?)?;
        return output(&args, analysis);
    }
    let mut input = match &args.from_report {
        Some(path) => from_report(path)?,
        None => Input::default(),
    };
    check_raw_names(&args, &input.reviews)?;
    input.reviews.extend(read_raw_reviews(&args.raw)?);
    name_reviewers(&args.reviewer, &mut input.reviews, &mut input.meta)?;
    say_review_warnings(&input.reviews);
    fill_id_and_date(&mut input.meta);

    let verify = match &args.repo {
        Some(repo) => Some(verify_context(repo, &args.head, args.base.as_deref())?),
        None => None,
    };
    let history = prior_rounds(&args.prior, &input.meta)?;
    let mut analysis = pipeline::analyze_reviews(input.reviews, verify, input.meta, history);
    // The author's Resolution of the report stays with it, following its findings by title.
    if let Some(res) = input.resolution {
        analysis.report.resolution = Some(rounds::resolve::carry_over(
            &res,
            &input.own_findings,
            &analysis.report.findings,
        ));
    }
    output(&args, analysis)
}

/// What consolidation starts from: an old report's metadata, reviews, Resolution and own
/// findings (all empty without `--from-report`), before the `--raw` reviews join.
#[derive(Default)]
struct Input {
    meta: ReportMeta,
    reviews: Vec<Review>,
    resolution: Option<Resolution>,
    own_findings: Vec<Finding>,
}

/// `--from-report FILE`: reads the report, printing what could not be read in it.
fn from_report(path: &Path) -> anyhow::Result<Input> {
    let source = markdown_read::read_report(path)
        .with_context(|| format!("cannot consolidate from the report {}", path.display()))?;
    for w in &source.warnings {
        crate::say!(
            "deep-review: warning: {}: {}",
            path.display(),
            printable_line(w)
        );
    }
    Ok(Input {
        meta: source.meta,
        reviews: source.reviews,
        resolution: source.resolution,
        own_findings: source.findings,
    })
}

/// Each agent has one review: a `--raw` name given twice, or one the report already holds, is
/// refused before any file is read.
fn check_raw_names(args: &ConsolidateArgs, reviews: &[Review]) -> anyhow::Result<()> {
    for (i, (name, file)) in args.raw.iter().enumerate() {
        if reviews.iter().any(|r| &r.agent == name) || args.raw[..i].iter().any(|(n, _)| n == name)
        {
            let clash = match &args.from_report {
                Some(report) if args.raw.iter().filter(|(n, _)| n == name).count() == 1 => {
                    format!(
                        "the report {} already holds a review by `{name}`",
                        report.display()
                    )
                }
                _ => format!("--raw {name}=... is given twice"),
            };
            bail!(
                "{clash}: each agent has one review; give this one another name (e.g. {name}2={file})"
            );
        }
    }
    Ok(())
}

/// Reads the `--raw` reviews in the order given. Each review is read and parsed on its own
/// thread: large reviews take a while, and they are independent. The first failure, in the
/// order given, is the one reported.
fn read_raw_reviews(raw: &[(String, String)]) -> anyhow::Result<Vec<Review>> {
    use rayon::prelude::*;
    let read: Vec<anyhow::Result<Review>> = raw
        .par_iter()
        .map(|(name, file)| {
            read_review_file(name, Path::new(file))
                .with_context(|| format!("cannot read the raw review of `{name}`"))
        })
        .collect();
    read.into_iter().collect()
}

/// `--reviewer NAME=DISPLAY`: gives the review of NAME its display name, and the report's
/// Reviewers row too (adding NAME when the row lacks it).
fn name_reviewers(
    names: &[(String, String)],
    reviews: &mut [Review],
    meta: &mut ReportMeta,
) -> anyhow::Result<()> {
    for (name, display) in names {
        let Some(review) = reviews.iter_mut().find(|r| &r.agent == name) else {
            bail!(
                "--reviewer {name}=\"{display}\" names no agent of the input; agents are: {}",
                reviews
                    .iter()
                    .map(|r| r.agent.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        };
        review.display_name = Some(display.clone());
        match meta.reviewers.iter_mut().find(|r| &r.name == name) {
            Some(r) => r.display = display.clone(),
            None => meta.reviewers.push(Reviewer {
                name: name.clone(),
                display: display.clone(),
                model: None,
                effort: None,
            }),
        }
    }
    Ok(())
}

/// Prints each review's parse warnings, at most [`WARNINGS_SHOWN`] of each. A text that is
/// not a review is named once, with the reason, when the report is made.
fn say_review_warnings(reviews: &[Review]) {
    for review in reviews.iter().filter(|r| r.not_a_review.is_none()) {
        for w in review.warnings.iter().take(WARNINGS_SHOWN) {
            let at = w.line.map(|l| format!(" line {l}:")).unwrap_or_default();
            crate::say!(
                "deep-review: warning: {} review:{at} {}",
                printable_line(&review.agent),
                printable_line(&w.message)
            );
        }
        if let Some(more) = review.warnings.len().checked_sub(WARNINGS_SHOWN)
            && more > 0
        {
            crate::say!(
                "deep-review: warning: {} review: {more} more warnings, not shown here (the report's `warnings` list them all)",
                printable_line(&review.agent)
            );
        }
    }
}

/// A report with no id or date of its own gets now's.
fn fill_id_and_date(meta: &mut ReportMeta) {
    if meta.id.is_empty() {
        meta.id = format!(
            "{}-consolidated",
            chrono::Local::now().format("%Y%m%d-%H%M%S")
        );
    }
    if meta.date.is_none() {
        meta.date = Some(chrono::Local::now().naive_local());
    }
}

/// `--bundle ID|DIR`: a directory as given, else run `ID` of the store. A directory wins over
/// an id of the same name only when `--store` is not given.
fn bundle_dir(bundle: &Path, store: Option<&Path>) -> anyhow::Result<PathBuf> {
    let id = bundle.to_str().filter(|s| !s.contains('/'));
    match id {
        Some(id) if store.is_some() || !bundle.is_dir() => {
            let store = super::list::store_at(store)?;
            Ok(store.open_run(id)?.dir)
        }
        _ => Ok(bundle.to_path_buf()),
    }
}

/// The earlier rounds given with `--prior`, in the order of their round numbers (then dates).
fn prior_rounds(files: &[PathBuf], meta: &ReportMeta) -> anyhow::Result<History> {
    if files.is_empty() {
        return Ok(History::default());
    }
    let mut reads = Vec::new();
    for path in files {
        let read = history::read_prior_file(path)
            .with_context(|| format!("--prior {}", path.display()))?;
        if !meta.id.is_empty() && read.meta.id == meta.id {
            bail!(
                "--prior {} is the report being consolidated (id {}): give the reports of \
                 earlier rounds",
                path.display(),
                meta.id
            );
        }
        reads.push(read);
    }
    reads.sort_by(|a, b| {
        (a.meta.round.unwrap_or(0), a.meta.date, &a.meta.id).cmp(&(
            b.meta.round.unwrap_or(0),
            b.meta.date,
            &b.meta.id,
        ))
    });
    let key =
        TargetKey::of_meta(meta).or_else(|| reads.iter().find_map(|r| TargetKey::of_meta(&r.meta)));
    let mut history = history::assemble(key, reads, Vec::new());
    if let Some(round) = meta.round {
        history.next_round = history.next_round.max(round);
    }
    Ok(history)
}

/// Prints what was learned and writes the report to `--out` or stdout.
fn output(args: &ConsolidateArgs, analysis: pipeline::Analysis) -> anyhow::Result<ExitCode> {
    for warning in &analysis.warnings {
        crate::say!("deep-review: warning: {}", printable_line(warning));
    }
    if let Some(counts) = analysis.verified {
        crate::say!("deep-review: verified findings: {counts}");
    }
    super::output::write_report(args.out.as_deref(), &analysis.report, args.format)?;
    let code = super::output::exit_code(&analysis.report, args.fail_on);
    // The command ends here and the process with it, which gives the memory back at once:
    // freeing the reviews and the report string by string first cost a seventieth of a large
    // consolidation for nothing.
    std::mem::forget(analysis);
    Ok(code)
}
