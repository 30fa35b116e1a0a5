//! Is an earlier finding's code still there? Read from commits through git (`ls-tree`,
//! `cat-file`), never from the working tree, so what the user has half-edited in the checkout
//! cannot decide whether a decline still holds or a finding was fixed.
//!
//! A finding's code is its quote, matched the way verification matches it (whitespace folded,
//! elisions as gaps, anywhere in the file, so a line shift is not a change). A finding that
//! quotes nothing but cites lines is compared by the text of those lines at its own round's
//! head. A finding with neither cannot be compared.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{History, PriorFinding};
use crate::types::{CodeSnippet, Location};
use crate::verify::coverage::paths_match;
use crate::verify::git::{CatFile, TreeEntry, list_tree};
use crate::verify::quote::{FileText, Quote};

/// Where an earlier finding's code stands at a head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeState {
    /// Its code is found in its file at that head (maybe at other lines).
    Present,
    /// Its file is gone, or its code is not in it any more.
    Changed,
    /// It quotes no code and cites no lines that can be read: nothing to compare.
    Unknown,
}

/// Lines of a cited range longer than this are not compared (a range over a whole file says
/// where, not what).
const MAX_CITED_LINES: u32 = 60;

/// Reads files of any commit of one repository, each tree and blob once.
pub struct CodeReader {
    repo: PathBuf,
    cat: CatFile,
    trees: HashMap<String, HashMap<String, TreeEntry>>,
    blobs: HashMap<String, Option<FileText>>,
}

impl CodeReader {
    pub fn open(repo: &Path) -> Result<CodeReader> {
        Ok(CodeReader {
            repo: repo.to_path_buf(),
            cat: CatFile::start(repo)?,
            trees: HashMap::new(),
            blobs: HashMap::new(),
        })
    }

    /// The file `path` names at `rev`: the path itself, else the one file whose path ends with
    /// it (reviewers cite `app.go` for `pkg/app.go`).
    fn file(&mut self, rev: &str, path: &str) -> Result<Option<&FileText>> {
        if !self.trees.contains_key(rev) {
            let tree = list_tree(&self.repo, rev)?;
            self.trees.insert(rev.to_string(), tree);
        }
        let tree = &self.trees[rev];
        let entry = match tree.get(path.trim_start_matches("./")) {
            Some(e) => Some(e),
            None => {
                let mut matches = tree.iter().filter(|(p, _)| paths_match(p, path));
                match (matches.next(), matches.next()) {
                    (Some((_, e)), None) => Some(e),
                    _ => None,
                }
            }
        };
        let Some(entry) = entry.filter(|e| !e.is_submodule()) else {
            return Ok(None);
        };
        let oid = entry.oid.clone();
        if !self.blobs.contains_key(&oid) {
            let text = self
                .cat
                .read(&oid)?
                .map(|b: Vec<u8>| FileText::new(&String::from_utf8_lossy(&b)));
            self.blobs.insert(oid.clone(), text);
        }
        Ok(self.blobs[&oid].as_ref())
    }

    /// Whether the code of a finding (its quote, else the lines it cited at `its_head`) is in its
    /// file at `head`.
    pub fn state(
        &mut self,
        head: &str,
        locations: &[Location],
        code: Option<&CodeSnippet>,
        its_head: Option<&str>,
    ) -> Result<CodeState> {
        let Some(loc) = locations.first() else {
            return Ok(CodeState::Unknown);
        };
        // A quote that was not in the code even at its own round's head says nothing about now.
        let mut quote = code.and_then(|c| Quote::parse(&c.code));
        if let (Some(q), Some(then)) = (&quote, its_head)
            && !self.found(then, locations, q)?
        {
            quote = None;
        }
        let quote = match quote {
            Some(q) => q,
            None => match (its_head, loc.start, loc.end_line()) {
                (Some(then), Some(s), Some(e)) if e - s < MAX_CITED_LINES => {
                    let Some(file) = self.file(then, &loc.path)? else {
                        return Ok(CodeState::Unknown);
                    };
                    let cited: Vec<&str> = file
                        .lines
                        .iter()
                        .skip(s as usize - 1)
                        .take((e - s + 1) as usize)
                        .map(String::as_str)
                        .collect();
                    match Quote::parse(&cited.join("\n")) {
                        Some(q) => q,
                        None => return Ok(CodeState::Unknown),
                    }
                }
                _ => return Ok(CodeState::Unknown),
            },
        };
        Ok(if self.found(head, locations, &quote)? {
            CodeState::Present
        } else {
            CodeState::Changed
        })
    }

    /// Whether `quote` is in a file `locations` name at `rev`: the file where it was, else any
    /// other it names (a finding may cite several).
    pub fn found(&mut self, rev: &str, locations: &[Location], quote: &Quote) -> Result<bool> {
        for l in locations {
            if let Some(file) = self.file(rev, &l.path)?
                && !quote.find_in(file).is_empty()
            {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// Marks every earlier finding the author declined with whether its code changed between its
/// round's head and `head`; returns what could not be checked, one sentence each.
pub fn mark_changes(history: &mut History, repo: &Path, head: &str) -> Vec<String> {
    let mut reader = match CodeReader::open(repo) {
        Ok(r) => r,
        Err(err) => {
            return vec![format!(
                "whether declined findings' code changed was not checked: {err:#}"
            )];
        }
    };
    let mut warnings = Vec::new();
    for round in &mut history.rounds {
        // A rewritten history may have dropped the commit an earlier round reviewed: then only
        // the quotes can tell.
        let its_head = round.head.clone().filter(|h| {
            crate::git::git_probe(repo, &["cat-file", "-e", &format!("{h}^{{commit}}")]).is_some()
        });
        for f in &mut round.findings {
            if !f.action.as_ref().is_some_and(|a| a.declines()) {
                continue;
            }
            f.code_changed = match code_changed(&mut reader, head, f, its_head.as_deref()) {
                Ok(changed) => changed,
                Err(err) => {
                    warnings.push(format!(
                        "round {} {}: whether its code changed was not checked: {err:#}",
                        f.round, f.id
                    ));
                    None
                }
            };
        }
    }
    warnings
}

fn code_changed(
    reader: &mut CodeReader,
    head: &str,
    f: &PriorFinding,
    its_head: Option<&str>,
) -> Result<Option<bool>> {
    Ok(
        match reader.state(head, &f.locations, f.code.as_ref(), its_head)? {
            CodeState::Present => Some(false),
            CodeState::Changed => Some(true),
            CodeState::Unknown => None,
        },
    )
}
