//! Brief stage: the one prompt every reviewer gets. It describes the change (title, commits,
//! changed files, the exact `git diff` command), carries the repository's context file, states
//! the review rules and the output contract the parser reads.
//!
//! The template is compiled into the binary ([`DEFAULT_TEMPLATE`], a minijinja template) and can
//! be replaced with `--brief-template FILE` or `brief_template` in config; a replacement gets the
//! same variables (see [`BriefContext`]).
//!
//! Three rules hold whatever the change holds:
//!
//! - **within budget**: with [`BriefOptions::budget_tokens`], the commit and file lists are cut
//!   (files by [`relevance`], commits oldest first) so the brief fits, what was cut is named in
//!   the brief with its counts, and [`Brief::warning`] says so to the user ([`fit`]);
//! - **the base steers**: the context file comes from the merge-base ([`context`]);
//! - **material, not instructions**: everything the change's author wrote (title, description,
//!   commit subjects, file names) and the pull request's unresolved review comments stand
//!   between `<change-material>` lines, escaped of control characters and of the marker itself
//!   ([`escape`]).
//!
//! [`pack`] builds the prompt for reviewers that cannot explore the repository (model APIs):
//! the same template, with the change's code packed into it within a token budget.

mod context;
pub mod escape;
mod fit;
pub mod pack;
pub mod relevance;

pub use context::{CONTEXT_FILES, ContextFile, MAX_CONTEXT_BYTES};
pub use pack::{PackOptions, pack};
pub use relevance::Relevance;

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

use crate::types::CommitInfo;
pub use crate::types::brief::estimate_tokens;
use crate::types::{Brief, Target};
use escape::{escape_block, escape_line};

/// The built-in template.
pub const DEFAULT_TEMPLATE: &str = include_str!("default_brief.md");

/// How to build the brief.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BriefOptions {
    /// A template file to use instead of the built-in one.
    pub template: Option<PathBuf>,
    /// Leave the repository's context file out.
    pub no_context: bool,
    /// The most tokens the brief may take (sized to the agent's model by the caller); `None`
    /// for no limit. Lists are cut to fit; see [`Brief::omitted`] and [`Brief::warning`].
    pub budget_tokens: Option<usize>,
    /// The change's earlier rounds, in a later round ([`crate::rounds::brief::material`]).
    pub rounds: Option<RoundsBrief>,
}

/// What a later round's brief says about the rounds before it. Built from earlier reports
/// (text agents wrote about the change): the brief escapes every string of it and shows it as
/// material.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RoundsBrief {
    /// The round this brief starts.
    pub round: u32,
    /// `PR #236`, `branch feat`.
    pub of: String,
    /// The last earlier round that reviewed something.
    pub last_round: u32,
    /// The commit it reviewed (full and short), when it is in the repository.
    pub last_head: Option<String>,
    pub last_head_short: Option<String>,
    /// `git diff <last head> <head>`.
    pub interdiff_command: Option<String>,
    /// The change's files that differ from what the last round reviewed.
    pub interdiff: Vec<InterdiffFile>,
    pub interdiff_total: usize,
    /// Why there is no interdiff, or that it is empty.
    pub interdiff_note: Option<String>,
    /// Earlier findings with the author's decisions, most recent first.
    pub findings: Vec<PriorLine>,
    pub findings_total: usize,
}

/// One file of the interdiff; no counts for a binary file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InterdiffFile {
    pub path: String,
    pub added: Option<u32>,
    pub removed: Option<u32>,
}

/// One earlier finding, as the brief lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PriorLine {
    pub round: u32,
    pub id: String,
    pub title: String,
    pub location: Option<String>,
    /// "Skipped: reason", "Fixed", "no decision recorded".
    pub decision: String,
}

/// Longest title or decision the brief shows of an earlier finding.
const MAX_PRIOR_TEXT: usize = 300;

impl RoundsBrief {
    /// Every string escaped as material ([`escape_line`]) and cut to a bounded length.
    fn escaped(&self) -> RoundsBrief {
        let line = |s: &str| escape_line(&crate::text::truncate_chars(s, MAX_PRIOR_TEXT));
        RoundsBrief {
            of: line(&self.of),
            last_head: self.last_head.as_deref().map(line),
            last_head_short: self.last_head_short.as_deref().map(line),
            interdiff_command: self.interdiff_command.as_deref().map(line),
            interdiff: self
                .interdiff
                .iter()
                .map(|f| InterdiffFile {
                    path: line(&f.path),
                    ..f.clone()
                })
                .collect(),
            interdiff_note: self.interdiff_note.as_deref().map(line),
            findings: self
                .findings
                .iter()
                .map(|f| PriorLine {
                    round: f.round,
                    id: line(&f.id),
                    title: line(&f.title),
                    location: f.location.as_deref().map(line),
                    decision: line(&f.decision),
                })
                .collect(),
            ..self.clone()
        }
    }
}

/// One changed file as the template sees it.
#[derive(Debug, Clone, Serialize)]
pub struct BriefFile {
    /// The path, escaped of control characters ([`escape::escape_line`]).
    pub path: String,
    pub old_path: Option<String>,
    /// `added`, `modified`, `deleted`, `renamed`, `copied`, `type_changed`.
    pub kind: String,
    pub added: u32,
    pub removed: u32,
    pub binary: bool,
    pub submodule: bool,
    /// `source`, `test`, `docs`, `generated`, `lock` or `vendored`: the order of the list.
    pub relevance: Relevance,
}

/// One unresolved review thread of the pull request as the template sees it: every field
/// escaped ([`escape`]), the body as a quote.
#[derive(Debug, Clone, Serialize)]
pub struct BriefThread {
    /// `path:line`, `path`, or `None` for a thread on the pull request as a whole.
    pub location: Option<String>,
    pub author: Option<String>,
    /// The code has changed since the thread was written.
    pub outdated: bool,
    pub replies: usize,
    /// The first comment, each line quoted with `> `.
    pub body: String,
}

/// Unresolved review threads shown in the brief at most; the report lists them all.
pub const MAX_BRIEF_THREADS: usize = 20;
/// The longest thread comment shown in the brief, in characters.
const MAX_THREAD_CHARS: usize = 2_000;

impl BriefThread {
    fn new(t: &crate::types::ReviewThread) -> BriefThread {
        let location = t.path.as_deref().map(|p| match t.line {
            Some(line) => escape_line(&format!("{p}:{line}")),
            None => escape_line(p),
        });
        let mut text: String = t.body.trim().chars().take(MAX_THREAD_CHARS).collect();
        if text.len() < t.body.trim().len() {
            text.push_str(" …(cut)");
        }
        let body = escape_block(&text)
            .lines()
            .map(|l| format!("> {l}").trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n");
        BriefThread {
            location,
            author: t.author.as_deref().map(escape_line),
            outdated: t.outdated,
            replies: t.replies,
            body,
        }
    }
}

/// The pull request or merge request, as the brief names it.
#[derive(Debug, Clone, Serialize)]
pub struct BriefPr {
    pub number: u64,
    /// `#236` or `!42`.
    pub reference: String,
    /// `pull request` or `merge request`.
    pub noun: &'static str,
    pub title: String,
    pub url: Option<String>,
}

/// The variables a brief template can use.
#[derive(Debug, Clone, Serialize)]
pub struct BriefContext {
    pub title: Option<String>,
    pub description: Option<String>,
    pub pr: Option<BriefPr>,
    /// `pull request` or `merge request`: what the change is on its forge (`pull request` for a
    /// branch, where the word does not appear).
    pub request: &'static str,
    pub branch: Option<String>,
    pub author: Option<String>,
    pub base_ref: String,
    pub base: String,
    pub head: String,
    pub head_short: String,
    pub merge_base: String,
    pub merge_base_short: String,
    /// `git diff <merge-base>..<head>` with full shas.
    pub diff_command: String,
    /// The commits shown, oldest first: all of them unless the budget cut the oldest.
    pub commits: Vec<CommitInfo>,
    /// How many commits the change has.
    pub commits_total: usize,
    /// The files shown, most relevant first: all of them unless the budget cut the least
    /// relevant.
    pub files: Vec<BriefFile>,
    /// How many files the change touches.
    pub files_total: usize,
    pub added: u64,
    pub removed: u64,
    pub context: Option<ContextFile>,
    /// The pull request's unresolved review threads shown (people's comments: material to
    /// weigh), oldest first.
    pub threads: Vec<BriefThread>,
    /// How many unresolved threads the pull request has.
    pub threads_total: usize,
    /// What was left out to fit the budget, one sentence each.
    pub omitted: Vec<String>,
    pub budget_tokens: Option<usize>,
    /// The change's code, packed for a reviewer that cannot read the repository ([`pack`]);
    /// `None` in a brief for agents that explore the checkout.
    pub packed: Option<String>,
    /// The earlier rounds, escaped: `None` in a first round.
    pub rounds: Option<RoundsBrief>,
}

impl BriefContext {
    /// The template variables for `target`, with `context` as the project's context file. Text
    /// from the change is escaped; files are in order of relevance.
    pub fn new(target: &Target, context: Option<ContextFile>) -> BriefContext {
        let (added, removed) = target.line_counts();
        let ranked = relevance::order(target.changed_files.iter().map(|f| f.path.as_str()));
        let files: Vec<BriefFile> = ranked
            .into_iter()
            .map(|(i, relevance)| {
                let f = &target.changed_files[i];
                BriefFile {
                    path: escape_line(&f.path),
                    old_path: f.old_path.as_deref().map(escape_line),
                    kind: serde_json::to_value(f.kind)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    added: f.added,
                    removed: f.removed,
                    binary: f.binary,
                    submodule: f.submodule,
                    relevance,
                }
            })
            .collect();
        let commits: Vec<CommitInfo> = target
            .commits
            .iter()
            .map(|c| CommitInfo {
                sha: escape_line(&c.sha),
                subject: escape_line(&c.subject),
            })
            .collect();
        BriefContext {
            title: target.title().map(|t| escape_line(&t)),
            description: target
                .description
                .as_deref()
                .filter(|d| !d.trim().is_empty())
                .map(escape_block),
            pr: target.pr.as_ref().map(|pr| BriefPr {
                number: pr.number,
                reference: pr.reference(),
                noun: pr.kind.noun(),
                title: escape_line(&pr.title),
                url: pr.url.as_deref().map(escape_line),
            }),
            request: target
                .pr
                .as_ref()
                .map_or("pull request", |pr| pr.kind.noun()),
            branch: target.branch.as_deref().map(escape_line),
            author: target.author.as_deref().map(escape_line),
            base_ref: escape_line(&target.base_ref),
            base: target.base.clone(),
            head: target.head.clone(),
            head_short: short(&target.head),
            merge_base: target.merge_base.clone(),
            merge_base_short: short(&target.merge_base),
            diff_command: target.diff_command(),
            commits_total: commits.len(),
            commits,
            files_total: files.len(),
            files,
            added,
            removed,
            context,
            threads: target
                .review_threads
                .iter()
                .take(MAX_BRIEF_THREADS)
                .map(BriefThread::new)
                .collect(),
            threads_total: target.review_threads.len(),
            omitted: Vec::new(),
            budget_tokens: None,
            packed: None,
            rounds: None,
        }
    }
}

fn short(sha: &str) -> String {
    sha.chars().take(12).collect()
}

/// Builds the brief for `target`, within `opts.budget_tokens` when set.
pub fn build(target: &Target, opts: &BriefOptions) -> anyhow::Result<Brief> {
    let (context, context_note) = if opts.no_context {
        (None, None)
    } else {
        context::find(target)?
    };
    let context_path = context.as_ref().map(|c| c.path.clone());
    let context_from_base = context_note.is_some();
    let mut vars = BriefContext::new(target, context);
    vars.budget_tokens = opts.budget_tokens;
    vars.rounds = opts.rounds.as_ref().map(RoundsBrief::escaped);
    let (source, name) = template_source(opts.template.as_deref())?;
    let fitted = fit::fit(vars, opts.budget_tokens, &|v| render(&source, &name, v))?;
    let mut brief = Brief::new(fitted.text, context_path, opts.template.clone());
    brief.budget_tokens = opts.budget_tokens;
    brief.full_tokens = fitted.full_tokens;
    brief.omitted = fitted.omitted;
    brief.warning = fitted.warning;
    brief.context_from_base = context_from_base;
    brief.context_note = context_note;
    Ok(brief)
}

/// The template's text and how errors name it.
pub(crate) fn template_source(template: Option<&Path>) -> anyhow::Result<(String, String)> {
    Ok(match template {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| {
                format!("cannot read the brief template {}: check `--brief-template` or `brief_template` in config", path.display())
            })?;
            (text, path.display().to_string())
        }
        None => (
            DEFAULT_TEMPLATE.to_string(),
            "built-in brief template".to_string(),
        ),
    })
}

/// Renders template `source` (named `name` in errors) with `vars`. Unknown variables are errors,
/// so a typo in a custom template is caught instead of leaving a hole in every prompt.
pub fn render(source: &str, name: &str, vars: &BriefContext) -> anyhow::Result<String> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    let syntax = minijinja::syntax::SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(true)
        .build()?;
    env.set_syntax(syntax);
    let where_ = |e: &minijinja::Error| match e.line() {
        Some(line) => format!("{name} line {line}"),
        None => name.to_string(),
    };
    env.add_template_owned(name.to_string(), source.to_string())
        .map_err(|e| anyhow::anyhow!("{}: {}", where_(&e), e.detail().unwrap_or(&e.to_string())))?;
    let tmpl = env
        .get_template(name)
        .map_err(|e| anyhow::anyhow!("{}: {e}", where_(&e)))?;
    tmpl.render(minijinja::value::Serde(vars)).map_err(|e| {
        anyhow::anyhow!(
            "{}: {}: a brief template can use title, description, pr, request, branch, author, base_ref, \
             base, head, head_short, merge_base, merge_base_short, diff_command, commits, \
             commits_total, files, files_total, added, removed, context, threads, \
             threads_total, omitted, budget_tokens, packed and rounds",
            where_(&e),
            e.detail()
                .map(str::to_string)
                .unwrap_or_else(|| e.kind().to_string())
        )
    })
}

/// Where the brief template comes from: the command line wins over config.
pub fn template_path(cli: Option<&Path>, config: Option<&Path>) -> Option<PathBuf> {
    cli.or(config).map(Path::to_path_buf)
}
