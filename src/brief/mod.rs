//! Brief stage: the one prompt every reviewer gets. It describes the change (title, commits,
//! changed files, the exact `git diff` command), carries the repository's context file, states
//! the review rules and the output contract the parser reads.
//!
//! The template is compiled into the binary ([`DEFAULT_TEMPLATE`], a minijinja template) and can
//! be replaced with `--brief-template FILE` or `brief_template` in config; a replacement gets the
//! same variables (see [`BriefContext`]).

mod context;

pub use context::{CONTEXT_FILES, ContextFile, MAX_CONTEXT_BYTES};

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

pub use crate::types::brief::estimate_tokens;
use crate::types::{Brief, Target};
use crate::types::{CommitInfo, PrInfo};

/// The built-in template.
pub const DEFAULT_TEMPLATE: &str = include_str!("default_brief.md");

/// How to build the brief.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BriefOptions {
    /// A template file to use instead of the built-in one.
    pub template: Option<PathBuf>,
    /// Leave the repository's context file out.
    pub no_context: bool,
}

/// One changed file as the template sees it.
#[derive(Debug, Clone, Serialize)]
pub struct BriefFile {
    pub path: String,
    pub old_path: Option<String>,
    /// `added`, `modified`, `deleted`, `renamed`, `copied`, `type_changed`.
    pub kind: String,
    pub added: u32,
    pub removed: u32,
    pub binary: bool,
    pub submodule: bool,
}

/// The variables a brief template can use.
#[derive(Debug, Clone, Serialize)]
pub struct BriefContext {
    pub title: Option<String>,
    pub description: Option<String>,
    pub pr: Option<PrInfo>,
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
    pub commits: Vec<CommitInfo>,
    pub files: Vec<BriefFile>,
    pub added: u64,
    pub removed: u64,
    pub context: Option<ContextFile>,
}

impl BriefContext {
    /// The template variables for `target`, with `context` as the project's context file.
    pub fn new(target: &Target, context: Option<ContextFile>) -> BriefContext {
        let (added, removed) = target.line_counts();
        let files = target
            .changed_files
            .iter()
            .map(|f| BriefFile {
                path: f.path.clone(),
                old_path: f.old_path.clone(),
                kind: serde_json::to_value(f.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                added: f.added,
                removed: f.removed,
                binary: f.binary,
                submodule: f.submodule,
            })
            .collect();
        BriefContext {
            title: target.title(),
            description: target.description.clone().filter(|d| !d.trim().is_empty()),
            pr: target.pr.clone(),
            branch: target.branch.clone(),
            author: target.author.clone(),
            base_ref: target.base_ref.clone(),
            base: target.base.clone(),
            head: target.head.clone(),
            head_short: short(&target.head),
            merge_base: target.merge_base.clone(),
            merge_base_short: short(&target.merge_base),
            diff_command: target.diff_command(),
            commits: target.commits.clone(),
            files,
            added,
            removed,
            context,
        }
    }
}

fn short(sha: &str) -> String {
    sha.chars().take(12).collect()
}

/// Builds the brief for `target`.
pub fn build(target: &Target, opts: &BriefOptions) -> anyhow::Result<Brief> {
    let context = if opts.no_context {
        None
    } else {
        context::find(&target.repo, &target.head)?
    };
    let context_path = context.as_ref().map(|c| c.path.clone());
    let vars = BriefContext::new(target, context);
    let (source, name) = match &opts.template {
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
    };
    let text = render(&source, &name, &vars)?;
    Ok(Brief::new(text, context_path, opts.template.clone()))
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
            "{}: {}: a brief template can use title, description, pr, branch, author, base_ref, \
             base, head, head_short, merge_base, merge_base_short, diff_command, commits, files, \
             added, removed and context",
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
