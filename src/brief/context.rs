//! The repository's own context file for reviewers: `deep-review-context.md` at the top level,
//! else `.deep-review/context.md`. (AGENTS.md and CLAUDE.md are read by the agents themselves.)

use std::path::Path;

use crate::git::git_probe;

/// Where the context file may live, first found wins.
pub const CONTEXT_FILES: &[&str] = &["deep-review-context.md", ".deep-review/context.md"];

/// More than this is cut, with a note: the brief goes to every agent on every run.
pub const MAX_CONTEXT_BYTES: usize = 64 * 1024;

/// A context file and its text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ContextFile {
    /// The path relative to the repository root.
    pub path: String,
    pub text: String,
}

/// Reads the context file as committed at `head` (what the reviewers see in their checkout),
/// else from the working tree (a file kept locally, uncommitted).
pub fn find(repo: &Path, head: &str) -> anyhow::Result<Option<ContextFile>> {
    for rel in CONTEXT_FILES {
        let spec = format!("{head}:{rel}");
        let text = match git_probe(repo, &["cat-file", "blob", &spec]) {
            Some(t) => t,
            None => match std::fs::read(repo.join(rel)) {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => anyhow::bail!(
                    "cannot read the context file {}: {e}",
                    repo.join(rel).display()
                ),
            },
        };
        return Ok(Some(ContextFile {
            path: rel.to_string(),
            text: truncate(text),
        }));
    }
    Ok(None)
}

fn truncate(mut text: String) -> String {
    if text.len() <= MAX_CONTEXT_BYTES {
        return text.trim_end().to_string();
    }
    let mut cut = MAX_CONTEXT_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text.push_str("\n\n[... cut at 64 KiB: read the rest in the file itself]");
    text
}
