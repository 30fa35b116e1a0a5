//! The repository as verification reads it: the head tree, the changed files, and file contents
//! read once each through one `git cat-file --batch` and kept for every finding that cites them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use anyhow::Result;

use super::coverage::paths_match;
use super::git::{self, CatFile, TreeEntry};
use super::objects::ObjectStore;
use super::quote::FileText;
use super::stream::Blobs;
use crate::types::{ChangeKind, ChangedFile};

/// A file's content at one commit.
#[derive(Debug)]
pub enum Content {
    Text(FileText),
    /// Binary content (a NUL byte in its first 8000 bytes, git's own test): never quote-matched.
    Binary,
    /// Not a blob at that commit.
    Missing,
}

/// Which commit a read is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Head,
    Base,
}

/// Where a cited path leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A file at head, by its full path.
    Head(String),
    /// A file the change deleted: its path at the merge-base.
    Deleted(String),
    /// More than one file fits a bare or partial name.
    Ambiguous(Vec<String>),
    Missing,
}

/// A cited path resolved, with what was done to get there ("renamed by the change: a → b").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    pub resolved: Resolved,
    pub note: Option<String>,
}

/// The repository at head (and the merge-base), with a cache of file contents.
pub struct RepoSnapshot {
    pub repo: PathBuf,
    pub head: String,
    pub base: Option<String>,
    tree: HashMap<String, TreeEntry>,
    /// Tree paths by file name, for bare names.
    by_name: HashMap<String, Vec<String>>,
    /// The changed files; set with [`RepoSnapshot::set_changed`], which indexes them.
    pub changed: Vec<ChangedFile>,
    /// Index into `changed` by head path (a deletion by its old path).
    changed_by_path: HashMap<String, usize>,
    /// Indices into `changed` by file name, of the head path and of a rename's old path.
    changed_by_name: HashMap<String, Vec<usize>>,
    cat: CatFile,
    cache: HashMap<(Side, String), Rc<Content>>,
    /// A checkout of head that deep-review made and no agent could write, to read many files
    /// from ([`super::stream`]): each is used only when it hashes to its blob id.
    pub checkout: Option<PathBuf>,
    /// The object store searches read in process, looked for at the first search.
    objects: std::cell::OnceCell<Option<ObjectStore>>,
}

impl RepoSnapshot {
    /// Lists the head tree and starts the one `cat-file` process; `head` and `base` are commit ids.
    pub fn open(repo: &Path, head: String, base: Option<String>) -> Result<Self> {
        let tree = git::list_tree(repo, &head)?;
        let mut by_name: HashMap<String, Vec<String>> = HashMap::new();
        for path in tree.keys() {
            let name = path.rsplit('/').next().unwrap_or(path);
            by_name
                .entry(name.to_string())
                .or_default()
                .push(path.clone());
        }
        for paths in by_name.values_mut() {
            paths.sort();
        }
        Ok(RepoSnapshot {
            repo: repo.to_path_buf(),
            head,
            base,
            tree,
            by_name,
            changed: Vec::new(),
            changed_by_path: HashMap::new(),
            changed_by_name: HashMap::new(),
            cat: CatFile::start(repo)?,
            cache: HashMap::new(),
            checkout: None,
            objects: std::cell::OnceCell::new(),
        })
    }

    /// Sets the changed files and indexes them, so asking about one costs a lookup.
    pub fn set_changed(&mut self, changed: Vec<ChangedFile>) {
        self.changed_by_path.clear();
        self.changed_by_name.clear();
        for (i, c) in changed.iter().enumerate() {
            self.changed_by_path.entry(c.path.clone()).or_insert(i);
            for p in std::iter::once(&c.path).chain(c.old_path.as_ref()) {
                let name = p.rsplit('/').next().unwrap_or(p);
                let at = self.changed_by_name.entry(name.to_string()).or_default();
                if at.last() != Some(&i) {
                    at.push(i);
                }
            }
        }
        self.changed = changed;
    }

    /// Whether `path` is a changed file's head path or a rename's or deletion's old path.
    pub fn is_changed_path(&self, path: &str) -> bool {
        self.changed_by_path.contains_key(path)
            || self
                .changed_by_name
                .get(path.rsplit('/').next().unwrap_or(path))
                .is_some_and(|at| {
                    at.iter()
                        .any(|&i| self.changed[i].old_path.as_deref() == Some(path))
                })
    }

    /// The tree entry of `path` at head (not for a submodule).
    pub fn head_entry(&self, path: &str) -> Option<&TreeEntry> {
        self.tree.get(path).filter(|e| !e.is_submodule())
    }

    /// Every file at head with its tree entry, in path order (submodules left out).
    pub fn head_entries(&self) -> Vec<(&str, &TreeEntry)> {
        let mut files: Vec<(&str, &TreeEntry)> = self
            .tree
            .iter()
            .filter(|(_, e)| !e.is_submodule())
            .map(|(p, e)| (p.as_str(), e))
            .collect();
        files.sort_unstable_by(|a, b| a.0.cmp(b.0));
        files
    }

    /// Where a search of many files reads them: the checkout of head deep-review made, when
    /// there is one, else git.
    pub fn blobs(&self) -> Blobs<'_> {
        match &self.checkout {
            Some(dir) => Blobs::Checkout {
                dir,
                repo: &self.repo,
            },
            None => Blobs::Git {
                repo: &self.repo,
                store: self
                    .objects
                    .get_or_init(|| ObjectStore::of(&self.repo))
                    .as_ref(),
            },
        }
    }

    /// The text files read so far at head.
    pub fn head_texts_read(&self) -> impl Iterator<Item = &FileText> {
        self.cache.iter().filter_map(|((side, _), c)| match &**c {
            Content::Text(t) if *side == Side::Head => Some(t),
            _ => None,
        })
    }

    pub fn exists_at_head(&self, path: &str) -> bool {
        self.tree.contains_key(path)
    }

    /// Whether `path` names a file or a file name in the head tree (so it is not a symbol).
    pub fn is_file_name(&self, path: &str) -> bool {
        self.tree.contains_key(path) || self.by_name.contains_key(path)
    }

    /// The changed files a search reads (to find a quote's file, or what the change added):
    /// text files present at head.
    pub fn readable_changed(&self) -> impl Iterator<Item = &ChangedFile> {
        self.changed.iter().filter(|c| {
            c.kind != ChangeKind::Deleted
                && !c.binary
                && !c.submodule
                && self.head_entry(&c.path).is_some()
        })
    }

    /// The changed file whose head path (or, for a deletion, base path) is `path`.
    pub fn changed_file(&self, path: &str) -> Option<&ChangedFile> {
        self.changed_by_path.get(path).map(|&i| &self.changed[i])
    }

    /// The content of `path` at head or at the merge-base, read once.
    pub fn content(&mut self, side: Side, path: &str) -> Result<Rc<Content>> {
        let key = (side, path.to_string());
        if let Some(c) = self.cache.get(&key) {
            return Ok(Rc::clone(c));
        }
        let bytes = match self.spec(side, path) {
            Some(spec) => self.cat.read(&spec)?,
            None => None,
        };
        let content = Rc::new(to_content(bytes));
        self.cache.insert(key, Rc::clone(&content));
        Ok(content)
    }

    /// Reads every file of `wanted` not read yet, in one pass through `cat-file`.
    pub fn prefetch(&mut self, wanted: impl IntoIterator<Item = (Side, String)>) -> Result<()> {
        let mut keys: Vec<(Side, String)> = Vec::new();
        let mut asked: std::collections::HashSet<(Side, String)> = Default::default();
        let mut specs: Vec<String> = Vec::new();
        for key in wanted {
            if self.cache.contains_key(&key) || !asked.insert(key.clone()) {
                continue;
            }
            match self.spec(key.0, &key.1) {
                Some(spec) => {
                    specs.push(spec);
                    keys.push(key);
                }
                None => {
                    self.cache.insert(key, Rc::new(Content::Missing));
                }
            }
        }
        let answers = self.cat.read_many(&specs)?;
        for (key, bytes) in keys.into_iter().zip(answers) {
            self.cache.insert(key, Rc::new(to_content(bytes)));
        }
        Ok(())
    }

    /// What to ask `cat-file` for: the blob id at head (from the tree), `base:path` at the base.
    fn spec(&self, side: Side, path: &str) -> Option<String> {
        match side {
            Side::Head => match self.tree.get(path) {
                Some(entry) if !entry.is_submodule() => Some(entry.oid.clone()),
                _ => None,
            },
            Side::Base => self.base.as_ref().map(|b| format!("{b}:{path}")),
        }
    }

    /// Resolves a cited path: the file at head, following a rename or a deletion by the change,
    /// then a bare or partial name to the one changed file (else the one tree file) it names.
    pub fn resolve(&self, cited: &str) -> Resolution {
        let cleaned = clean_path(cited, &self.repo);
        let mut candidates = vec![cleaned.clone()];
        // `a/src/x.rs` and `b/src/x.rs` as copied from a diff header.
        for prefix in ["a/", "b/"] {
            if let Some(rest) = cleaned.strip_prefix(prefix) {
                candidates.push(rest.to_string());
            }
        }
        for path in &candidates {
            if let Some(r) = self.resolve_exact(path) {
                return r;
            }
        }
        self.resolve_suffix(&cleaned)
    }

    fn resolve_exact(&self, path: &str) -> Option<Resolution> {
        if self.tree.contains_key(path) {
            return Some(Resolution {
                resolved: Resolved::Head(path.to_string()),
                note: None,
            });
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        let same_name = self
            .changed_by_name
            .get(name)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        if let Some(renamed) = same_name
            .iter()
            .map(|&i| &self.changed[i])
            .find(|c| c.kind == ChangeKind::Renamed && c.old_path.as_deref() == Some(path))
        {
            return Some(Resolution {
                resolved: Resolved::Head(renamed.path.clone()),
                note: Some(format!("renamed by the change: {path} → {}", renamed.path)),
            });
        }
        if self
            .changed_file(path)
            .is_some_and(|c| c.kind == ChangeKind::Deleted)
        {
            return Some(Resolution {
                resolved: Resolved::Deleted(path.to_string()),
                note: Some(format!(
                    "{path} was deleted by the change; checked at the merge-base"
                )),
            });
        }
        None
    }

    fn resolve_suffix(&self, cited: &str) -> Resolution {
        if cited.is_empty() {
            return Resolution {
                resolved: Resolved::Missing,
                note: Some("empty path".to_string()),
            };
        }
        // First the changed files (their head paths, and the base paths of renames).
        let mut hits: Vec<String> = Vec::new();
        let mut renamed_from: Option<String> = None;
        let name = cited.rsplit('/').next().unwrap_or(cited);
        let same_name = self
            .changed_by_name
            .get(name)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        for c in same_name.iter().map(|&i| &self.changed[i]) {
            let by_old = c.kind == ChangeKind::Renamed
                && c.old_path
                    .as_deref()
                    .is_some_and(|old| paths_match(cited, old));
            if (paths_match(cited, &c.path) || by_old) && !hits.contains(&c.path) {
                hits.push(c.path.clone());
                if by_old && !paths_match(cited, &c.path) {
                    renamed_from = c.old_path.clone();
                }
            }
        }
        if hits.is_empty()
            && let Some(paths) = self.by_name.get(name)
        {
            hits = paths
                .iter()
                .filter(|p| paths_match(cited, p))
                .cloned()
                .collect();
        }
        match hits.len() {
            0 => Resolution {
                resolved: Resolved::Missing,
                note: Some(format!("{cited} does not exist at head")),
            },
            1 => {
                let path = hits.remove(0);
                match self.resolve_exact(&path) {
                    Some(Resolution {
                        resolved: Resolved::Deleted(p),
                        note,
                    }) => Resolution {
                        resolved: Resolved::Deleted(p),
                        note,
                    },
                    _ => Resolution {
                        note: renamed_from
                            .map(|old| format!("renamed by the change: {old} → {path}")),
                        resolved: Resolved::Head(path),
                    },
                }
            }
            _ => {
                hits.sort();
                Resolution {
                    note: Some(format!(
                        "{cited} is ambiguous: {} files of that name ({})",
                        hits.len(),
                        super::check::short_list(&hits)
                    )),
                    resolved: Resolved::Ambiguous(hits),
                }
            }
        }
    }
}

/// Bytes as verification sees them: text, binary (a NUL byte in the first 8000 bytes, git's
/// own test) or missing.
fn to_content(bytes: Option<Vec<u8>>) -> Content {
    match bytes {
        None => Content::Missing,
        Some(b) if b.iter().take(8000).any(|x| *x == 0) => Content::Binary,
        Some(b) => Content::Text(FileText::new(&String::from_utf8_lossy(&b))),
    }
}

/// A cited path as a repository path: no backticks, no `./` or leading `/`, no absolute prefix
/// of the repository itself.
fn clean_path(cited: &str, repo: &Path) -> String {
    let mut p = cited.trim().trim_matches('`').trim().replace('\\', "/");
    let repo_prefix = format!("{}/", repo.display());
    if let Some(rest) = p.strip_prefix(&repo_prefix) {
        p = rest.to_string();
    }
    while let Some(rest) = p.strip_prefix("./") {
        p = rest.to_string();
    }
    p.trim_start_matches('/').to_string()
}
