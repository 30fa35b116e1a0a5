//! The brief: the one prompt every reviewer gets, as built by the brief stage.

use std::path::PathBuf;

use serde::Serialize;

/// The prompt, and how big it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Brief {
    pub text: String,
    pub bytes: usize,
    /// About one token per four bytes, the usual rate for English and code: a guide to cost and
    /// to context-window limits, not a tokenizer's count.
    pub estimated_tokens: usize,
    /// The context file included, relative to the repository root.
    pub context_file: Option<String>,
    /// The template file used, `None` for the built-in one.
    pub template: Option<PathBuf>,
    /// The token budget the brief was fitted to, `None` when it had none.
    pub budget_tokens: Option<usize>,
    /// What the brief would have taken with nothing left out (equal to `estimated_tokens` when
    /// nothing was): what `--dry-run` shows next to the budget.
    pub full_tokens: usize,
    /// What was left out to stay within the budget, one sentence each; the brief's text names
    /// the same things so the reviewer knows what it was not shown.
    pub omitted: Vec<String>,
    /// One sentence for the user when the change did not fit the budget (the caller prints it).
    pub warning: Option<String>,
    /// The context file was read at the merge-base because the change adds, edits or removes
    /// one: the change's own version does not steer its review.
    pub context_from_base: bool,
    /// What the report says about the context file when the change touched it.
    pub context_note: Option<String>,
}

impl Brief {
    pub fn new(text: String, context_file: Option<String>, template: Option<PathBuf>) -> Brief {
        let bytes = text.len();
        let estimated_tokens = estimate_tokens(bytes);
        Brief {
            estimated_tokens,
            text,
            bytes,
            context_file,
            template,
            budget_tokens: None,
            full_tokens: estimated_tokens,
            omitted: Vec::new(),
            warning: None,
            context_from_base: false,
            context_note: None,
        }
    }
}

/// Tokens for `bytes` of text, at four bytes a token, rounded up.
pub fn estimate_tokens(bytes: usize) -> usize {
    bytes.div_ceil(4)
}
