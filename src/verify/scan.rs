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

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use anyhow::{Context, Result};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use super::history;
use super::quote::{FileText, Quote, fold};
use super::source::RepoSnapshot;
use super::stream::{Blobs, FileRef, search_in_order};
use crate::types::Hunk;

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
    let mut state = Scan::new(request);
    let blobs = src.blobs();
    let changed_phase = !request.quotes.is_empty() || !request.added.is_empty();
    if changed_phase {
        let files: Vec<Visit<'_>> = src
            .readable_changed()
            .filter_map(|c| {
                let entry = src.head_entry(&c.path)?;
                Some(Visit {
                    file: FileRef {
                        path: &c.path,
                        oid: &entry.oid,
                        mode: &entry.mode,
                    },
                    paths: vec![c.path.clone()],
                    hunks: Some(c.hunks.as_slice()),
                })
            })
            .collect();
        state
            .phase(blobs, &files, true)
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
        let mut files: Vec<Visit<'_>> = Vec::new();
        let mut by_oid: HashMap<&str, usize> = HashMap::new();
        for (path, entry) in src.head_entries() {
            if skip.contains(path) {
                continue;
            }
            match by_oid.get(entry.oid.as_str()) {
                Some(&at) => files[at].paths.push(path.to_string()),
                None => {
                    by_oid.insert(&entry.oid, files.len());
                    files.push(Visit {
                        file: FileRef {
                            path,
                            oid: &entry.oid,
                            mode: &entry.mode,
                        },
                        paths: vec![path.to_string()],
                        hunks: None,
                    });
                }
            }
        }
        state
            .phase(blobs, &files, false)
            .context("could not read the files at head")?;
    }
    Ok(state.result)
}

/// One file of a phase: what to read, every path of that blob, and the change's hunks in it.
struct Visit<'a> {
    file: FileRef<'a>,
    paths: Vec<String>,
    hunks: Option<&'a [Hunk]>,
}

/// What one pattern of the automaton stands for.
struct Pattern {
    text: String,
    /// An identifier looked for as a whole word.
    word: bool,
    /// The quote jobs it is a needle of.
    jobs: Vec<usize>,
    /// Part of a key of the added-lines search: a changed file without any such pattern is not
    /// split into lines for it.
    added: bool,
}

/// The automaton of the patterns still wanted: built again with fewer as names are found, so
/// a name found once costs nothing in the files after (a common one is in every file).
struct Searcher {
    matcher: AhoCorasick,
    /// The pattern (index into [`State::patterns`]) of each of the automaton's.
    ids: Vec<usize>,
}

/// Up to this many bytes of patterns, the search is a DFA: one table lookup per byte, where the
/// crate's own choice past 100 patterns, a contiguous NFA, follows failure links (on the shared
/// generator's tree, 424 patterns of 10 kB: the automaton's time down by about 40%). Its table
/// has at most one state per pattern byte, each of at most 256 four-byte transitions, so it
/// stays under 16 MB (4.5 MB there).
const DFA_PATTERN_BYTES: usize = 16 * 1024;

impl Searcher {
    fn build(patterns: &[Pattern], live: impl Iterator<Item = usize>) -> Result<Option<Searcher>> {
        let ids: Vec<usize> = live.collect();
        if ids.is_empty() {
            return Ok(None);
        }
        // A DFA while its table is small, else the crate's choice, a compact NFA (a review
        // naming 100,000 identifiers must not build a DFA of hundreds of megabytes).
        let bytes: usize = ids.iter().map(|&p| patterns[p].text.len()).sum();
        let dfa = bytes <= DFA_PATTERN_BYTES;
        let matcher = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .kind(dfa.then_some(AhoCorasickKind::DFA))
            .build(ids.iter().map(|&p| patterns[p].text.as_bytes()))
            .context("could not build the search of identifiers and quotes")?;
        Ok(Some(Searcher { matcher, ids }))
    }
}

/// What one file holds, found by a worker: applied in file order by [`Scan::apply`].
#[derive(Default)]
struct FileHits {
    /// Identifier patterns found as whole words.
    words: Vec<usize>,
    /// Quote jobs held, with the first place in the file.
    quotes: Vec<(usize, (u32, u32))>,
    /// Added-lines keys, with the head line, in line order.
    added: Vec<(String, u32)>,
}

/// What a scan looks for, shared with the workers: the patterns, and which of them are done
/// (set by the thread that applies answers, read by the workers to skip work).
struct Wanted<'r> {
    request: &'r ScanRequest,
    /// Every pattern once: the identifiers, then the added-lines keys' parts, then the quotes'
    /// needles.
    patterns: Vec<Pattern>,
    /// Per pattern: an identifier found as a whole word.
    found: Vec<AtomicBool>,
    /// Per quote job: enough files found.
    satisfied: Vec<AtomicBool>,
}

/// The scan in progress: what is wanted and what was found, in file order.
struct Scan<'r> {
    wanted: Wanted<'r>,
    words_wanted: usize,
    words_found: usize,
    /// Patterns that stopped being wanted since the automaton was last built.
    retired: usize,
    result: ScanResult,
}

/// Build the automaton again once this many of its patterns (and at least half) are no longer
/// wanted: each build costs about one pass over a few files.
const REBUILD_AFTER: usize = 16;

impl<'r> Wanted<'r> {
    fn new(request: &'r ScanRequest) -> Self {
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
                word: true,
                jobs: Vec::new(),
                added: false,
            });
        }
        let mut intern = |text: String, patterns: &mut Vec<Pattern>| -> usize {
            *index.entry(text.clone()).or_insert_with(|| {
                patterns.push(Pattern {
                    text,
                    word: false,
                    jobs: Vec::new(),
                    added: false,
                });
                patterns.len() - 1
            })
        };
        // The added-lines keys by their longest whitespace-free part (a name is its own).
        let mut added: Vec<&String> = request.added.iter().collect();
        added.sort_unstable();
        for key in added {
            if let Some(token) = key.split_whitespace().max_by_key(|t| t.len()) {
                let at = intern(token.to_string(), &mut patterns);
                patterns[at].added = true;
            }
        }
        let mut satisfied = Vec::with_capacity(request.quotes.len());
        for (j, job) in request.quotes.iter().enumerate() {
            let needles = job.quote.needles();
            // A quote with no needle worth a search is not looked for beyond its files.
            satisfied.push(AtomicBool::new(needles.is_empty()));
            for needle in needles {
                let at = intern(needle, &mut patterns);
                if !patterns[at].jobs.contains(&j) {
                    patterns[at].jobs.push(j);
                }
            }
        }
        Wanted {
            request,
            found: (0..patterns.len())
                .map(|_| AtomicBool::new(false))
                .collect(),
            patterns,
            satisfied,
        }
    }

    fn is_found(&self, p: usize) -> bool {
        self.found[p].load(Ordering::Relaxed)
    }

    fn is_satisfied(&self, job: usize) -> bool {
        self.satisfied[job].load(Ordering::Relaxed)
    }

    /// Whether quote job `j` is still looked for in this phase.
    fn job_wanted(&self, j: usize, changed: bool) -> bool {
        !self.is_satisfied(j) && (changed || self.request.quotes[j].scope == Scope::ChangedThenTree)
    }

    /// Whether pattern `p` still has something to find in this phase.
    fn pattern_wanted(&self, p: usize, changed: bool) -> bool {
        let pattern = &self.patterns[p];
        (pattern.word && !self.is_found(p))
            || (pattern.added && changed)
            || pattern.jobs.iter().any(|&j| self.job_wanted(j, changed))
    }

    /// The automaton of the patterns still wanted in this phase.
    fn searcher(&self, changed: bool) -> Result<Option<Searcher>> {
        Searcher::build(
            &self.patterns,
            (0..self.patterns.len()).filter(|&p| self.pattern_wanted(p, changed)),
        )
    }

    /// Searches one file (a worker's part): one pass of the automaton over its bytes, then
    /// the quotes whose needles it holds, then (in a changed file holding a part of a key)
    /// its added lines.
    fn search(
        &self,
        searcher: &Searcher,
        bytes: &[u8],
        changed: bool,
        hunks: Option<&[Hunk]>,
    ) -> FileHits {
        let mut hits = FileHits::default();
        if bytes[..bytes.len().min(8000)].contains(&0) {
            return hits; // binary
        }
        let mut jobs: Vec<usize> = Vec::new();
        let mut needles_seen: HashSet<usize> = HashSet::new();
        // The names found whole in this file, so each is listed once however often it recurs.
        let mut words_seen: HashSet<usize> = HashSet::new();
        let mut holds_added = false;
        for m in searcher.matcher.find_overlapping_iter(bytes) {
            let p = searcher.ids[m.pattern().as_usize()];
            let pattern = &self.patterns[p];
            holds_added |= pattern.added;
            if pattern.word && !self.is_found(p) && !words_seen.contains(&p) {
                let before = m.start().checked_sub(1).map(|i| bytes[i]);
                let after = bytes.get(m.end()).copied();
                if !before.is_some_and(is_word_byte)
                    && !after.is_some_and(is_word_byte)
                    && words_seen.insert(p)
                {
                    hits.words.push(p);
                }
            }
            // One sighting per file is enough for the quotes it is a needle of.
            if pattern.jobs.is_empty() || !needles_seen.insert(p) {
                continue;
            }
            jobs.extend(
                pattern
                    .jobs
                    .iter()
                    .copied()
                    .filter(|&j| self.job_wanted(j, changed)),
            );
        }
        jobs.sort_unstable();
        jobs.dedup();
        if !jobs.is_empty() {
            let text = FileText::new(&String::from_utf8_lossy(bytes));
            for j in jobs {
                if let Some(span) = self.request.quotes[j].quote.find_in(&text).first() {
                    hits.quotes.push((j, *span));
                }
            }
        }
        if let Some(hunks) = hunks
            && holds_added
        {
            hits.added = added_lines(&self.request.added, bytes, hunks);
        }
        hits
    }
}

impl<'r> Scan<'r> {
    fn new(request: &'r ScanRequest) -> Self {
        let wanted = Wanted::new(request);
        Scan {
            words_wanted: wanted.patterns.iter().filter(|p| p.word).count(),
            words_found: 0,
            retired: 0,
            result: ScanResult {
                quotes: vec![Vec::new(); request.quotes.len()],
                ..ScanResult::default()
            },
            wanted,
        }
    }

    /// Whether nothing is left to look for: in the changed files (`changed`), or in the tree.
    fn done(&self, changed: bool) -> bool {
        all_found(
            &self.wanted,
            self.words_found,
            self.words_wanted,
            &self.result,
            changed,
        )
    }

    /// Searches `files` on every core and applies what each holds in file order, until
    /// nothing is left to look for in this phase.
    fn phase(&mut self, blobs: Blobs<'_>, files: &[Visit<'_>], changed: bool) -> Result<()> {
        if files.is_empty() || self.done(changed) {
            return Ok(());
        }
        let searcher = RwLock::new(Arc::new(self.wanted.searcher(changed)?));
        let refs: Vec<FileRef<'_>> = files.iter().map(|v| v.file).collect();
        self.retired = 0;
        let mut failed = None;
        let Scan {
            wanted,
            words_wanted,
            words_found,
            retired,
            result,
        } = self;
        let wanted: &Wanted<'_> = wanted;
        let mut progress = Progress {
            wanted,
            words_wanted: *words_wanted,
            words_found,
            retired,
            result,
        };
        search_in_order(
            blobs,
            &refs,
            |i, bytes| {
                let current = searcher.read().map(|s| Arc::clone(&s));
                match current.as_deref() {
                    Ok(Some(s)) => wanted.search(s, bytes, changed, files[i].hunks),
                    _ => FileHits::default(),
                }
            },
            |i, hits| {
                let Some(hits) = hits else { return true };
                progress.apply(&files[i].paths, hits);
                if progress.done(changed) {
                    return false;
                }
                let live = searcher
                    .read()
                    .map_or(0, |s| s.as_ref().as_ref().map_or(0, |s| s.ids.len()));
                if *progress.retired >= REBUILD_AFTER && *progress.retired * 2 >= live {
                    *progress.retired = 0;
                    match progress.wanted.searcher(changed) {
                        Ok(s) => {
                            if let Ok(mut current) = searcher.write() {
                                *current = Arc::new(s);
                            }
                        }
                        Err(e) => {
                            failed = Some(e);
                            return false;
                        }
                    }
                }
                true
            },
        )?;
        failed.map_or(Ok(()), Err)
    }
}

/// The applying side of a phase: this thread's counters and results beside the shared
/// [`Wanted`].
struct Progress<'a, 'r> {
    wanted: &'a Wanted<'r>,
    words_wanted: usize,
    words_found: &'a mut usize,
    retired: &'a mut usize,
    result: &'a mut ScanResult,
}

impl Progress<'_, '_> {
    /// Takes what one file (known by `paths`, several when identical files share the blob)
    /// holds, in file order: the first files found are the same on any number of cores.
    fn apply(&mut self, paths: &[String], hits: FileHits) {
        let wanted = self.wanted;
        self.result.files_read += 1;
        for p in hits.words {
            if !wanted.found[p].swap(true, Ordering::Relaxed) {
                *self.words_found += 1;
                self.result.words.insert(wanted.patterns[p].text.clone());
                *self.retired += usize::from(wanted.patterns[p].jobs.is_empty());
            }
        }
        for (j, span) in hits.quotes {
            if wanted.is_satisfied(j) {
                continue;
            }
            let job = &wanted.request.quotes[j];
            let places = &mut self.result.quotes[j];
            for path in paths {
                if places.len() < job.want && !job.exclude.contains(path) {
                    places.push((path.clone(), span));
                }
            }
            if places.len() >= job.want {
                wanted.satisfied[j].store(true, Ordering::Relaxed);
                *self.retired += 1;
            }
        }
        for (key, line) in hits.added {
            self.result
                .added
                .entry(key)
                .or_insert_with(|| (paths[0].clone(), line));
        }
    }

    fn done(&self, changed: bool) -> bool {
        all_found(
            self.wanted,
            *self.words_found,
            self.words_wanted,
            self.result,
            changed,
        )
    }
}

/// Whether nothing is left to look for: in the changed files (`changed`), or in the tree.
fn all_found(
    wanted: &Wanted<'_>,
    words_found: usize,
    words_wanted: usize,
    result: &ScanResult,
    changed: bool,
) -> bool {
    let request = wanted.request;
    let words_done = words_found == words_wanted;
    let quotes_done = request.quotes.iter().enumerate().all(|(j, job)| {
        wanted.is_satisfied(j)
            || (!changed && (job.scope == Scope::Changed || !result.quotes[j].is_empty()))
    });
    let added_done = !changed || result.added.len() == request.added.len();
    words_done && quotes_done && added_done
}

/// Where the change first adds each requested identifier or line in one file, in line order:
/// only the added lines of the file are decoded and folded.
fn added_lines(wanted: &HashSet<String>, bytes: &[u8], hunks: &[Hunk]) -> Vec<(String, u32)> {
    let mut out: Vec<(String, u32)> = Vec::new();
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
        if wanted.contains(folded.as_str()) {
            out.push((folded.clone(), line));
        }
        for word in folded
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| w.len() > 2)
        {
            if wanted.contains(word) {
                out.push((word.to_string(), line));
            }
        }
    }
    out
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}
