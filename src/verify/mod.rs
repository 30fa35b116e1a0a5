//! Verify stage: every finding checked against the repository at head and the merge-base.
//!
//! Reviewers cite files and lines, quote code and name symbols, and are often slightly wrong:
//! a bare file name, lines off by a dozen, a quote with its indentation gone, a function that
//! does not exist, a "regression" in code the change never touched. This stage checks each
//! finding with plain code and records the result in [`Verification`]; it also corrects what
//! it can (full paths, the real lines), keeping the reviewer's version in the note.
//!
//! It reads commits, never the checkout: the head tree is listed once, each file is read at
//! most once through one `git cat-file --batch`, and every identifier of every finding is
//! looked up in one `git grep`.
//!
//! # How a finding is judged
//!
//! - **path**: the cited path at head; else a file the change renamed (the location follows it,
//!   "renamed by the change: a → b") or deleted (checked at the merge-base); else a bare or
//!   partial name that fits exactly one changed file (else one file of the tree). Several
//!   fits: the quote picks one, or the finding says it is ambiguous.
//! - **lines**: the cited range lies within the file (`lines_ok`; true when none was cited).
//! - **quote** (`finding.code`, never `fix_diff`): see [`quote`] for how loosely it may be
//!   written. At the cited lines: `grounded`. Elsewhere in the file: `relocated`, the location
//!   moved to the real lines ("lines corrected 193 → 207"). Only in the merge-base version of a
//!   changed file (the code the change removed): `grounded`, said in the note. Nowhere:
//!   `ungrounded` ("quoted code not found in x.go at head"). A distinctive quote that exactly
//!   one other changed file holds moves the finding there (`relocated`, "quoted code is in
//!   b.go:20, not in a.go"). A cited path that does not exist is looked for by its quote in
//!   the changed files, then the tree.
//! - **no quote**: `grounded` when path and lines exist, `ungrounded` when not; no location and
//!   no quote: `unchecked`. Binary files and submodules are never quote-matched: `unchecked`
//!   when a quote or lines were cited there.
//! - **symbols**: backticked identifiers of the title and explanation (see [`symbols`]) that
//!   exist nowhere at head go to `symbols_missing`; they do not change the status.
//! - **pre-existing**: a `regression` whose grounded lines the change did not touch (no added
//!   line among them, no deletion inside, same text at the merge-base) is `pre_existing`,
//!   unless the change's added lines call a name those lines define or copy them ("kept as a
//!   regression: ... the change calls `f` at a.go:12").
//! - **outside_change**: none of the finding's paths is among the changed files.
//!
//! `note` joins what there is to say, in that order, with "; ".
//!
//! ```no_run
//! use deep_review::verify::{VerifyContext, verify_reviews};
//! # fn demo(reviews: &mut [deep_review::types::Review]) -> anyhow::Result<()> {
//! let ctx = VerifyContext { repo: ".".into(), head: "HEAD".into(), base: Some("main".into()) };
//! let outcome = verify_reviews(&ctx, reviews)?;
//! println!("{} changed files; {}", outcome.changed_files.len(), outcome.counts);
//! # Ok(()) }
//! ```

mod check;
pub mod coverage;
pub mod git;
mod history;
pub mod quote;
mod source;
pub mod symbols;

use std::fmt;
use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::target::diff::changed_files;
use crate::types::ChangedFile;
use crate::types::{Review, Verification, VerificationStatus};

use check::Checker;
use source::RepoSnapshot;

/// What to verify against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyContext {
    /// The repository (any directory inside it).
    pub repo: PathBuf,
    /// The reviewed commit: a commit id, branch or tag.
    pub head: String,
    /// The merge-base of the change. `None`: no changed files are known, so nothing is marked
    /// pre-existing or outside the change.
    pub base: Option<String>,
}

/// Findings by verification status, over all reviews.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VerifyCounts {
    pub grounded: usize,
    pub relocated: usize,
    pub ungrounded: usize,
    pub unchecked: usize,
    pub pre_existing: usize,
    /// Findings naming at least one identifier that exists nowhere at head.
    pub with_missing_symbols: usize,
}

impl VerifyCounts {
    fn add(&mut self, v: &Verification) {
        match v.status {
            VerificationStatus::Grounded => self.grounded += 1,
            VerificationStatus::Relocated => self.relocated += 1,
            VerificationStatus::Ungrounded => self.ungrounded += 1,
            VerificationStatus::Unchecked => self.unchecked += 1,
        }
        self.pre_existing += usize::from(v.pre_existing);
        self.with_missing_symbols += usize::from(!v.symbols_missing.is_empty());
    }
}

impl fmt::Display for VerifyCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} grounded, {} relocated, {} ungrounded, {} unchecked, {} pre-existing",
            self.grounded, self.relocated, self.ungrounded, self.unchecked, self.pre_existing
        )
    }
}

/// What the stage learned beyond the per-finding verifications.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyOutcome {
    /// The files of the change (`base..head`), empty when no base was given: coverage is
    /// measured against these ([`coverage::coverage_of`]).
    pub changed_files: Vec<ChangedFile>,
    /// Stage-level remarks for the run log: what could not be checked and why.
    pub notes: Vec<String>,
    pub counts: VerifyCounts,
}

impl VerifyOutcome {
    /// The changed files' paths at head (deleted files by their old path): the list coverage
    /// is measured against.
    pub fn changed_paths(&self) -> Vec<String> {
        self.changed_files.iter().map(|c| c.path.clone()).collect()
    }
}

/// Verifies every finding of `reviews` against `ctx.repo` at `ctx.head` (and the merge-base
/// `ctx.base`, whose diff to head gives the changed files). Sets `finding.verification` on
/// every finding and may rewrite `finding.locations` (full paths, corrected lines).
///
/// Fails only when the repository or a revision cannot be read; a finding that cannot be
/// checked is marked `unchecked` with the reason.
pub fn verify_reviews(ctx: &VerifyContext, reviews: &mut [Review]) -> Result<VerifyOutcome> {
    run(ctx, None, reviews)
}

/// [`verify_reviews`] with the changed files already known (the target stage computed them):
/// no second `git diff`.
pub fn verify_reviews_with_changes(
    ctx: &VerifyContext,
    changed: Vec<ChangedFile>,
    reviews: &mut [Review],
) -> Result<VerifyOutcome> {
    run(ctx, Some(changed), reviews)
}

fn run(
    ctx: &VerifyContext,
    changed: Option<Vec<ChangedFile>>,
    reviews: &mut [Review],
) -> Result<VerifyOutcome> {
    let head = git::resolve_commit(&ctx.repo, &ctx.head)
        .with_context(|| format!("cannot verify findings against head {:?}", ctx.head))?;
    let base = match &ctx.base {
        Some(b) => Some(
            git::resolve_commit(&ctx.repo, b)
                .with_context(|| format!("cannot verify findings against base {b:?}"))?,
        ),
        None => None,
    };
    let mut outcome = VerifyOutcome::default();
    if base.is_none() {
        outcome.notes.push(
            "no merge-base given: changed files unknown, nothing marked pre-existing or outside the change"
                .to_string(),
        );
    }
    let source = RepoSnapshot::open(&ctx.repo, head.clone(), base.clone(), Vec::new())?;
    let mut checker = Checker::new(source);
    // The identifier lookup reads the whole tree: it runs while the diff and the checks do.
    let search = checker.start_symbol_search(reviews.iter().flat_map(|r| r.findings.iter()));
    checker.src.changed = match (changed, &base) {
        (Some(changed), _) => changed,
        (None, Some(base)) => changed_files(&ctx.repo, base, &head).with_context(|| {
            format!(
                "could not list the files changed between {} and {}",
                ctx.base.as_deref().unwrap_or(base),
                ctx.head
            )
        })?,
        (None, None) => Vec::new(),
    };
    checker.prefetch(reviews.iter().flat_map(|r| r.findings.iter()))?;
    let mut verifications = Vec::new();
    for review in reviews.iter_mut() {
        for finding in &mut review.findings {
            let v = checker
                .check(finding)
                .with_context(|| format!("verifying finding {} of {}", finding.id, review.agent))?;
            verifications.push(v);
        }
    }
    outcome
        .notes
        .extend(search.finish(verifications.iter_mut()));
    let mut verifications = verifications.into_iter();
    for finding in reviews.iter_mut().flat_map(|r| r.findings.iter_mut()) {
        if let Some(v) = verifications.next() {
            outcome.counts.add(&v);
            finding.verification = Some(v);
        }
    }
    outcome.changed_files = std::mem::take(&mut checker.src.changed);
    Ok(outcome)
}

/// Marks every finding `unchecked` with `why` (no repository to check against).
pub fn mark_unchecked(reviews: &mut [Review], why: &str) {
    for finding in reviews.iter_mut().flat_map(|r| r.findings.iter_mut()) {
        finding.verification = Some(Verification::unchecked(why));
    }
}
