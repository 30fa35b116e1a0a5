//! `deep-review post`: a report on its pull request, once, whatever the number of posts.
//!
//! - one summary comment (verdict, summary, findings table), found again by its marker and
//!   edited in place by later posts;
//! - one review (a comment, never an approval or a request for changes) with an inline comment
//!   per shown finding that is new to the pull request and sits on lines of the diff, each
//!   opening with the finding's fingerprint marker, with a suggestion when the fix is a small
//!   replacement of exactly those lines;
//! - for each finding deep-review posted earlier that this report no longer has: a reply saying
//!   so and the thread resolved (when the token may resolve).
//!
//! What is already there is read back from the forge first (markers written by the token's own
//! user only), so posting twice, or posting round 3 after round 2, duplicates nothing. The plan
//! is made by [`plan`], a pure function of the report, the target and what the forge holds;
//! [`apply`] sends it; `--dry-run` prints it. The plan is the same for every forge: a GitLab
//! merge request gets the same summary note, inline comments (as discussions), replies and
//! resolutions as a GitHub pull request.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::path::Path;

use anyhow::Context;

use super::diff_lines::DiffLines;
use super::render::{self, Placement, SummaryInput};
use super::{Comment, Forge, InlineComment, ReviewDraft, Thread, markers, suggestion};
use crate::store::Store;
use crate::types::{MergedFinding, Report, RequestKind, Target};

/// The most inline comments one review carries; the rest are in the summary.
pub const MAX_INLINE: usize = 50;
/// The largest file read to check a suggestion against.
const MAX_SUGGESTION_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// How to post.
#[derive(Debug, Clone, Default)]
pub struct PostOptions {
    /// Print what would be sent; send nothing.
    pub dry_run: bool,
    /// Where the full report can be read (the HTML published, a CI run's artefacts).
    pub report_url: Option<String>,
}

/// What the forge holds of earlier posts.
#[derive(Debug, Clone, Default)]
pub struct Existing {
    /// deep-review's summary comment.
    pub summary: Option<Comment>,
    /// deep-review's inline comment threads, by fingerprint.
    pub findings: HashMap<String, Thread>,
    /// The pull request's head now: threads are resolved only when the report is of it.
    pub current_head: Option<String>,
    /// The forge could not be read (no token, `--dry-run`): everything is planned as new.
    pub offline: bool,
}

/// What to do with the summary comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummaryAction {
    Create,
    /// Edit comment `id`.
    Update(String),
    /// Comment `id` already says exactly this.
    Unchanged(String),
}

/// A thread of an earlier finding that is gone, to reply to (unless replied already) and
/// resolve.
#[derive(Debug, Clone)]
pub struct Resolution {
    pub thread: Thread,
    pub fingerprint: String,
    pub reply: Option<String>,
}

/// Everything a post sends.
#[derive(Debug, Clone)]
pub struct PostPlan {
    pub number: u64,
    /// A pull request or a merge request: how the text names it.
    pub kind: RequestKind,
    /// Where each shown finding is (index into the report's findings), as the summary says;
    /// kept to say it again when the forge refuses an inline comment.
    pub placements: Vec<(usize, Placement)>,
    /// Findings posted earlier that the report no longer has.
    pub no_longer_found: usize,
    pub report_url: Option<String>,
    pub summary_body: String,
    pub summary: SummaryAction,
    /// deep-review's summary comment as the forge holds it, to tell whether a summary written
    /// again (with refused inline comments) changes it.
    pub existing_summary: Option<Comment>,
    pub review: Option<ReviewDraft>,
    /// Ids of shown findings already posted by an earlier post.
    pub already_posted: Vec<String>,
    pub resolutions: Vec<Resolution>,
    /// What the user should know, one sentence each.
    pub notes: Vec<String>,
}

/// What [`apply`] did.
#[derive(Debug, Clone, Default)]
pub struct PostOutcome {
    /// One line per action, for the terminal.
    pub lines: Vec<String>,
}

/// Reads a shown finding's lines at the head: `(path, start, end)` → the lines, when the file
/// is there and small enough.
pub type LineReader<'a> = dyn Fn(&str, u32, u32) -> Option<Vec<String>> + 'a;

/// The plan for posting `report` (of `target`, a pull request) given what the forge holds.
pub fn plan(
    report: &Report,
    target: &Target,
    existing: &Existing,
    options: &PostOptions,
    read_lines: &LineReader<'_>,
) -> anyhow::Result<PostPlan> {
    let pr = target
        .pr
        .as_ref()
        .ok_or_else(|| not_a_pull_request(&report.meta.id))?;
    let kind = pr.kind;
    let mut notes = Vec::new();
    let head = report
        .meta
        .head
        .clone()
        .unwrap_or_else(|| target.head.clone());
    let diff = DiffLines::new(&target.changed_files);
    let placed = place_findings(report, kind, existing, &diff, read_lines);
    let shown_inline_capped = report.findings.iter().filter(|f| f.is_shown()).count() > MAX_INLINE
        && placed.comments.len() == MAX_INLINE;
    if shown_inline_capped {
        notes.push(format!(
            "only {MAX_INLINE} findings are posted as inline comments at once; the others are in the summary"
        ));
    }
    let present = present_fingerprints(report);
    let resolutions = resolutions(report, kind, existing, &present, &head, &mut notes);
    // Every earlier finding that is gone, resolved by this post or an earlier one: the summary
    // says the same when the same report is posted again.
    let no_longer_found = existing
        .findings
        .keys()
        .filter(|fp| !present.contains(fp.as_str()))
        .count();
    let summary_body = summary_text(&SummaryInput {
        report,
        kind,
        placements: &placed.placements,
        no_longer_found,
        report_url: options.report_url.as_deref(),
    });
    let summary = summary_action(existing.summary.as_ref(), &summary_body);
    let review = (!placed.comments.is_empty()).then(|| ReviewDraft {
        commit: head.clone(),
        body: redact(render::review_body(report, placed.comments.len())),
        comments: placed.comments,
    });
    if existing.offline {
        notes.push(format!(
            "the {}'s comments were not read (no token): a real post finds its earlier comments and skips them",
            kind.noun()
        ));
    }
    Ok(PostPlan {
        number: pr.number,
        kind,
        placements: placed.placements,
        no_longer_found,
        report_url: options.report_url.clone(),
        summary_body,
        summary,
        existing_summary: existing.summary.clone(),
        review,
        already_posted: placed.already_posted,
        resolutions,
        notes,
    })
}

/// Where each shown finding goes: the inline comments to post, and every placement.
struct Placed {
    placements: Vec<(usize, Placement)>,
    comments: Vec<InlineComment>,
    /// Ids of shown findings an earlier post holds.
    already_posted: Vec<String>,
}

/// Each shown finding placed: already posted (its fingerprint has a thread), an inline comment
/// (new, on lines of the diff, its fingerprint not taken by another finding, within
/// [`MAX_INLINE`]), or the summary.
fn place_findings(
    report: &Report,
    kind: RequestKind,
    existing: &Existing,
    diff: &DiffLines,
    read_lines: &LineReader<'_>,
) -> Placed {
    let mut placed = Placed {
        placements: Vec::new(),
        comments: Vec::new(),
        already_posted: Vec::new(),
    };
    let mut seen: HashSet<&str> = HashSet::new();
    for (index, f) in report.findings.iter().enumerate() {
        if !f.is_shown() {
            continue;
        }
        let fp = f.fingerprint.as_str();
        let marked = markers::is_fingerprint(fp);
        if marked && existing.findings.contains_key(fp) {
            placed.placements.push((index, Placement::AlreadyPosted));
            placed.already_posted.push(f.id.clone());
            continue;
        }
        let place = (marked && seen.insert(fp) && placed.comments.len() < MAX_INLINE)
            .then(|| inline_place(f, diff))
            .flatten();
        match place {
            Some(place) => {
                let comment = inline_comment(report, f, kind, place, read_lines);
                placed.comments.push(comment);
                placed.placements.push((index, Placement::Inline));
            }
            None => placed.placements.push((index, Placement::Summary)),
        }
    }
    placed
}

/// The inline comment of finding `f` on `path` lines `start..=end`, with a suggestion when its
/// fix is a small replacement of exactly those lines that the forge can take as it is.
fn inline_comment(
    report: &Report,
    f: &MergedFinding,
    kind: RequestKind,
    (path, start, end): (String, u32, u32),
    read_lines: &LineReader<'_>,
) -> InlineComment {
    let suggestion = f
        .fix_diff
        .as_deref()
        .and_then(|d| {
            let lines = read_lines(&path, start, end)?;
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            suggestion::suggestion(d, &refs)
        })
        .filter(|lines| render::suggestion_fits(kind, lines));
    InlineComment {
        path,
        start_line: (start != end).then_some(start),
        line: end,
        body: redact(render::inline(
            report,
            f,
            suggestion.as_deref(),
            kind,
            (start, end),
        )),
        fingerprint: f.fingerprint.clone(),
    }
}

/// The fingerprints the report still has, in any tier, and those of findings the author
/// declined in an earlier round: a declined finding is not raised again, but it is not fixed
/// either, so its thread stays open for the people to settle.
fn present_fingerprints(report: &Report) -> HashSet<&str> {
    report
        .findings
        .iter()
        .map(|f| f.fingerprint.as_str())
        .chain(
            report
                .prior_rounds
                .declined
                .iter()
                .filter_map(|d| d.fingerprint.as_deref()),
        )
        .collect()
}

/// Earlier findings the report no longer has: a reply (unless replied already) and the thread
/// resolved, when the report is of the pull request's head as it is now (an older report must
/// not close the threads of a newer one; then a note says they are left open).
fn resolutions(
    report: &Report,
    kind: RequestKind,
    existing: &Existing,
    present: &HashSet<&str>,
    head: &str,
    notes: &mut Vec<String>,
) -> Vec<Resolution> {
    let mut gone: Vec<(&String, &Thread)> = existing
        .findings
        .iter()
        .filter(|(fp, t)| !t.resolved && !present.contains(fp.as_str()))
        .collect();
    gone.sort_by(|a, b| a.0.cmp(b.0));
    match existing.current_head.as_deref() {
        Some(now) if now != head && !gone.is_empty() => {
            notes.push(format!(
                "the {}'s head moved since this report ({} → {}): {} of earlier rounds are left open until a report of the newest head is posted",
                kind.noun(),
                short(head),
                short(now),
                crate::text::plural(gone.len(), "thread", "threads")
            ));
            Vec::new()
        }
        _ => gone
            .into_iter()
            .map(|(fp, thread)| {
                let replied = thread
                    .recent
                    .iter()
                    .any(|c| markers::resolved_of(&c.body) == Some(fp.as_str()));
                Resolution {
                    thread: thread.clone(),
                    fingerprint: fp.clone(),
                    reply: (!replied).then(|| redact(render::resolved_reply(report, fp, kind))),
                }
            })
            .collect(),
    }
}

/// Text to post with every secret of the environment hidden: a review quoting a key would
/// otherwise put it on a public pull request.
fn redact(text: String) -> String {
    match crate::redact::redact(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(redacted) => redacted,
    }
}

/// Create the summary comment, edit it, or leave it when it already says `body`.
fn summary_action(existing: Option<&Comment>, body: &str) -> SummaryAction {
    match existing {
        Some(c) if c.body.trim_end() == body.trim_end() => SummaryAction::Unchanged(c.id.clone()),
        Some(c) => SummaryAction::Update(c.id.clone()),
        None => SummaryAction::Create,
    }
}

/// `(path, start, end)` when the finding can be an inline comment: a location with lines that
/// verification found at head, on lines of the diff.
fn inline_place(f: &MergedFinding, diff: &DiffLines) -> Option<(String, u32, u32)> {
    let loc = f.locations.first()?;
    let start = loc.start?;
    let end = loc.end_line()?;
    if let Some(v) = &f.verification
        && (!v.path_ok || !v.lines_ok)
    {
        return None;
    }
    diff.contains(&loc.path, start, end)
        .then(|| (loc.path.clone(), start, end))
}

/// What the forge holds of deep-review's earlier posts on pull request `number`: comments and
/// threads whose first line is deep-review's marker and whose author is the token's own user.
pub fn read_existing(forge: &dyn Forge, number: u64) -> anyhow::Result<Existing> {
    let pr = forge.pull_request(number)?;
    let discussion = forge.discussion(number)?;
    let comments = forge.comments(number)?;
    let me = discussion.viewer.as_deref().map(normalize_login);
    let ours = |author: Option<&str>| match (&me, author) {
        (Some(me), Some(a)) => normalize_login(a) == *me,
        (None, _) => true,
        (Some(_), None) => false,
    };
    let summary = comments
        .into_iter()
        .rfind(|c| markers::is_summary(&c.body) && ours(c.author.as_deref()));
    let mut findings = HashMap::new();
    for thread in discussion.threads {
        let Some(first) = &thread.first else { continue };
        if !ours(first.author.as_deref()) {
            continue;
        }
        if let Some(fp) = markers::finding_of(&first.body) {
            findings.entry(fp.to_string()).or_insert(thread);
        }
    }
    Ok(Existing {
        summary,
        findings,
        current_head: Some(pr.head_sha),
        offline: false,
    })
}

/// GitHub's GraphQL names a bot `name`, its REST API `name[bot]`: compare without the suffix.
fn normalize_login(login: &str) -> String {
    login
        .strip_suffix("[bot]")
        .unwrap_or(login)
        .to_ascii_lowercase()
}

/// Sends `plan` (made from `report`): the summary first (so the findings are on the pull
/// request whatever fails next), then the review, then the replies and resolutions. Inline
/// comments the forge refuses move to the summary, which is edited to say so: a finding is
/// never lost.
pub fn apply(forge: &dyn Forge, plan: &PostPlan, report: &Report) -> anyhow::Result<PostOutcome> {
    let mut outcome = PostOutcome::default();
    let n = plan.number;
    // The inline comments the forge's own diff would not take are left out of the review and
    // listed in the summary from the start; the review carries the rest and counts them.
    let mut review = plan.review.clone();
    let mut refused = Vec::new();
    if let Some(r) = review.as_mut() {
        let found = forge.refused_comments(n, r)?;
        outcome.lines.extend(found.notes);
        r.comments
            .retain(|c| !found.refused.contains(&c.fingerprint));
        r.body = render::review_body(report, r.comments.len());
        refused = found.refused;
    }
    let (first_body, action) = if refused.is_empty() {
        (plan.summary_body.clone(), plan.summary.clone())
    } else {
        let body = summary_with_refused(plan, report, &refused);
        let action = summary_action(plan.existing_summary.as_ref(), &body);
        (body, action)
    };
    let summary_id = match &action {
        SummaryAction::Create => {
            let id = forge.create_comment(n, &first_body)?;
            outcome.lines.push("summary comment posted".to_string());
            id
        }
        SummaryAction::Update(id) => {
            forge.update_comment(n, id, &first_body)?;
            outcome.lines.push("summary comment updated".to_string());
            id.clone()
        }
        SummaryAction::Unchanged(id) => {
            outcome
                .lines
                .push("summary comment already up to date".to_string());
            id.clone()
        }
    };
    if let Some(review) = review.filter(|r| !r.comments.is_empty()) {
        let posted = forge.create_review(n, &review)?;
        let placed = review.comments.len() - posted.refused.len().min(review.comments.len());
        if placed > 0 {
            outcome.lines.push(format!(
                "review posted with {}",
                crate::text::plural(placed, "inline comment", "inline comments")
            ));
        }
        outcome.lines.extend(posted.notes);
        if !posted.refused.is_empty() {
            refused.extend(posted.refused.iter().cloned());
            let body = summary_with_refused(plan, report, &refused);
            forge.update_comment(n, &summary_id, &body)?;
            outcome.lines.push(format!(
                "{} refused by {} on its lines: in the summary comment instead",
                crate::text::plural(posted.refused.len(), "inline comment", "inline comments"),
                forge.name()
            ));
        }
    }
    if !plan.already_posted.is_empty() {
        outcome.lines.push(format!(
            "{} already on the {}, not posted again: {}",
            crate::text::plural(plan.already_posted.len(), "finding", "findings"),
            plan.kind.noun(),
            plan.already_posted.join(", ")
        ));
    }
    let mut resolved = 0;
    let mut refused = 0;
    for r in &plan.resolutions {
        if let Some(reply) = &r.reply {
            forge.reply(n, &r.thread, reply)?;
        }
        if forge.resolve_thread(n, &r.thread)? {
            resolved += 1;
        } else {
            refused += 1;
        }
    }
    outcome.lines.extend(forge.publish_insights(n, report)?);
    if resolved > 0 {
        outcome.lines.push(format!(
            "{} of findings no longer found resolved",
            crate::text::plural(resolved, "thread", "threads")
        ));
    }
    if refused > 0 {
        outcome.lines.push(format!(
            "{} of findings no longer found got a reply but could not be resolved: the token may not resolve threads",
            crate::text::plural(refused, "thread", "threads")
        ));
    }
    Ok(outcome)
}

/// The summary again, with the findings whose inline comments the forge refused listed in it
/// as findings not on the lines of the diff.
fn summary_with_refused(plan: &PostPlan, report: &Report, refused: &[String]) -> String {
    let refused: HashSet<&str> = refused.iter().map(String::as_str).collect();
    let placements: Vec<(usize, Placement)> = plan
        .placements
        .iter()
        .map(|&(i, p)| {
            let moved = p == Placement::Inline
                && report
                    .findings
                    .get(i)
                    .is_some_and(|f| refused.contains(f.fingerprint.as_str()));
            (i, if moved { Placement::Refused } else { p })
        })
        .collect();
    summary_text(&SummaryInput {
        report,
        kind: plan.kind,
        placements: &placements,
        no_longer_found: plan.no_longer_found,
        report_url: plan.report_url.as_deref(),
    })
}

/// The summary comment as it is posted: secrets hidden, within the forge's limit on a
/// comment's length.
fn summary_text(input: &SummaryInput<'_>) -> String {
    super::cap::summary_for(
        input.kind,
        redact(render::summary(input)),
        &input.report.meta.id,
        input.report_url,
    )
}

/// What `--dry-run` prints: every body that would be sent, and where.
pub fn dry_run_text(forge_name: &str, repository: &str, plan: &PostPlan) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "deep-review post --dry-run: nothing was sent.\n\n{}: {repository}{} ({forge_name})",
        capitalized(plan.kind.noun()),
        plan.kind.reference(plan.number)
    );
    for note in &plan.notes {
        let _ = writeln!(out, "Note: {note}");
    }
    let action = match &plan.summary {
        SummaryAction::Create => "would be posted".to_string(),
        SummaryAction::Update(id) => format!("would replace comment {id}"),
        SummaryAction::Unchanged(id) => format!("unchanged (comment {id})"),
    };
    let _ = writeln!(
        out,
        "\n=== Summary comment: {action} ===\n{}\n",
        plan.summary_body
    );
    match &plan.review {
        Some(review) => {
            let how = match plan.kind {
                RequestKind::PullRequest => "Review (COMMENT)",
                RequestKind::MergeRequest => "Review (draft notes, published at once)",
            };
            let _ = writeln!(
                out,
                "=== {how} on {}: {} ===",
                short(&review.commit),
                crate::text::plural(review.comments.len(), "inline comment", "inline comments")
            );
            let _ = writeln!(out, "{}\n", review.body);
            for c in &review.comments {
                let lines = match c.start_line {
                    Some(s) => format!("{s}-{}", c.line),
                    None => c.line.to_string(),
                };
                let _ = writeln!(out, "--- {}:{lines} ---\n{}\n", c.path, c.body);
            }
        }
        None => out.push_str("=== No review: no new finding on the lines of the diff ===\n\n"),
    }
    if !plan.already_posted.is_empty() {
        let _ = writeln!(
            out,
            "Already on the {} (not posted again): {}\n",
            plan.kind.noun(),
            plan.already_posted.join(", ")
        );
    }
    for r in &plan.resolutions {
        let where_ = match (&r.thread.path, r.thread.line) {
            (Some(p), Some(l)) => format!("{p}:{l}"),
            (Some(p), None) => p.clone(),
            _ => r.thread.id.clone(),
        };
        let _ = writeln!(
            out,
            "=== Thread of finding {} at {where_}: would be resolved ===",
            r.fingerprint
        );
        if let Some(reply) = &r.reply {
            let _ = writeln!(out, "{reply}");
        }
        out.push('\n');
    }
    out
}

fn short(sha: &str) -> &str {
    sha.get(..7).unwrap_or(sha)
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

fn not_a_pull_request(id: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "report {id} is of a branch, not of a pull request: review a pull request with `deep-review run 236` (or its URL), then post that report"
    )
}

/// Posts `report` of `target` to its pull request: reads what is there, plans, and sends (or,
/// with `--dry-run`, returns the plan as text in the outcome).
pub fn post_report(
    report: &Report,
    target: &Target,
    options: &PostOptions,
) -> anyhow::Result<PostOutcome> {
    let pr = target
        .pr
        .as_ref()
        .ok_or_else(|| not_a_pull_request(&report.meta.id))?;
    let forge = super::connect_for_report(&target.repo, pr, options.dry_run)?;
    let existing = match &forge {
        Some(forge) => read_existing(forge.as_ref(), pr.number)?,
        None => Existing {
            offline: true,
            ..Existing::default()
        },
    };
    let head = report
        .meta
        .head
        .clone()
        .unwrap_or_else(|| target.head.clone());
    let repo = target.repo.clone();
    let reader =
        move |path: &str, start: u32, end: u32| read_head_lines(&repo, &head, path, start, end);
    let plan = plan(report, target, &existing, options, &reader)?;
    if options.dry_run {
        let (name, repository) = match &forge {
            Some(f) => (f.name(), f.repository().to_string()),
            None => ("no token", target.repo_name.clone()),
        };
        return Ok(PostOutcome {
            lines: vec![dry_run_text(name, &repository, &plan)],
        });
    }
    // Only a dry run goes on without a forge to talk to.
    let forge = forge.ok_or_else(|| anyhow::anyhow!("no token to post with"))?;
    let mut outcome = apply(forge.as_ref(), &plan, report)?;
    outcome.lines.extend(plan.notes.iter().cloned());
    let url = pr.url.as_deref().unwrap_or("");
    outcome.lines.push(format!(
        "posted report {} to {}{} {url}",
        report.meta.id,
        forge.repository(),
        pr.reference()
    ));
    Ok(outcome)
}

/// Posts report `id` (`latest` for the newest) of the store: the report's JSON record and the
/// target its run bundle saved.
pub fn post_from_store(
    store: &Store,
    id: &str,
    options: &PostOptions,
) -> anyhow::Result<PostOutcome> {
    let id = store.resolve_report_id(id)?;
    let report = store.read_report(&id)?;
    let bundle = store.open_run(&id).with_context(|| {
        format!("report {id} has no run bundle: `post` needs the run's target (its pull request and diff)")
    })?;
    let path = bundle.dir.join(crate::bundle::TARGET_FILE);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let target: Target = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a target deep-review wrote", path.display()))?;
    post_report(&report, &target, options)
}

/// The report file a post bundle holds, beside its target.
pub const BUNDLE_REPORT_FILE: &str = "report.json";

/// Posts the report a review job left for a separate posting job (GitHub Actions: the job with
/// the model keys may only read, the job that may write has no keys; see
/// docs/src/ci/github-actions.md). `dir` is a run bundle of a store (`<store>/runs/<id>`, its report
/// at `<store>/<id>.json`) or a folder holding `report.json` and `target.json`.
///
/// What is in `dir` came through an artefact: it is read as data. The repository posted to is
/// the one this job is in (`GITHUB_REPOSITORY`, the `origin` remote), never an address the
/// files name, and `expected` (the pull request the workflow was started for) must be the one
/// the files name.
pub fn post_from_bundle(
    dir: &Path,
    expected: Option<u64>,
    options: &PostOptions,
) -> anyhow::Result<PostOutcome> {
    let read = |path: &Path| {
        std::fs::read_to_string(path).with_context(|| {
            format!(
                "cannot read {}: `post --bundle` takes a run bundle (<store>/runs/<id>) or a folder with report.json and target.json",
                path.display()
            )
        })
    };
    let target_path = dir.join(crate::bundle::TARGET_FILE);
    let mut target: Target = serde_json::from_str(&read(&target_path)?).with_context(|| {
        format!(
            "{} is not a target deep-review wrote",
            target_path.display()
        )
    })?;
    let beside = dir.join(BUNDLE_REPORT_FILE);
    let report_path = if beside.is_file() {
        beside
    } else {
        let id = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        dir.join("../..").join(format!("{id}.json"))
    };
    let report: Report = serde_json::from_str(&read(&report_path)?).with_context(|| {
        format!(
            "{} is not a report deep-review wrote",
            report_path.display()
        )
    })?;
    let pr = target
        .pr
        .as_mut()
        .ok_or_else(|| not_a_pull_request(&report.meta.id))?;
    if let Some(n) = expected
        && n != pr.number
    {
        anyhow::bail!(
            "{} is a review of pull request #{}, not #{n}: post it with --pull-request {}, or give the bundle of #{n}",
            dir.display(),
            pr.number,
            pr.number
        );
    }
    if report
        .meta
        .pr
        .as_ref()
        .is_some_and(|p| p.number != pr.number)
    {
        anyhow::bail!(
            "{} holds a report and a target of different pull requests: give the bundle of one run",
            dir.display()
        );
    }
    // The repository is this job's, not one the files name.
    pr.url = None;
    target.repo = std::env::current_dir().context("cannot read the current directory")?;
    post_report(&report, &target, options)
}

/// Lines `start..=end` of `path` at commit `head`, when the file is at most
/// [`MAX_SUGGESTION_FILE_BYTES`].
fn read_head_lines(
    repo: &Path,
    head: &str,
    path: &str,
    start: u32,
    end: u32,
) -> Option<Vec<String>> {
    let spec = format!("{head}:{path}");
    let size: u64 = crate::git::git_text(repo, &["cat-file", "-s", &spec])
        .ok()?
        .trim()
        .parse()
        .ok()?;
    if size > MAX_SUGGESTION_FILE_BYTES {
        return None;
    }
    let bytes = crate::git::git_bytes(repo, &["cat-file", "blob", &spec]).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let lines: Vec<String> = text
        .lines()
        .skip(usize::try_from(start).ok()?.checked_sub(1)?)
        .take(usize::try_from(end - start + 1).ok()?)
        .map(str::to_string)
        .collect();
    (lines.len() == usize::try_from(end - start + 1).ok()?).then_some(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{
        ChangeKind, ChangedFile, Hunk, Location, PrInfo, ReportMeta, Severity, Tier, Verdict,
        Verification, VerificationStatus,
    };

    fn finding(id: &str, fp: &str, path: &str, line: u32) -> MergedFinding {
        MergedFinding {
            id: id.into(),
            title: format!("Title {id}"),
            body: "Body.".into(),
            severity: Severity::Important,
            category: None,
            locations: vec![Location::new(path, Some(line), Some(line))],
            code: None,
            fix: None,
            fix_diff: None,
            agents: vec!["claude".into()],
            sources: vec![],
            calibration: None,
            confidence: Some(0.9),
            confidence_reason: None,
            tier: Tier::Shown,
            verification: None,
            fingerprint: fp.into(),
            round_status: Default::default(),
            prior: None,
        }
    }

    fn report(findings: Vec<MergedFinding>) -> Report {
        Report {
            meta: ReportMeta {
                id: "20260101-000000-pr-7".into(),
                head: Some("b".repeat(40)),
                round: Some(2),
                ..ReportMeta::default()
            },
            verdict: Verdict::MergeWithFixes,
            summary: "Summary.".into(),
            findings,
            round: 2,
            ..Report::default()
        }
    }

    fn target() -> Target {
        Target {
            repo: "/nonexistent".into(),
            repo_name: "o/r".into(),
            web_url: None,
            base: "a".repeat(40),
            head: "b".repeat(40),
            merge_base: "a".repeat(40),
            base_ref: "main".into(),
            branch: Some("feat".into()),
            author: None,
            commits: vec![],
            changed_files: vec![ChangedFile {
                path: "src/a.rs".into(),
                old_path: None,
                kind: ChangeKind::Modified,
                added: 1,
                removed: 0,
                binary: false,
                submodule: false,
                hunks: vec![Hunk {
                    old_start: 10,
                    old_lines: 0,
                    new_start: 11,
                    new_lines: 1,
                }],
            }],
            pr: Some(PrInfo {
                number: 7,
                title: "T".into(),
                url: Some("https://github.com/o/r/pull/7".into()),
                kind: RequestKind::PullRequest,
            }),
            description: None,
            review_threads: vec![],
            label: "pr-7".into(),
        }
    }

    fn thread(fp: &str) -> Thread {
        Thread {
            id: format!("T-{fp}"),
            path: Some("src/a.rs".into()),
            line: Some(11),
            resolved: false,
            outdated: false,
            first: Some(Comment {
                id: "1".into(),
                author: Some("bot".into()),
                body: markers::finding(fp),
                url: None,
            }),
            recent: vec![],
            comment_count: 1,
        }
    }

    fn no_lines(_: &str, _: u32, _: u32) -> Option<Vec<String>> {
        None
    }

    #[test]
    fn only_new_findings_on_the_diff_go_inline() {
        let mut off_lines = finding("I3", "cc", "src/a.rs", 11);
        off_lines.verification = Some(Verification {
            status: VerificationStatus::Ungrounded,
            lines_ok: false,
            path_ok: true,
            quote_ok: None,
            symbols_missing: vec![],
            pre_existing: false,
            outside_change: false,
            known_issue_comment: None,
            note: None,
        });
        let r = report(vec![
            finding("I1", "aa", "src/a.rs", 12),
            finding("I2", "aa", "src/a.rs", 13),
            finding("I4", "dd", "src/a.rs", 40),
            off_lines,
            finding("I5", "ee", "src/a.rs", 11),
        ]);
        let existing = Existing {
            findings: [("ee".to_string(), thread("ee"))].into(),
            current_head: Some("b".repeat(40)),
            ..Existing::default()
        };
        let plan = plan(&r, &target(), &existing, &PostOptions::default(), &no_lines).unwrap();
        let inline: Vec<&str> = plan
            .review
            .as_ref()
            .unwrap()
            .comments
            .iter()
            .map(|c| c.fingerprint.as_str())
            .collect();
        // I2 shares I1's fingerprint, I4 is off the diff, I3's lines are not at head, I5 was
        // posted before.
        assert_eq!(inline, vec!["aa"]);
        assert_eq!(plan.already_posted, vec!["I5"]);
        assert_eq!(plan.summary, SummaryAction::Create);
        assert!(plan.resolutions.is_empty());
    }

    #[test]
    fn a_declined_finding_keeps_its_thread_open() {
        let mut r = report(vec![finding("I1", "aa", "src/a.rs", 12)]);
        r.prior_rounds.declined.push(crate::types::PriorItem {
            round: 1,
            id: "S2".into(),
            title: "Rename the helper".into(),
            reason: "declined: the name is the crate's convention".into(),
            action: Some(crate::types::Action::Skipped),
            fingerprint: Some("dd".into()),
            now: None,
            raised_again: vec![],
        });
        let existing = Existing {
            findings: [
                ("dd".to_string(), thread("dd")),
                ("ff".to_string(), thread("ff")),
            ]
            .into(),
            current_head: Some("b".repeat(40)),
            summary: None,
            offline: false,
        };
        let p = plan(&r, &target(), &existing, &PostOptions::default(), &no_lines).unwrap();
        let resolved: Vec<&str> = p
            .resolutions
            .iter()
            .map(|r| r.fingerprint.as_str())
            .collect();
        assert_eq!(resolved, ["ff"], "the declined finding is not called fixed");
    }

    #[test]
    fn gone_findings_are_resolved_only_from_a_report_of_the_current_head() {
        let r = report(vec![finding("I1", "aa", "src/a.rs", 12)]);
        let mut existing = Existing {
            findings: [("ff".to_string(), thread("ff"))].into(),
            current_head: Some("c".repeat(40)),
            summary: Some(Comment {
                id: "99".into(),
                author: Some("bot".into()),
                body: "old".into(),
                url: None,
            }),
            offline: false,
        };
        let moved = plan(&r, &target(), &existing, &PostOptions::default(), &no_lines).unwrap();
        assert!(moved.resolutions.is_empty());
        assert!(moved.notes[0].contains("head moved"), "{:?}", moved.notes);
        assert_eq!(moved.summary, SummaryAction::Update("99".into()));

        existing.current_head = Some("b".repeat(40));
        let now = plan(&r, &target(), &existing, &PostOptions::default(), &no_lines).unwrap();
        assert_eq!(now.resolutions.len(), 1);
        assert!(
            now.resolutions[0]
                .reply
                .as_deref()
                .unwrap()
                .starts_with(&markers::resolved("ff"))
        );
        // Replied already (the resolve failed last time): resolve again, no second reply.
        let mut replied = thread("ff");
        replied.recent.push(Comment {
            id: "2".into(),
            author: Some("bot".into()),
            body: markers::resolved("ff"),
            url: None,
        });
        existing.findings.insert("ff".into(), replied);
        let again = plan(&r, &target(), &existing, &PostOptions::default(), &no_lines).unwrap();
        assert_eq!(again.resolutions.len(), 1);
        assert!(again.resolutions[0].reply.is_none());
        existing.summary = Some(Comment {
            id: "99".into(),
            author: None,
            body: again.summary_body.clone(),
            url: None,
        });
        let same = plan(&r, &target(), &existing, &PostOptions::default(), &no_lines).unwrap();
        assert_eq!(same.summary, SummaryAction::Unchanged("99".into()));
    }

    #[test]
    fn a_branch_report_is_not_posted() {
        let mut t = target();
        t.pr = None;
        let err = plan(
            &report(vec![]),
            &t,
            &Existing::default(),
            &PostOptions::default(),
            &no_lines,
        )
        .unwrap_err();
        assert!(err.to_string().contains("not of a pull request"), "{err}");
    }
}
