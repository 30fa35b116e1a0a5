//! Verify stage: every finding checked against the repository at head and the merge-base.
//!
//! Reviewers cite files and lines, quote code and name symbols, and are often slightly wrong:
//! a bare file name, lines off by a dozen, a quote with its indentation gone, a function that
//! does not exist, a "regression" in code the change never touched. This stage checks each
//! finding with plain code and records the result in [`Verification`]; it also corrects what
//! it can (full paths, the real lines), keeping the reviewer's version in the note.
//!
//! It reads commits, never the checkout, and its cost follows the findings, not the
//! repository: the head tree is listed once (a path is a map lookup), each cited file is read
//! at most once through one `git cat-file --batch`, and what the checks need beyond their cited
//! files (a quote whose file is wrong, identifiers the files read do not show, the change's
//! added lines) is collected over all findings and answered by one streamed scan (`scan.rs`):
//! the changed files, then the rest of the tree only when something is still open. Findings
//! that ask nothing beyond their files cost no scan at all.
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
//!   the changed files, then the tree. A quote found nowhere that is a commit message of the
//!   change or prose is `unchecked` ("quoted text is a commit message, not code"), not
//!   ungrounded.
//! - **no quote**: `grounded` when path and lines exist, `ungrounded` when not; no location and
//!   no quote: `unchecked`. Binary files and submodules are never quote-matched: `unchecked`
//!   when a quote or lines were cited there.
//! - **symbols**: backticked identifiers of the title and explanation (see [`symbols`]) that
//!   exist nowhere at head go to `symbols_missing`; they do not change the status. Names the
//!   finding proposes (in its fix, a diff, a "replace ... with `x`" sentence) are not checked.
//! - **pre-existing**: a `regression` whose grounded lines the change did not touch (no added
//!   line among them, no deletion inside, same text at the merge-base) is `pre_existing`,
//!   unless the change's added lines call a name those lines define or copy them ("kept as a
//!   regression: ... the change calls `f` at a.go:12").
//! - **outside_change**: none of the finding's paths is among the changed files.
//! - **known_issue_comment**: a `TODO`/`FIXME`/`XXX`/`HACK`/"temporary" comment at the
//!   grounded lines, just above them, or on or above the first line of a block enclosing them
//!   (see `known_issue.rs`), quoted; calibration lowers the severity one level for it.
//!
//! `note` joins what there is to say, in that order, with "; ".
//!
//! ```no_run
//! use deep_review::verify::{VerifyContext, verify_reviews};
//! # fn demo(reviews: &mut [deep_review::types::Review]) -> anyhow::Result<()> {
//! let ctx = VerifyContext {
//!     repo: ".".into(),
//!     head: "HEAD".into(),
//!     base: Some("main".into()),
//!     checkout: None,
//! };
//! let outcome = verify_reviews(&ctx, reviews)?;
//! println!("{} changed files; {}", outcome.changed_files.len(), outcome.counts);
//! # Ok(()) }
//! ```

mod check;
pub mod coverage;
pub mod git;
mod history;
mod known_issue;
mod lookups;
mod objects;
pub mod quote;
mod scan;
mod source;
mod stream;
pub mod symbols;

use std::collections::HashSet;
use std::fmt;
use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::target::diff::changed_files;
use crate::types::{ChangedFile, Finding, Location};
use crate::types::{Review, Verification, VerificationStatus};

use check::Checker;
use scan::{ScanRequest, scan};
use source::RepoSnapshot;
use symbols::Symbol;

/// At most this many identifiers are looked up in the tree (a review naming half a million
/// would otherwise build an automaton of hundreds of megabytes); the rest count as present.
const MAX_WORDS_LOOKED_UP: usize = 20_000;

/// Rounds of checks and scans: a check asks at most a quote search, then (once its quote is
/// placed) an added-lines search, so three rounds answer everything; the bound only guards.
const MAX_ROUNDS: usize = 4;

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
    /// A checkout of head that deep-review made itself and no agent could write (`run`'s
    /// sandboxed checkout): a search of many files reads them there instead of inflating
    /// every blob, each file used only when its bytes hash to the blob id head lists for it
    /// (else read from git). `None`: everything is read from git.
    pub checkout: Option<PathBuf>,
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
    let mut checker = Checker::new(snapshot(ctx, changed, head, base)?);
    let findings: Vec<(&str, &Finding)> = reviews
        .iter()
        .flat_map(|r| r.findings.iter().map(|f| (r.agent.as_str(), f)))
        .collect();
    let symbols: Vec<Vec<Symbol>> = findings
        .iter()
        .map(|(_, f)| symbols::candidates(f, |name| checker.src.is_file_name(name)))
        .collect();
    checker.prefetch(findings.iter().map(|(_, f)| *f))?;

    // Check every finding; then answer in one scan what the checks asked beyond their cited
    // files (and which identifiers exist, for those the files read so far do not show), and
    // check again the findings that asked.
    let originals: Vec<(String, Finding)> = findings
        .into_iter()
        .map(|(agent, f)| (agent.to_string(), f.clone()))
        .collect();
    let mut checked: Vec<Option<(Verification, Vec<Location>)>> = vec![None; originals.len()];
    let mut todo: Vec<usize> = (0..originals.len()).collect();
    let mut present: HashSet<String> = HashSet::new();
    for round in 0..MAX_ROUNDS {
        for &i in &todo {
            let (agent, original) = &originals[i];
            let mut f = original.clone();
            let v = checker
                .check(i, &mut f)
                .with_context(|| format!("verifying finding {} of {agent}", f.id))?;
            checked[i] = Some((v, f.locations));
        }
        let (mut request, open) = match checker.lookups.take_open() {
            Some((request, open)) => (request, Some(open)),
            None => (ScanRequest::default(), None),
        };
        if round == 0 {
            let mut words: Vec<String> = words_to_look_up(&symbols, &checker.src, &mut present)
                .into_iter()
                .collect();
            if words.len() > MAX_WORDS_LOOKED_UP {
                words.sort_unstable();
                outcome.notes.push(format!(
                    "symbols: {} identifiers to look up, only the first {MAX_WORDS_LOOKED_UP} were",
                    words.len()
                ));
                present.extend(words.split_off(MAX_WORDS_LOOKED_UP));
            }
            request.words = words.into_iter().collect();
        }
        if request.is_empty() {
            break;
        }
        let mut result = scan(&checker.src, &request)?;
        present.extend(std::mem::take(&mut result.words));
        match open {
            Some(open) if round + 1 < MAX_ROUNDS => {
                checker.lookups.answer(&open, &mut result);
                todo = open.askers;
            }
            _ => break,
        }
    }

    record(reviews, checked, symbols, &present, &mut outcome);
    outcome.changed_files = std::mem::take(&mut checker.src.changed);
    Ok(outcome)
}

/// The repository at `head` (and `base`) as verification reads it, with the files the change
/// touches: `changed` when the caller knows them, else git's list between base and head.
fn snapshot(
    ctx: &VerifyContext,
    changed: Option<Vec<ChangedFile>>,
    head: String,
    base: Option<String>,
) -> Result<RepoSnapshot> {
    let mut src = RepoSnapshot::open(&ctx.repo, head.clone(), base.clone())?;
    src.checkout = ctx.checkout.clone();
    src.set_changed(match (changed, &base) {
        (Some(changed), _) => changed,
        (None, Some(base)) => changed_files(&ctx.repo, base, &head).with_context(|| {
            format!(
                "could not list the files changed between {} and {}",
                ctx.base.as_deref().unwrap_or(base),
                ctx.head
            )
        })?,
        (None, None) => Vec::new(),
    });
    Ok(src)
}

/// Puts each finding's verification and corrected locations on it, in the order they were
/// checked, with the identifiers the repository does not have, and counts them.
fn record(
    reviews: &mut [Review],
    checked: Vec<Option<(Verification, Vec<Location>)>>,
    symbols: Vec<Vec<Symbol>>,
    present: &HashSet<String>,
    outcome: &mut VerifyOutcome,
) {
    let mut checked = checked.into_iter();
    let mut symbols = symbols.into_iter();
    for finding in reviews.iter_mut().flat_map(|r| r.findings.iter_mut()) {
        let (Some(Some((mut v, locations))), Some(names)) = (checked.next(), symbols.next()) else {
            continue;
        };
        symbols::record_missing(&mut v, names, present);
        finding.locations = locations;
        outcome.counts.add(&v);
        finding.verification = Some(v);
    }
}

/// The identifier parts the findings name that the files read so far at head do not show
/// (those are added to `present`): what the scan must look for in the rest of the repository.
fn words_to_look_up(
    symbols: &[Vec<Symbol>],
    src: &RepoSnapshot,
    present: &mut HashSet<String>,
) -> HashSet<String> {
    let mut wanted: HashSet<String> = symbols
        .iter()
        .flatten()
        .flat_map(|s| s.parts.iter().cloned())
        .collect();
    if wanted.is_empty() {
        return wanted;
    }
    for text in src.head_texts_read() {
        for line in &text.folded {
            for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                if !word.is_empty() && wanted.remove(word) {
                    present.insert(word.to_string());
                }
            }
        }
        if wanted.is_empty() {
            break;
        }
    }
    wanted
}

/// Marks every finding `unchecked` with `why` (no repository to check against).
pub fn mark_unchecked(reviews: &mut [Review], why: &str) {
    for finding in reviews.iter_mut().flat_map(|r| r.findings.iter_mut()) {
        finding.verification = Some(Verification::unchecked(why));
    }
}
