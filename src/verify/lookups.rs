//! Questions a finding's check asks beyond the files it cites ("which changed file holds this
//! quote?", "does the change add a call to `f`?"), collected over all findings and answered
//! together by one [`scan`](super::scan) instead of one search each.
//!
//! A check that asks a question not answered yet gets "nothing found" and is marked to run
//! again; the stage runs the checks, then one scan for everything they asked, then the checks
//! that asked, until no question is open (a check asks at most a few questions, each once).

use std::collections::{HashMap, HashSet};

use super::quote::Quote;
use super::scan::{QuoteJob, ScanRequest, ScanResult, Scope};

/// Where a quote is looked for beyond the cited files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Search {
    /// The cited file does not exist: the changed files, then the tree; the first file found.
    Anywhere,
    /// The quote is not in the cited file: the other changed files (two are enough to know
    /// whether exactly one holds it).
    OtherChangedFiles,
}

/// A place a quote was found: path and 1-based line range.
pub type Place = (String, (u32, u32));

/// The questions and answers of one verify run.
#[derive(Debug, Default)]
pub struct Lookups {
    places: HashMap<(usize, Search), Vec<Place>>,
    /// Identifiers and folded lines the change adds, with where first; only keys in
    /// `added_searched` are known.
    added: HashMap<String, (String, u32)>,
    added_searched: HashSet<String>,
    open_quotes: Vec<((usize, Search), QuoteJob)>,
    open_added: HashSet<String>,
    /// Findings (by index) that asked a question not answered yet.
    askers: HashSet<usize>,
}

impl Lookups {
    /// Where `quote` is, for finding `finding`: the answer, or nothing yet (the question is
    /// recorded).
    pub fn quote_places(
        &mut self,
        finding: usize,
        search: Search,
        quote: &Quote,
        cited: &[String],
    ) -> Vec<Place> {
        if let Some(places) = self.places.get(&(finding, search)) {
            return places.clone();
        }
        let job = match search {
            Search::Anywhere => QuoteJob {
                quote: quote.clone(),
                scope: Scope::ChangedThenTree,
                exclude: Vec::new(),
                want: 1,
            },
            Search::OtherChangedFiles => QuoteJob {
                quote: quote.clone(),
                scope: Scope::Changed,
                exclude: cited.to_vec(),
                want: 2,
            },
        };
        self.open_quotes.push(((finding, search), job));
        self.askers.insert(finding);
        Vec::new()
    }

    /// Where the change first adds each of `keys` (identifiers, folded lines), for finding
    /// `finding`: `None` when not searched yet (the question is recorded).
    pub fn added(
        &mut self,
        finding: usize,
        keys: &[String],
    ) -> Option<&HashMap<String, (String, u32)>> {
        let open: Vec<&String> = keys
            .iter()
            .filter(|k| !self.added_searched.contains(*k))
            .collect();
        if open.is_empty() {
            return Some(&self.added);
        }
        self.open_added.extend(open.into_iter().cloned());
        self.askers.insert(finding);
        None
    }

    /// The open questions as one scan request, with the findings that asked them; `None` when
    /// nothing is open.
    pub fn take_open(&mut self) -> Option<(ScanRequest, OpenQuestions)> {
        if self.open_quotes.is_empty() && self.open_added.is_empty() {
            self.askers.clear();
            return None;
        }
        let (keys, quotes): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.open_quotes).into_iter().unzip();
        let added = std::mem::take(&mut self.open_added);
        let mut askers: Vec<usize> = std::mem::take(&mut self.askers).into_iter().collect();
        askers.sort_unstable();
        let request = ScanRequest {
            words: HashSet::new(),
            quotes,
            added: added.clone(),
        };
        Some((
            request,
            OpenQuestions {
                quote_keys: keys,
                added,
                askers,
            },
        ))
    }

    /// Records the answers of a scan of `open`'s questions.
    pub fn answer(&mut self, open: &OpenQuestions, result: &mut ScanResult) {
        for (key, places) in open
            .quote_keys
            .iter()
            .zip(std::mem::take(&mut result.quotes))
        {
            self.places.insert(*key, places);
        }
        for key in &open.added {
            if let Some(at) = result.added.remove(key) {
                self.added.insert(key.clone(), at);
            }
            self.added_searched.insert(key.clone());
        }
    }
}

/// The questions one scan answers.
#[derive(Debug)]
pub struct OpenQuestions {
    quote_keys: Vec<(usize, Search)>,
    added: HashSet<String>,
    /// The findings to check again once answered, by index, in order.
    pub askers: Vec<usize>,
}
