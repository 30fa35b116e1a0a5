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
}

impl Brief {
    pub fn new(text: String, context_file: Option<String>, template: Option<PathBuf>) -> Brief {
        let bytes = text.len();
        Brief {
            estimated_tokens: estimate_tokens(bytes),
            text,
            bytes,
            context_file,
            template,
        }
    }
}

/// Tokens for `bytes` of text, at four bytes a token, rounded up.
pub fn estimate_tokens(bytes: usize) -> usize {
    bytes.div_ceil(4)
}
