//! One pass over many files for everything the findings ask beyond the files they cite: which
//! identifiers exist anywhere at head, which files hold a quote whose cited file was wrong, and
//! where the change adds a name or a line.
//!
//! The changed files are read first (streamed, never kept), then, only when something is still
//! unanswered, the rest of the tree. Each file is searched for every identifier and every
//! quote's needles at once (two Aho-Corasick automata over its bytes); only a file that holds a
//! quote's needle is split into lines and matched against that quote. So the cost is one read
//! of the files needed, whatever the number of findings, and nothing is read when the findings
//! ask nothing.

use std::collections::{HashMap, HashSet};

use aho_corasick::{AhoCorasick, MatchKind};
use anyhow::{Context, Result};

use super::git::for_each_blob;
use super::history;
use super::quote::{FileText, Quote, fold};
use super::source::RepoSnapshot;

/// Where a quote may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The changed files only.
    Changed,
    /// The changed files, then (when none holds it) the rest of the tree.
    ChangedThenTree,
}

/// One quote to locate.
#[derive(Debug, Clone)]
pub struct QuoteJob {
    pub quote: Quote,
    pub scope: Scope,
    /// Paths that do not count (the files the finding cites, already searched).
    pub exclude: Vec<String>,
    /// Stop after this many files hold it.
    pub want: usize,
}

/// What one scan looks for.
#[derive(Debug, Default)]
pub struct ScanRequest {
    /// Identifiers to find as whole words in any file at head.
    pub words: HashSet<String>,
    pub quotes: Vec<QuoteJob>,
    /// Identifiers and folded lines to find among the lines the change added.
    pub added: HashSet<String>,
}

impl ScanRequest {
    pub fn is_empty(&self) -> bool {
        self.words.is_empty() && self.quotes.is_empty() && self.added.is_empty()
    }
}

/// What one scan found.
#[derive(Debug, Default)]
pub struct ScanResult {
    /// The words of the request found somewhere.
    pub words: HashSet<String>,
    /// Per quote job (same order): the files holding it, with the first place in each.
    pub quotes: Vec<Vec<(String, (u32, u32))>>,
    /// Per key of `added` found: where the change first adds it (path, head line).
    pub added: HashMap<String, (String, u32)>,
    /// How many files were read.
    pub files_read: usize,
}

/// Runs `request` over the changed files and, when needed, the rest of the tree at head.
pub fn scan(src: &RepoSnapshot, request: &ScanRequest) -> Result<ScanResult> {
    let mut state = State::new(request)?;
    let changed_phase = !request.quotes.is_empty() || !request.added.is_empty();
    if changed_phase {
        let files: Vec<(String, &str)> = src
            .readable_changed()
            .filter_map(|c| Some((c.path.clone(), src.head_oid(&c.path)?)))
            .collect();
        let oids: Vec<&str> = files.iter().map(|(_, oid)| *oid).collect();
        for_each_blob(&src.repo, &oids, |i, blob| {
            if let Some(bytes) = blob {
                let path = &files[i].0;
                let hunks = src.changed_file(path).map(|c| c.hunks.as_slice());
                state.visit(std::slice::from_ref(path), bytes, true, hunks);
            }
            !state.done(true)
        })
        .context("could not read the changed files")?;
    }
    if !state.done(false) {
        // The rest of the tree, in path order (so the first file found is the same every run),
        // each distinct blob once.
        let skip: HashSet<&str> = if changed_phase {
            src.changed.iter().map(|c| c.path.as_str()).collect()
        } else {
            HashSet::new()
        };
        let mut by_oid: HashMap<&str, Vec<String>> = HashMap::new();
        let mut oids: Vec<&str> = Vec::new();
        for (path, oid) in src.head_files() {
            if skip.contains(path) {
                continue;
            }
            let paths = by_oid.entry(oid).or_default();
            if paths.is_empty() {
                oids.push(oid);
            }
            paths.push(path.to_string());
        }
        for_each_blob(&src.repo, &oids, |i, blob| {
            if let Some(bytes) = blob {
                state.visit(&by_oid[oids[i]], bytes, false, None);
            }
            !state.done(false)
        })
        .context("could not read the files at head")?;
    }
    Ok(state.result)
}

/// The scan in progress.
struct State<'r> {
    request: &'r ScanRequest,
    /// Every pattern once: the identifiers, then the quotes' needles.
    patterns: Vec<Pattern>,
    /// One automaton for all patterns, searched for every match (overlapping), so one pass over
    /// a file answers everything.
    matcher: Option<AhoCorasick>,
    words_wanted: usize,
    words_found: usize,
    /// Quote jobs with enough files found.
    satisfied: Vec<bool>,
    /// Per pattern, the number of the last file it was seen in (so a needle found a million
    /// times in one file costs its jobs once), and the files visited.
    seen_in: Vec<usize>,
    files: usize,
    result: ScanResult,
}

/// What one pattern of the automaton stands for.
struct Pattern {
    text: String,
    /// An identifier looked for as a whole word; `Some(found)`.
    word: Option<bool>,
    /// The quote jobs it is a needle of.
    jobs: Vec<usize>,
    /// Part of a key of the added-lines search: a changed file without any such pattern is not
    /// split into lines for it.
    added: bool,
}

impl<'r> State<'r> {
    fn new(request: &'r ScanRequest) -> Result<Self> {
        let mut patterns: Vec<Pattern> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut words: Vec<&String> = request
            .words
            .iter()
            .filter(|w| !w.is_empty() && w.bytes().all(is_word_byte))
            .collect();
        words.sort_unstable();
        for w in &words {
            index.insert((*w).clone(), patterns.len());
            patterns.push(Pattern {
                text: (*w).clone(),
                word: Some(false),
                jobs: Vec::new(),
                added: false,
            });
        }
        // The added-lines keys by their longest whitespace-free part (a name is its own).
        for key in &request.added {
            let Some(token) = key.split_whitespace().max_by_key(|t| t.len()) else {
                continue;
            };
            let at = *index.entry(token.to_string()).or_insert_with(|| {
                patterns.push(Pattern {
                    text: token.to_string(),
                    word: None,
                    jobs: Vec::new(),
                    added: false,
                });
                patterns.len() - 1
            });
            patterns[at].added = true;
        }
        let mut satisfied = Vec::with_capacity(request.quotes.len());
        for (j, job) in request.quotes.iter().enumerate() {
            let needles = job.quote.needles();
            // A quote with no needle worth a search is not looked for beyond its files.
            satisfied.push(needles.is_empty());
            for needle in needles {
                let at = *index.entry(needle.clone()).or_insert_with(|| {
                    patterns.push(Pattern {
                        text: needle,
                        word: None,
                        jobs: Vec::new(),
                        added: false,
                    });
                    patterns.len() - 1
                });
                if !patterns[at].jobs.contains(&j) {
                    patterns[at].jobs.push(j);
                }
            }
        }
        let matcher = (!patterns.is_empty())
            .then(|| {
                // The crate picks a DFA for few patterns and a compact NFA for many (a review
                // naming 100,000 identifiers must not build a DFA of hundreds of megabytes).
                AhoCorasick::builder()
                    .match_kind(MatchKind::Standard)
                    .build(patterns.iter().map(|p| p.text.as_bytes()))
            })
            .transpose()
            .context("could not build the search of identifiers and quotes")?;
        Ok(State {
            request,
            seen_in: vec![usize::MAX; patterns.len()],
            files: 0,
            words_wanted: words.len(),
            words_found: 0,
            patterns,
            matcher,
            satisfied,
            result: ScanResult {
                quotes: vec![Vec::new(); request.quotes.len()],
                ..ScanResult::default()
            },
        })
    }

    /// Whether nothing is left to look for: in the changed files (`changed`), or in the tree.
    fn done(&self, changed: bool) -> bool {
        let words_done = self.words_found == self.words_wanted;
        let quotes_done = self.request.quotes.iter().enumerate().all(|(j, job)| {
            self.satisfied[j]
                || (!changed && (job.scope == Scope::Changed || !self.result.quotes[j].is_empty()))
        });
        let added_done = !changed || self.result.added.len() == self.request.added.len();
        words_done && quotes_done && added_done
    }

    /// Searches one file (known by `paths`, several when identical files share the blob).
    fn visit(
        &mut self,
        paths: &[String],
        bytes: &[u8],
        changed: bool,
        hunks: Option<&[crate::types::Hunk]>,
    ) {
        self.result.files_read += 1;
        if bytes[..bytes.len().min(8000)].contains(&0) {
            return; // binary
        }
        let (jobs, added) = self.search(bytes, changed);
        self.match_quotes(&jobs, paths, bytes);
        if let Some(hunks) = hunks
            && added
        {
            self.find_added(&paths[0], bytes, hunks);
        }
    }

    /// One pass of the automaton over the file: marks the identifiers found as whole words and
    /// returns the quote jobs whose needles it holds (and that still want a file), and whether
    /// it holds a part of an added-lines key.
    fn search(&mut self, bytes: &[u8], changed: bool) -> (Vec<usize>, bool) {
        let mut jobs: Vec<usize> = Vec::new();
        let mut added = false;
        let Some(matcher) = &self.matcher else {
            return (jobs, added);
        };
        self.files += 1;
        for m in matcher.find_overlapping_iter(bytes) {
            let p = m.pattern().as_usize();
            let pattern = &mut self.patterns[p];
            added |= pattern.added;
            if pattern.word == Some(false) {
                let before = m.start().checked_sub(1).map(|i| bytes[i]);
                let after = bytes.get(m.end()).copied();
                if !before.is_some_and(is_word_byte) && !after.is_some_and(is_word_byte) {
                    pattern.word = Some(true);
                    self.words_found += 1;
                    self.result.words.insert(pattern.text.clone());
                }
            }
            if self.seen_in[p] == self.files {
                continue;
            }
            if pattern.word != Some(false) {
                // Whole-word checks aside, one sighting per file is enough.
                self.seen_in[p] = self.files;
            }
            for &j in &pattern.jobs {
                let job = &self.request.quotes[j];
                let wanted = !self.satisfied[j] && (changed || job.scope == Scope::ChangedThenTree);
                if wanted {
                    jobs.push(j);
                }
            }
        }
        jobs.sort_unstable();
        jobs.dedup();
        (jobs, added)
    }

    /// Matches the quotes of `jobs` against the file.
    fn match_quotes(&mut self, jobs: &[usize], paths: &[String], bytes: &[u8]) {
        if jobs.is_empty() {
            return;
        }
        let text = FileText::new(&String::from_utf8_lossy(bytes));
        for &j in jobs {
            let job = &self.request.quotes[j];
            let Some(span) = job.quote.find_in(&text).first().copied() else {
                continue;
            };
            let places = &mut self.result.quotes[j];
            for path in paths {
                if places.len() < job.want && !job.exclude.contains(path) {
                    places.push((path.clone(), span));
                }
            }
            if places.len() >= job.want {
                self.satisfied[j] = true;
            }
        }
    }

    /// Records where the change first adds each requested identifier or line: only the added
    /// lines of the file are decoded and folded.
    fn find_added(&mut self, path: &str, bytes: &[u8], hunks: &[crate::types::Hunk]) {
        let mut ranges = history::added_ranges(hunks).peekable();
        for (i, raw) in bytes.split(|b| *b == b'\n').enumerate() {
            let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
            while ranges.peek().is_some_and(|(_, e)| *e < line) {
                ranges.next();
            }
            let Some((s, _)) = ranges.peek() else {
                break;
            };
            if line < *s {
                continue;
            }
            let folded = fold(&String::from_utf8_lossy(raw));
            if self.request.added.contains(folded.as_str()) {
                self.result
                    .added
                    .entry(folded.clone())
                    .or_insert_with(|| (path.to_string(), line));
            }
            for word in folded
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| w.len() > 2)
            {
                if self.request.added.contains(word) && !self.result.added.contains_key(word) {
                    self.result
                        .added
                        .insert(word.to_string(), (path.to_string(), line));
                }
            }
        }
    }
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}
