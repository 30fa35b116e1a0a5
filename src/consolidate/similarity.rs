//! How alike two findings are, from what they say and where they point.
//!
//! Reviewers describe one defect in different words, so plain string distance is weak. What they
//! share is more telling: the file and lines, the quoted code, the identifiers in backticks, the
//! rarer words of the text. Each is scored on its own and combined into one number in 0..1.

use std::collections::BTreeSet;

use super::FastMap;

use crate::types::{Finding, Location};
use crate::verify::coverage::paths_match;

/// Words too common in reviews to say anything about which defect is meant.
const STOPWORDS: &[&str] = &[
    "the", "and", "for", "that", "this", "with", "from", "are", "was", "were", "but", "not", "any",
    "can", "will", "when", "which", "should", "would", "could", "into", "then", "than", "there",
    "their", "they", "them", "its", "has", "have", "had", "been", "being", "also", "only", "does",
    "doesn", "isn", "aren", "don", "won", "what", "where", "while", "because", "since", "all",
    "each", "other", "more", "most", "some", "such", "these", "those", "one", "two", "via", "per",
    "use", "used", "uses", "using", "code", "line", "lines", "file", "files", "fix", "issue",
    "instead", "here", "just", "like", "may", "might", "must", "need", "needs", "new", "now",
    "out", "over", "same", "see", "still", "way", "even", "both", "after", "before", "about",
    "make", "makes", "made", "call", "calls", "called", "value", "values", "return", "returns",
];

/// The parts of a finding that similarity looks at, computed once per finding.
#[derive(Debug, Clone, Default)]
pub struct FindingProfile {
    /// Lower-case word tokens of title, explanation and code, with identifiers split into parts;
    /// empty once a [`Corpus`] has interned them.
    pub tokens: Tokens,
    /// Identifiers quoted in backticks in title and explanation, lower case.
    pub identifiers: BTreeSet<String>,
    /// The tokens of those identifiers (whole and split): where the finding points, not what it
    /// claims (see [`PairEvidence::text_evidence`]).
    pub named: BTreeSet<String>,
    /// Quoted code lines with whitespace folded, without trivial lines (braces, `...`).
    pub quote_lines: BTreeSet<String>,
    pub locations: Vec<Location>,
}

impl FindingProfile {
    pub fn of(finding: &Finding) -> Self {
        // The title says what the defect is: it counts twice.
        let mut tokens = Tokens::default();
        tokenize_into(&finding.title, &mut tokens);
        tokens.repeat();
        tokenize_into(&finding.explanation, &mut tokens);
        let quote_lines: BTreeSet<String> = finding
            .code
            .as_ref()
            .map(|c| {
                c.code
                    .lines()
                    .map(fold_whitespace)
                    .filter(|l| is_meaningful_code_line(l))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(code) = &finding.code {
            tokenize_into(&code.code, &mut tokens);
        }
        let mut written = backticked_as_written(&finding.title);
        written.extend(backticked_as_written(&finding.explanation));
        let identifiers: BTreeSet<String> = written.iter().map(|s| s.to_lowercase()).collect();
        let named: BTreeSet<String> = written.iter().flat_map(|i| tokenize(i)).collect();
        FindingProfile {
            tokens,
            named,
            identifiers,
            quote_lines,
            locations: finding.locations.clone(),
        }
    }
}

/// A finding's word tokens in one buffer: a profile holds a hundred or more, and a `String`
/// each made the profiles most of consolidation's allocations and a third of its memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tokens {
    text: String,
    /// Where each token ends in `text`; it starts where the one before ends.
    ends: Vec<usize>,
}

impl Tokens {
    pub fn push(&mut self, token: &str) {
        self.text.push_str(token);
        self.ends.push(self.text.len());
    }

    /// Appends a copy of every token there is (a title counts twice).
    fn repeat(&mut self) {
        let (len, count) = (self.text.len(), self.ends.len());
        self.text.extend_from_within(..len);
        for i in 0..count {
            self.ends.push(len + self.ends[i]);
        }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.text[start..end])
    }
}

/// How the locations of two findings relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocationRelation {
    /// Same file, overlapping line ranges.
    Overlap,
    /// Same file, ranges within [`NEAR_LINES`] of each other.
    Near,
    /// Same file, far apart or without lines.
    SameFile,
    /// Both have locations and share no file.
    Different,
    /// At least one has no location.
    Unknown,
}

/// Line distance under which two ranges in one file count as near.
pub const NEAR_LINES: u32 = 15;

pub fn location_relation(a: &[Location], b: &[Location]) -> LocationRelation {
    if a.is_empty() || b.is_empty() {
        return LocationRelation::Unknown;
    }
    let mut best = LocationRelation::Different;
    for la in a {
        for lb in b {
            if !paths_match(&la.path, &lb.path) {
                continue;
            }
            let rel = match (la.start, la.end_line(), lb.start, lb.end_line()) {
                (Some(s1), Some(e1), Some(s2), Some(e2)) => {
                    if s1 <= e2 && s2 <= e1 {
                        LocationRelation::Overlap
                    } else {
                        let gap = if e1 < s2 { s2 - e1 } else { s1 - e2 };
                        if gap <= NEAR_LINES {
                            LocationRelation::Near
                        } else {
                            LocationRelation::SameFile
                        }
                    }
                }
                _ => LocationRelation::SameFile,
            };
            best = stronger(best, rel);
        }
    }
    best
}

fn stronger(a: LocationRelation, b: LocationRelation) -> LocationRelation {
    use LocationRelation::*;
    let rank = |r| match r {
        Overlap => 4,
        Near => 3,
        SameFile => 2,
        Unknown => 1,
        Different => 0,
    };
    if rank(b) > rank(a) { b } else { a }
}

/// The evidence that two findings name the same defect, each part in 0..1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairEvidence {
    /// TF-IDF cosine of all the words (title, body, quoted code).
    pub text: f64,
    /// The same without the words of the identifiers each finding names: what it claims.
    pub claim: f64,
    pub identifiers: f64,
    pub quote: f64,
    pub location: LocationRelation,
    /// How specific the shared place is to one defect, in 0..1 ([`specificity`] of the findings
    /// that start on the same line): a line that more findings cite than there are agents holds
    /// several defects, so sharing it says less. 1 when the place is not shared.
    pub place_specificity: f64,
}

/// The TF-IDF cosine at which two findings' texts count as saying the same thing in full, when
/// text is all there is to compare.
///
/// Two reviewers who describe one defect share its rare words (the function, the error, the
/// field) but little else: on independently written findings the cosine of such a pair is
/// typically 0.2 to 0.4, and it rarely exceeds 0.5 unless one text copies the other. Scaling the
/// cosine by this value makes a text-only pair at cosine 0.2 reach the merge threshold of
/// [`cluster`](super::cluster) (0.3).
pub const TEXT_FULL: f64 = 0.4;

/// Weight of the scaled text when neither finding has a location.
const TEXT_ONLY_WEIGHT: f64 = 0.6;

/// How much a shared place strengthens the text evidence of a pair: overlapping lines half as
/// much again, lines within [`NEAR_LINES`] a third, the same file a tenth.
///
/// A factor, not a term: a place is evidence that two findings name one defect only together
/// with text that says so (the words, identifiers or quoted code). Different defects often sit in
/// the same lines; with no text in common, the same lines alone never merge them.
pub fn location_factor(relation: LocationRelation) -> f64 {
    match relation {
        LocationRelation::Overlap => 1.5,
        LocationRelation::Near => 1.3,
        LocationRelation::SameFile => 1.1,
        LocationRelation::Unknown | LocationRelation::Different => 1.0,
    }
}

/// The largest [`location_factor`]: what the text evidence of a pair must reach, times this, for
/// the pair to be able to merge at all.
pub const MAX_LOCATION_FACTOR: f64 = 1.5;

/// What findings in different files lose: they are almost never one defect.
const DIFFERENT_FILES: f64 = 0.3;

impl PairEvidence {
    /// The text evidence, in 0..1: what the words claim, strengthened (up to twice) by shared
    /// identifiers and quoted code.
    ///
    /// Without a location on both sides (benchmark data, a finding about the change as a whole),
    /// all words count, on the scale of reworded text ([`TEXT_FULL`]). When both findings point
    /// at code, the identifiers they name say where, like the location, so their words are left
    /// out of the claim (two defects of one function must not read alike for naming it), and
    /// the claim is read on a scale [`MAX_LOCATION_FACTOR`] times stricter: overlapping lines
    /// bring a located pair back to exactly the text-only scale, never past it, and a pair
    /// farther apart needs more words in common. Shared identifiers and quoted lines confirm a
    /// claim; they never make one, so they add at most what the words give.
    pub fn text_evidence(&self) -> f64 {
        let (cosine, full) = match self.location {
            LocationRelation::Unknown => (self.text, TEXT_FULL),
            _ => (self.claim, TEXT_FULL * MAX_LOCATION_FACTOR),
        };
        let words = TEXT_ONLY_WEIGHT * (cosine / full).min(1.0);
        let pointers = 0.2 * self.identifiers + 0.2 * self.quote;
        (words + pointers.min(words)).clamp(0.0, 1.0)
    }

    /// One number in 0..1: the text evidence, strengthened by a shared place
    /// ([`location_factor`]) or weakened by different files.
    pub fn score(&self) -> f64 {
        let text = self.text_evidence();
        let s = match self.location {
            LocationRelation::Different => text - DIFFERENT_FILES,
            relation => text * (1.0 + (location_factor(relation) - 1.0) * self.place_specificity),
        };
        s.clamp(0.0, 1.0)
    }
}

/// The findings of one consolidation, prepared once: tokens, identifiers and quoted lines are
/// interned to integers and weighted, so that scoring a pair is a few merges of sorted integer
/// lists rather than string comparisons and hash look-ups.
#[derive(Debug, Clone)]
pub struct Corpus {
    pub profiles: Vec<FindingProfile>,
    /// The agent of each finding.
    pub agents: Vec<usize>,
    vectors: Vec<SparseVector>,
    /// The vectors without the words of the identifiers each finding names.
    claims: Vec<SparseVector>,
    /// Per finding: the interned file name of each location, beside `profiles[i].locations`.
    file_names: Vec<Vec<u32>>,
    /// Per finding, sorted by id.
    identifiers: Vec<Vec<Term>>,
    quotes: Vec<Vec<Term>>,
    keys: Vec<Vec<u64>>,
    /// How many distinct words and identifiers the findings hold: the length of a dense row.
    vocabulary: usize,
    /// Per finding: the [`specificity`] of its most specific cited start line, by how many
    /// findings start on that line of that file.
    place_specificity: Vec<f64>,
}

/// A sparse vector over interned ids, sorted by id.
#[derive(Debug, Clone, Default)]
struct SparseVector(Vec<(u32, f64)>);

/// A dot product summed in four partial sums, each term to the one its position in the second
/// vector's list names (position mod 4), the four added pairwise at the end. One running sum
/// made every addition wait for the one before (four cycles each): scoring pairs, most of a
/// large consolidation, was bound by that chain, not by reading the weights. Both ways of
/// taking a product ([`SparseVector::dot`], by merging two lists, and
/// [`SparseVector::dot_dense`], against a spread row) sum the same terms in the same lanes in
/// the same order, so they agree to the bit.
#[derive(Debug, Clone, Copy, Default)]
struct Lanes([f64; 4]);

impl Lanes {
    fn add(&mut self, position: usize, part: f64) {
        self.0[position % 4] += part;
    }

    fn total(self) -> f64 {
        let [a, b, c, d] = self.0;
        (a + b) + (c + d)
    }
}

impl SparseVector {
    /// Walks the two sorted lists once, calling `f` with the position in `other` and both
    /// weights of each shared id.
    fn shared(&self, other: &SparseVector, mut f: impl FnMut(usize, f64, f64)) {
        let (a, b) = (&self.0, &other.0);
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    f(j, a[i].1, b[j].1);
                    i += 1;
                    j += 1;
                }
            }
        }
    }

    fn dot(&self, other: &SparseVector) -> f64 {
        let mut sum = Lanes::default();
        self.shared(other, |j, x, y| sum.add(j, x * y));
        sum.total()
    }

    /// Calls `f` with the position and the product of each entry of `self` with its id's
    /// weight in `dense` (indexed by id): one look-up per entry, no merge of two lists. Four
    /// entries at a time, so that the four lanes of [`Lanes`] are added in parallel.
    fn each_dense_part(&self, dense: &[f64], mut f: impl FnMut(usize, f64)) {
        let chunks = self.0.chunks_exact(4);
        let rest = chunks.remainder();
        for chunk in chunks {
            for (k, &(id, w)) in chunk.iter().enumerate() {
                f(k, w * dense[id as usize]);
            }
        }
        for (k, &(id, w)) in rest.iter().enumerate() {
            f(k, w * dense[id as usize]);
        }
    }

    /// The dot product with a vector spread over `dense` (indexed by id), `self` the second
    /// vector of [`SparseVector::dot`].
    fn dot_dense(&self, dense: &[f64]) -> f64 {
        let mut sum = Lanes::default();
        self.each_dense_part(dense, |k, part| sum.add(k, part));
        sum.total()
    }

    /// The cosine of two claims ([`corroborated`]).
    fn claim_cosine(&self, other: &SparseVector) -> f64 {
        let (mut sum, mut most) = (Lanes::default(), 0.0f64);
        self.shared(other, |j, x, y| {
            sum.add(j, x * y);
            most = most.max(x * y);
        });
        corroborated(sum.total(), most)
    }

    /// [`SparseVector::claim_cosine`] against a claim spread over `dense`, `self` the second.
    /// The largest part is kept per lane too (a maximum is the same in any order), so that no
    /// comparison waits on the one before either.
    fn claim_cosine_dense(&self, dense: &[f64]) -> f64 {
        let (mut sum, mut most) = (Lanes::default(), [0.0f64; 4]);
        self.each_dense_part(dense, |k, part| {
            sum.add(k, part);
            most[k] = most[k].max(part);
        });
        let most = most.into_iter().fold(0.0f64, f64::max);
        corroborated(sum.total(), most)
    }
}

/// The most one shared word gives the claim cosine of two located findings: a quarter of the
/// scale on which the claim counts in full (`TEXT_FULL * MAX_LOCATION_FACTOR`), half of what the
/// words need to merge a pair at a crowded place.
///
/// Two reviewers who describe one defect share its words: the failure, the field, the
/// condition. Two findings that share one rare word and nothing else (however often each repeats
/// it) share a coincidence as often as a defect, and at a place many findings cite, the
/// coincidences are many: 10,000 findings on one line make 45 million pairs, and some of them
/// share one word by chance. So one word is evidence, but not a claim on its own: it merges
/// together with a second word, shared identifiers or quoted code, or a specific place.
pub const ONE_WORD_CLAIM: f64 = 0.15;

/// A claim cosine `sum` whose largest single word's part `most` counts at most
/// [`ONE_WORD_CLAIM`].
fn corroborated(sum: f64, most: f64) -> f64 {
    sum - most + most.min(ONE_WORD_CLAIM)
}

/// Scores many pairs that share their first finding, as candidate pairs come (sorted by their
/// first finding): that finding's vectors are spread over dense rows once, and each pair's
/// cosines are then one pass over the second finding's entries. The same scores as
/// [`Corpus::score_if_at_least`], in about half the time on large consolidations.
pub struct RowScorer<'c> {
    corpus: &'c Corpus,
    row: Option<usize>,
    text: Vec<f64>,
    claim: Vec<f64>,
}

impl<'c> RowScorer<'c> {
    pub fn new(corpus: &'c Corpus) -> Self {
        RowScorer {
            corpus,
            row: None,
            text: vec![0.0; corpus.vocabulary],
            claim: vec![0.0; corpus.vocabulary],
        }
    }

    fn load(&mut self, a: usize) {
        if self.row == Some(a) {
            return;
        }
        let c = self.corpus;
        if let Some(old) = self.row {
            for &(id, _) in &c.vectors[old].0 {
                self.text[id as usize] = 0.0;
            }
            for &(id, _) in &c.claims[old].0 {
                self.claim[id as usize] = 0.0;
            }
        }
        for &(id, w) in &c.vectors[a].0 {
            self.text[id as usize] = w;
        }
        for &(id, w) in &c.claims[a].0 {
            self.claim[id as usize] = w;
        }
        self.row = Some(a);
    }

    /// [`Corpus::score_if_at_least`] of `(a, b)`.
    pub fn score_if_at_least(&mut self, a: usize, b: usize, threshold: f64) -> Option<f64> {
        self.load(a);
        let c = self.corpus;
        c.score_with(a, b, threshold, |which| match which {
            Cosine::Text => c.vectors[b].dot_dense(&self.text),
            Cosine::Claim => c.claims[b].claim_cosine_dense(&self.claim),
        })
    }
}

/// Which cosine of a pair [`Corpus::score_with`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cosine {
    /// All the words.
    Text,
    /// The words without the named identifiers'.
    Claim,
}

/// An identifier or quoted line of a finding: interned, with its rarity weight and its
/// specificity ([`specificity`]).
#[derive(Debug, Clone, Copy)]
struct Term {
    id: u32,
    weight: f64,
    specificity: f64,
}

/// Gives each distinct string a small integer.
#[derive(Default)]
struct Interner<'a>(FastMap<&'a str, u32>);

impl<'a> Interner<'a> {
    fn id(&mut self, s: &'a str) -> u32 {
        let next = self.0.len() as u32;
        *self.0.entry(s).or_insert(next)
    }

    fn get(&self, s: &str) -> Option<u32> {
        self.0.get(s).copied()
    }
}

/// A TF-IDF vector of unit length from `(id, term count, weight)`: `(1 + ln tf) * idf`, where
/// the weight of a word is its inverse document frequency over the findings of one
/// consolidation, `ln((1 + N) / (1 + df)) + 1`: rare words weigh more.
fn unit_vector(terms: impl Iterator<Item = (u32, f64, f64)>) -> SparseVector {
    let mut v: Vec<(u32, f64)> = terms
        .map(|(id, n, w)| (id, (1.0 + f64::ln(n)) * w))
        .collect();
    v.sort_unstable_by_key(|(id, _)| *id);
    let norm = v.iter().map(|(_, w)| w * w).sum::<f64>().sqrt();
    if norm > 0.0 {
        for (_, w) in &mut v {
            *w /= norm;
        }
    }
    SparseVector(v)
}

/// How many of a finding's rarest words serve as its blocking keys however common they are
/// (words rare enough to pair in full always do).
const WORD_KEYS: usize = 8;
/// At most this many identifiers and quoted lines per finding serve as keys (the rarest).
const TERM_KEYS: usize = 16;
/// Lines per location bucket; a range also counts in the buckets [`NEAR_LINES`] / 2 around it,
/// so two ranges within [`NEAR_LINES`] of each other always share a bucket.
const BUCKET_LINES: u32 = 32;
/// At most this many locations of a finding serve as keys.
const LOCATION_KEYS: usize = 4;

/// Blocking key kinds, in the low two bits of a key.
const KEY_WORD: u64 = 0;
const KEY_IDENTIFIER: u64 = 1;
const KEY_QUOTE: u64 = 2;
const KEY_PLACE: u64 = 3;

/// How specific a term named by `df` findings is to one defect, in 0..1. One agent names one
/// defect once, so a term more findings name than there are agents names several defects: its
/// evidence shrinks as `agents / df`.
fn specificity(df: usize, agents: usize) -> f64 {
    if df <= agents.max(1) {
        1.0
    } else {
        agents.max(1) as f64 / df as f64
    }
}

/// Every word and identifier of the findings interned once, with document frequencies and
/// inverse-document-frequency weights by id.
struct Terms {
    /// Per finding: its tokens' ids, sorted (repeats kept: they are its term counts).
    token_ids: Vec<Vec<u32>>,
    /// Per finding: its identifiers' ids, as written.
    ident_ids: Vec<Vec<u32>>,
    /// Per id: how many findings hold it.
    df: Vec<usize>,
    /// Per id: `ln((1 + N) / (1 + df)) + 1`.
    weight: Vec<f64>,
}

impl Terms {
    fn of<'a>(profiles: &'a [FindingProfile], words: &mut Interner<'a>) -> Terms {
        let token_ids: Vec<Vec<u32>> = profiles
            .iter()
            .map(|p| {
                let mut ids: Vec<u32> = p.tokens.iter().map(|t| words.id(t)).collect();
                ids.sort_unstable();
                ids
            })
            .collect();
        let ident_ids: Vec<Vec<u32>> = profiles
            .iter()
            .map(|p| p.identifiers.iter().map(|t| words.id(t)).collect())
            .collect();
        let mut df: Vec<usize> = vec![0; words.0.len()];
        let mut unique: Vec<u32> = Vec::new();
        for (t, i) in token_ids.iter().zip(&ident_ids) {
            unique.clear();
            unique.extend(t.iter().chain(i));
            unique.sort_unstable();
            unique.dedup();
            for &id in &unique {
                df[id as usize] += 1;
            }
        }
        let docs = profiles.len() as f64;
        let weight: Vec<f64> = df
            .iter()
            .map(|&n| ((1.0 + docs) / (1.0 + n as f64)).ln() + 1.0)
            .collect();
        Terms {
            token_ids,
            ident_ids,
            df,
            weight,
        }
    }

    /// Term counts of finding `k` from its sorted ids: (id, count).
    fn counts(&self, k: usize) -> Vec<(u32, f64)> {
        let mut tf: Vec<(u32, f64)> = Vec::new();
        for &id in &self.token_ids[k] {
            match tf.last_mut() {
                Some((last, count)) if *last == id => *count += 1.0,
                _ => tf.push((id, 1.0)),
            }
        }
        tf
    }

    /// Finding `k`'s identifiers, once each by id: (id, weight, df).
    fn identifiers(&self, k: usize) -> Vec<(u32, f64, usize)> {
        let mut ids: Vec<(u32, f64, usize)> = self.ident_ids[k]
            .iter()
            .map(|&id| (id, self.weight[id as usize], self.df[id as usize]))
            .collect();
        ids.sort_unstable_by_key(|(id, _, _)| *id);
        ids.dedup_by_key(|(id, _, _)| *id);
        ids
    }
}

/// How many agents wrote the findings.
fn distinct_agents(agents: &[usize]) -> usize {
    let mut distinct = agents.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    distinct.len()
}

/// How many findings quote each line.
fn quote_frequencies(profiles: &[FindingProfile]) -> FastMap<&str, usize> {
    let mut quote_df: FastMap<&str, usize> = FastMap::default();
    for p in profiles {
        for l in &p.quote_lines {
            *quote_df.entry(l.as_str()).or_default() += 1;
        }
    }
    quote_df
}

/// The start lines a finding's first [`LOCATION_KEYS`] places cite: (place index, line).
fn cited_starts(p: &FindingProfile) -> Vec<(usize, u32)> {
    p.locations
        .iter()
        .take(LOCATION_KEYS)
        .enumerate()
        .filter_map(|(i, l)| Some((i, l.start?)))
        .collect()
}

/// Per finding, the [`specificity`] of its most specific cited start line: how many findings
/// cite each (file, start line), one defect per agent at most, so a line more findings cite
/// than there are agents holds several defects.
fn place_specificity(
    profiles: &[FindingProfile],
    lowered: &[Vec<String>],
    agent_count: usize,
) -> Vec<f64> {
    let mut line_df: FastMap<(&str, u32), usize> = FastMap::default();
    for (p, names) in profiles.iter().zip(lowered) {
        let mut lines: Vec<(&str, u32)> = cited_starts(p)
            .into_iter()
            .map(|(i, line)| (names[i].as_str(), line))
            .collect();
        lines.sort_unstable();
        lines.dedup();
        for key in lines {
            *line_df.entry(key).or_default() += 1;
        }
    }
    profiles
        .iter()
        .zip(lowered)
        .map(|(p, names)| {
            cited_starts(p)
                .into_iter()
                .map(|(i, line)| specificity(line_df[&(names[i].as_str(), line)], agent_count))
                .reduce(f64::max)
                .unwrap_or(1.0)
        })
        .collect()
}

/// The claim vector of a finding that names code: its words without the identifiers it names
/// (they say where, not what; `named` holds the ids of their words); its whole vector when it
/// names none.
fn claim_vector(
    p: &FindingProfile,
    tf: &[(u32, f64)],
    named: &[u32],
    weight: &[f64],
    whole: &SparseVector,
) -> SparseVector {
    if p.named.is_empty() {
        return whole.clone();
    }
    unit_vector(
        tf.iter()
            .filter(|(id, _)| named.binary_search(id).is_err())
            .map(|&(id, n)| (id, n, weight[id as usize])),
    )
}

/// Per finding: the ids of the words of the identifiers it names ([`FindingProfile::named`])
/// that are words of some finding, sorted and without repeats (looked up by binary search: a
/// finding may name thousands).
fn named_ids(profiles: &[FindingProfile], words: &Interner<'_>) -> Vec<Vec<u32>> {
    profiles
        .iter()
        .map(|p| {
            let mut ids: Vec<u32> = p.named.iter().filter_map(|t| words.get(t)).collect();
            ids.sort_unstable();
            ids.dedup();
            ids
        })
        .collect()
}

/// Frees the findings' tokens once they are interned: nothing reads them again, and they were
/// the largest part of the profiles, held until the report is written.
fn release_tokens(profiles: &mut [FindingProfile]) {
    for p in profiles {
        p.tokens = Tokens::default();
    }
}

/// The rarest of `terms` (df, id) that other findings share (df >= 2), rarest first.
fn shared_by_rarity(terms: impl Iterator<Item = (usize, u32)>) -> Vec<(usize, u32)> {
    let mut rare: Vec<(usize, u32)> = terms.filter(|&(n, _)| n >= 2).collect();
    rare.sort_unstable();
    rare
}

/// The 32-line buckets a place counts in ([`BUCKET_LINES`]); a place without lines counts in
/// one bucket of its file.
fn place_buckets(l: &crate::types::Location) -> Vec<u32> {
    match (l.start, l.end_line()) {
        (Some(s), Some(e)) => {
            let first = s.saturating_sub(NEAR_LINES.div_ceil(2)) / BUCKET_LINES;
            let last = e.saturating_add(NEAR_LINES.div_ceil(2)) / BUCKET_LINES;
            // A long range counts at its two ends.
            if last - first <= 2 {
                (first..=last).collect::<Vec<_>>()
            } else {
                vec![first, first + 1, last - 1, last]
            }
        }
        _ => vec![u32::MAX],
    }
}

/// Per finding: the file name of each location, lower-cased (beside `locations`).
fn lowered_file_names(profiles: &[FindingProfile]) -> Vec<Vec<String>> {
    profiles
        .iter()
        .map(|p| {
            p.locations
                .iter()
                .map(|l| l.file_name().to_ascii_lowercase())
                .collect()
        })
        .collect()
}

/// A finding's quoted lines as (id, specificity, df), interned in `quotes_ids` as they come,
/// sorted by id.
fn quoted_lines<'a>(
    p: &'a FindingProfile,
    quote_df: &FastMap<&str, usize>,
    quotes_ids: &mut Interner<'a>,
    agent_count: usize,
) -> Vec<(u32, f64, usize)> {
    let mut q: Vec<(u32, f64, usize)> = p
        .quote_lines
        .iter()
        .map(|l| {
            let df = quote_df[l.as_str()];
            (quotes_ids.id(l), specificity(df, agent_count), df)
        })
        .collect();
    q.sort_unstable_by_key(|(id, _, _)| *id);
    q
}

/// A finding's blocking keys, sorted and without repeats: words other findings share (`words`
/// as (df, id); the rarest few always, the rest while they are rare enough to pair in full),
/// the rarest shared identifiers and quoted lines, and the places (file names interned in
/// `files` as they come).
fn blocking_key<'a>(
    words: impl Iterator<Item = (usize, u32)>,
    ids: &[(u32, f64, usize)],
    q: &[(u32, f64, usize)],
    locations: &[Location],
    names: &'a [String],
    files: &mut Interner<'a>,
    limit: usize,
) -> Vec<u64> {
    let mut key: Vec<u64> = Vec::new();
    let rare = shared_by_rarity(words);
    key.extend(
        rare.iter()
            .enumerate()
            .take_while(|&(k, &(df, _))| k < WORD_KEYS || df <= limit)
            .map(|(_, &(_, id))| u64::from(id) << 2 | KEY_WORD),
    );
    let rare_ids = shared_by_rarity(ids.iter().map(|&(id, _, df)| (df, id)));
    key.extend(
        rare_ids
            .iter()
            .take(TERM_KEYS)
            .map(|&(_, id)| u64::from(id) << 2 | KEY_IDENTIFIER),
    );
    let rare_q = shared_by_rarity(q.iter().map(|&(id, _, df)| (df, id)));
    key.extend(
        rare_q
            .iter()
            .take(TERM_KEYS)
            .map(|&(_, id)| u64::from(id) << 2 | KEY_QUOTE),
    );
    for (l, name) in locations.iter().zip(names).take(LOCATION_KEYS) {
        let file = u64::from(files.id(name));
        for b in place_buckets(l) {
            key.push((file << 32 | u64::from(b)) << 2 | KEY_PLACE);
        }
    }
    key.sort_unstable();
    key.dedup();
    key
}

/// A finding's identifiers (id, weight, df) as terms, each with its [`specificity`].
fn identifier_terms(ids: &[(u32, f64, usize)], agent_count: usize) -> Vec<Term> {
    ids.iter()
        .map(|&(id, weight, df)| Term {
            id,
            weight,
            specificity: specificity(df, agent_count),
        })
        .collect()
}

/// A finding's quoted lines (id, specificity, df) as terms weighted by their specificity.
fn quote_terms(q: &[(u32, f64, usize)]) -> Vec<Term> {
    q.iter()
        .map(|&(id, specificity, _)| Term {
            id,
            weight: specificity,
            specificity,
        })
        .collect()
}

impl Corpus {
    /// Prepares the findings `profiles`, whose agents are `agents` (one per profile).
    pub fn new(mut profiles: Vec<FindingProfile>, agents: Vec<usize>) -> Self {
        assert_eq!(profiles.len(), agents.len(), "one agent per finding");
        let agent_count = distinct_agents(&agents);
        let limit = super::cluster::max_posting(agent_count);
        let (terms, named_ids, vocabulary) = {
            let mut words = Interner::default();
            let terms = Terms::of(&profiles, &mut words);
            let named_ids = named_ids(&profiles, &words);
            (terms, named_ids, words.0.len())
        };
        release_tokens(&mut profiles);
        let quote_df = quote_frequencies(&profiles);
        let lowered = lowered_file_names(&profiles);
        let place_specificity = place_specificity(&profiles, &lowered, agent_count);

        // Per finding, in order (quoted lines and file names are interned as they come).
        let n = profiles.len();
        let mut quotes_ids = Interner::default();
        let mut files = Interner::default();
        let mut vectors = Vec::with_capacity(n);
        let mut claims = Vec::with_capacity(n);
        let mut file_names = Vec::with_capacity(n);
        let mut identifiers = Vec::with_capacity(n);
        let mut quotes = Vec::with_capacity(n);
        let mut keys = Vec::with_capacity(n);
        for (k, (p, names)) in profiles.iter().zip(&lowered).enumerate() {
            let tf = terms.counts(k);
            let v = unit_vector(tf.iter().map(|&(id, n)| (id, n, terms.weight[id as usize])));
            claims.push(claim_vector(p, &tf, &named_ids[k], &terms.weight, &v));
            vectors.push(v);
            let ids = terms.identifiers(k);
            let q = quoted_lines(p, &quote_df, &mut quotes_ids, agent_count);
            let words = tf.iter().map(|&(id, _)| (terms.df[id as usize], id));
            keys.push(blocking_key(
                words,
                &ids,
                &q,
                &p.locations,
                names,
                &mut files,
                limit,
            ));
            file_names.push(names.iter().map(|n| files.id(n)).collect());
            identifiers.push(identifier_terms(&ids, agent_count));
            quotes.push(quote_terms(&q));
        }
        Corpus {
            profiles,
            agents,
            vectors,
            claims,
            file_names,
            identifiers,
            quotes,
            keys,
            vocabulary,
            place_specificity,
        }
    }

    pub fn len(&self) -> usize {
        self.profiles.len()
    }

    pub fn is_empty(&self) -> bool {
        self.profiles.is_empty()
    }

    /// Blocking keys of finding `i`, sorted: the words it shares with other findings (the
    /// rarest [`WORD_KEYS`] of them, and every one held by no more than
    /// [`max_posting`](super::cluster::max_posting) findings), its rarest shared identifiers and
    /// quoted lines, and the places it points at (file and bucket of lines). Two findings are
    /// compared when they share a key ([`cluster`](super::cluster)).
    pub fn blocking_keys(&self, i: usize) -> &[u64] {
        &self.keys[i]
    }

    /// The evidence that findings `a` and `b` of the corpus name the same defect.
    pub fn evidence(&self, a: usize, b: usize) -> PairEvidence {
        let text = self.vectors[a].dot(&self.vectors[b]).clamp(0.0, 1.0);
        let claim = self.claims[a].claim_cosine(&self.claims[b]).clamp(0.0, 1.0);
        self.evidence_with(a, b, text, claim)
    }

    fn evidence_with(&self, a: usize, b: usize, text: f64, claim: f64) -> PairEvidence {
        PairEvidence {
            text,
            claim,
            identifiers: identifier_overlap(&self.identifiers[a], &self.identifiers[b]),
            quote: quote_overlap(&self.quotes[a], &self.quotes[b]),
            location: self.location_relation(a, b),
            place_specificity: self.place_specificity[a].min(self.place_specificity[b]),
        }
    }

    /// The pair's score when it can reach `threshold`, else `None`, cheaply: the words bound
    /// what the pointers and the place can add (at most twice the words, then half again), so a
    /// pair whose words are too far apart is not scored further.
    pub fn score_if_at_least(&self, a: usize, b: usize, threshold: f64) -> Option<f64> {
        self.score_with(a, b, threshold, |which| match which {
            Cosine::Text => self.vectors[a].dot(&self.vectors[b]),
            Cosine::Claim => self.claims[a].claim_cosine(&self.claims[b]),
        })
    }

    /// [`Corpus::score_if_at_least`] with the pair's cosines from `cosine`.
    fn score_with(
        &self,
        a: usize,
        b: usize,
        threshold: f64,
        mut cosine: impl FnMut(Cosine) -> f64,
    ) -> Option<f64> {
        let located =
            !self.profiles[a].locations.is_empty() && !self.profiles[b].locations.is_empty();
        // One cosine decides the words: all of them without a place, the claim with one.
        let (text, claim, words) = if located {
            let claim = cosine(Cosine::Claim).clamp(0.0, 1.0);
            let words = claim / (TEXT_FULL * MAX_LOCATION_FACTOR);
            (0.0, claim, words)
        } else {
            let text = cosine(Cosine::Text).clamp(0.0, 1.0);
            (text, 0.0, text / TEXT_FULL)
        };
        let words = TEXT_ONLY_WEIGHT * words.min(1.0);
        if 2.0 * words * MAX_LOCATION_FACTOR < threshold {
            return None;
        }
        // A located pair's score reads only its claim ([`PairEvidence::text_evidence`]), so its
        // text cosine is left at 0 rather than computed: it was a sixth of the cosines scored.
        let s = self.evidence_with(a, b, text, claim).score();
        (s >= threshold).then_some(s)
    }

    /// [`location_relation`] of two findings of the corpus; locations in files of different
    /// names are told apart by their interned names, without comparing paths.
    fn location_relation(&self, a: usize, b: usize) -> LocationRelation {
        let (la, lb) = (&self.profiles[a].locations, &self.profiles[b].locations);
        if la.is_empty() || lb.is_empty() {
            return LocationRelation::Unknown;
        }
        let (na, nb) = (&self.file_names[a], &self.file_names[b]);
        if !na.iter().any(|x| nb.contains(x)) {
            return LocationRelation::Different;
        }
        location_relation(la, lb)
    }
}

/// Weighted Jaccard of two identifier sets (weight: rarity), times the largest specificity
/// among the shared ones: two findings that name only `err` share everything they name, and
/// that still says little when many findings name `err`.
fn identifier_overlap(a: &[Term], b: &[Term]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j) = (0, 0);
    let (mut inter, mut spec) = (0.0, 0.0f64);
    while i < a.len() && j < b.len() {
        match a[i].id.cmp(&b[j].id) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                inter += a[i].weight;
                spec = spec.max(a[i].specificity);
                i += 1;
                j += 1;
            }
        }
    }
    if inter == 0.0 {
        return 0.0;
    }
    let total = |t: &[Term]| t.iter().map(|t| t.weight).sum::<f64>();
    let union = total(a) + total(b) - inter;
    if union > 0.0 {
        inter / union * spec
    } else {
        0.0
    }
}

/// The specificity-weighted share of the shorter quote found in the other.
fn quote_overlap(a: &[Term], b: &[Term]) -> f64 {
    let (small, large) = if a.len() < b.len() { (a, b) } else { (b, a) };
    if small.is_empty() {
        return 0.0;
    }
    let shared: f64 = small
        .iter()
        .filter(|t| large.binary_search_by_key(&t.id, |u| u.id).is_ok())
        .map(|t| t.specificity)
        .sum();
    shared / small.len() as f64
}

/// How well finding `i` speaks for `members` (its cluster): the summed score of its pairs with the
/// others, in thousandths so that it orders. The member most like all the others states what
/// they agree on; an outlier's wording is the least likely to be what they all meant.
pub fn centrality(corpus: &Corpus, i: usize, members: &[usize]) -> u64 {
    let total: f64 = members
        .iter()
        .filter(|&&j| j != i)
        .map(|&j| corpus.evidence(i.min(j), i.max(j)).score())
        .sum();
    (total * 1000.0).round() as u64
}

/// Whether `word` (lower case) is a stopword: a set look-up, as every token of every finding
/// asks (a scan of the list was a tenth of consolidation's time), with the fast hash of the
/// interners (SipHash was a visible part of tokenizing).
fn is_stopword(word: &str) -> bool {
    type Set = std::collections::HashSet<&'static str, foldhash::fast::RandomState>;
    static SET: std::sync::LazyLock<Set> =
        std::sync::LazyLock::new(|| STOPWORDS.iter().copied().collect());
    SET.contains(word)
}

/// Lower-case tokens: words of three letters or more without stopwords, numbers of two digits or
/// more, and identifiers both whole and split at camelCase and snake_case boundaries.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Tokens::default();
    tokenize_into(text, &mut tokens);
    tokens.iter().map(str::to_string).collect()
}

/// [`tokenize`], appending to `out`. The buffers for the parts of a word and its lower case
/// are reused from word to word: a profile tokenizes every word of every finding, and an
/// allocation or two per word were most of the tokenizer's time.
pub fn tokenize_into(text: &str, out: &mut Tokens) {
    let mut lower = String::new();
    let mut parts = Vec::new();
    for_each_word(text, |raw| {
        parts.clear();
        split_identifier_into(raw, &mut parts);
        if parts.len() > 1 {
            lowercase_into(raw, &mut lower);
            out.push(&lower);
        }
        for &p in &parts {
            lowercase_into(p, &mut lower);
            let keep = if lower.bytes().all(|c| c.is_ascii_digit()) {
                lower.len() >= 2
            } else {
                char_count(&lower) >= 3 && !is_stopword(&lower)
            };
            if keep {
                out.push(stem(&lower));
            }
        }
    });
}

/// Calls `f` with each word of `text`: each run of letters, digits and `_`. An ASCII text (most
/// are) is cut byte by byte, at the same places as by character but without decoding each.
fn for_each_word<'t>(text: &'t str, mut f: impl FnMut(&'t str)) {
    if !text.is_ascii() {
        text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .for_each(f);
        return;
    }
    let mut start = None;
    for (i, b) in text.bytes().enumerate() {
        if b.is_ascii_alphanumeric() || b == b'_' {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            f(&text[s..i]);
        }
    }
    if let Some(s) = start {
        f(&text[s..]);
    }
}

/// How many characters `word` holds: its length when it is ASCII, the common case.
fn char_count(word: &str) -> usize {
    if word.is_ascii() {
        word.len()
    } else {
        word.chars().count()
    }
}

/// `word` in lower case into `buf` (replacing what it held), as `str::to_lowercase` gives it:
/// copied and lowered in place when it is ASCII, the common case.
fn lowercase_into(word: &str, buf: &mut String) {
    buf.clear();
    if word.is_ascii() {
        buf.push_str(word);
        buf.make_ascii_lowercase();
    } else {
        buf.push_str(&word.to_lowercase());
    }
}

/// A light stemmer: plural and -ing/-ed endings, so "errors" meets "error".
fn stem(word: &str) -> &str {
    for suffix in ["ing", "ed", "es", "s"] {
        if word.len() > suffix.len() + 3 && word.ends_with(suffix) && !word.ends_with("ss") {
            return &word[..word.len() - suffix.len()];
        }
    }
    word
}

/// Splits `ObservedGeneration`, `observed_generation`, `HTTPServer2` into their words (the
/// tokenizer calls [`split_identifier_into`] with a buffer it reuses).
#[cfg(test)]
fn split_identifier(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    split_identifier_into(s, &mut parts);
    parts
}

/// Splits an identifier into its words, appending them to `parts`.
fn split_identifier_into<'s>(s: &'s str, parts: &mut Vec<&'s str>) {
    for piece in s.split('_').filter(|p| !p.is_empty()) {
        // Most words are one part: no boundary to look for.
        if piece.bytes().all(|b| b.is_ascii_lowercase()) {
            parts.push(piece);
        } else if piece.is_ascii() {
            split_ascii_piece(piece, parts);
        } else {
            split_piece(piece, parts);
        }
    }
}

/// Whether a new word starts at `c`, after `prev` and before a lower-case letter or not: a
/// capital after a small letter or a digit (`fooBar`, `v2Beta`), the last capital of a run
/// before a small letter (`HTTPServer`), and where digits start or end.
fn starts_word(prev: char, c: char, next_lower: bool) -> bool {
    (c.is_uppercase() && (prev.is_lowercase() || prev.is_ascii_digit()))
        || (c.is_uppercase() && prev.is_uppercase() && next_lower)
        || (c.is_ascii_digit() != prev.is_ascii_digit())
}

/// The words of one ASCII piece of an identifier (no underscore), read by byte: the same
/// boundaries as [`split_piece`] without collecting its characters first.
fn split_ascii_piece<'s>(piece: &'s str, parts: &mut Vec<&'s str>) {
    let bytes = piece.as_bytes();
    let mut start = 0;
    for i in 1..bytes.len() {
        let next_lower = bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase);
        if starts_word(char::from(bytes[i - 1]), char::from(bytes[i]), next_lower) {
            parts.push(&piece[start..i]);
            start = i;
        }
    }
    parts.push(&piece[start..]);
}

/// The words of one piece of an identifier (no underscore) in any script.
fn split_piece<'s>(piece: &'s str, parts: &mut Vec<&'s str>) {
    let chars: Vec<(usize, char)> = piece.char_indices().collect();
    let mut start = 0;
    for i in 1..chars.len() {
        let (idx, c) = chars[i];
        let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
        if starts_word(chars[i - 1].1, c, next_lower) {
            parts.push(&piece[start..idx]);
            start = idx;
        }
    }
    parts.push(&piece[start..]);
}

/// Text in single backticks that looks like an identifier or a code expression (not a path
/// with line numbers: locations are compared separately), lower case.
pub fn backticked(text: &str) -> BTreeSet<String> {
    backticked_as_written(text)
        .into_iter()
        .map(|s| s.to_lowercase())
        .collect()
}

/// [`backticked`] as written, case kept.
fn backticked_as_written(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('`') else { break };
        let inner = after[..close].trim();
        rest = &after[close + 1..];
        if inner.is_empty() || inner.len() > 80 || inner.contains('\n') {
            continue;
        }
        if looks_like_location(inner) {
            continue;
        }
        out.insert(inner.to_string());
    }
    out
}

fn looks_like_location(s: &str) -> bool {
    match s.rsplit_once(':') {
        Some((path, lines)) => {
            path.contains('.') && lines.chars().next().is_some_and(|c| c.is_ascii_digit())
        }
        None => false,
    }
}

/// Collapses runs of whitespace to one space and trims.
pub fn fold_whitespace(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn is_meaningful_code_line(line: &str) -> bool {
    let trimmed = line.trim_matches(|c: char| "{}()[];,".contains(c) || c.is_whitespace());
    trimmed.len() >= 4 && !trimmed.contains("...") && !trimmed.contains('…')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_texts_are_cut_into_the_words_the_character_cut_gives() {
        let by_char = |text: &str| -> Vec<String> {
            text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect()
        };
        for text in [
            "",
            "  ",
            "a",
            "_leading and trailing_ ",
            "`fmt.Errorf(\"%w\", err)` at pkg/a_b.go:12-14, see HTTPServer2!",
            "x,y;;z--w\n\tend",
        ] {
            let mut words = Vec::new();
            for_each_word(text, |w| words.push(w.to_string()));
            assert_eq!(words, by_char(text), "{text:?}");
        }
        assert_eq!(char_count("naïve"), 5);
        assert_eq!(char_count("plain"), 5);
    }
    use crate::types::CodeSnippet;

    fn finding(title: &str, body: &str, loc: Option<&str>, code: Option<&str>) -> Finding {
        let mut f = Finding::new("x", title);
        f.explanation = body.to_string();
        f.locations = loc.map(|l| vec![l.parse().unwrap()]).unwrap_or_default();
        f.code = code.map(|c| CodeSnippet {
            language: None,
            code: c.to_string(),
        });
        f
    }

    /// Text-only findings as a benchmark gives them: three reviewers word one race three ways,
    /// beside unrelated findings of the same PR. The rewordings must clear the merge threshold
    /// The dense-row scorer gives every pair the score the pairwise one does, whichever order
    /// the pairs come in, with and without locations.
    #[test]
    fn the_row_scorer_agrees_with_pairwise_scoring() {
        let texts = [
            (
                "Race in `CountDevices`",
                "Two requests pass the `CountDevices` check.",
                Some("a.go:10"),
            ),
            (
                "Device limit race",
                "Concurrent requests exceed the device limit.",
                Some("a.go:12"),
            ),
            (
                "Missing docs",
                "The `anonymousDeviceLimit` setting lacks documentation.",
                None,
            ),
            (
                "Stale cache",
                "tagDeviceUI caches the device ID too early.",
                Some("b.ts:3"),
            ),
            (
                "Race on count",
                "Counting devices and inserting are not atomic.",
                None,
            ),
        ];
        let findings: Vec<Finding> = texts
            .iter()
            .map(|(t, e, l)| finding(t, e, *l, None))
            .collect();
        let corpus = Corpus::new(
            findings.iter().map(FindingProfile::of).collect(),
            (0..findings.len()).collect(),
        );
        let mut scorer = RowScorer::new(&corpus);
        let pairs = [
            (0, 1),
            (0, 2),
            (0, 4),
            (1, 4),
            (1, 2),
            (0, 3),
            (2, 3),
            (2, 4),
            (3, 4),
        ];
        for threshold in [0.0, 0.3] {
            for &(a, b) in &pairs {
                let pairwise = corpus.score_if_at_least(a, b, threshold);
                let row = scorer.score_if_at_least(a, b, threshold);
                match (pairwise, row) {
                    // The same sums in the same lanes ([`Lanes`]): equal to the bit.
                    (Some(x), Some(y)) => assert_eq!(x.to_bits(), y.to_bits(), "{a}-{b}: {x} {y}"),
                    (x, y) => assert_eq!(x, y, "{a}-{b}"),
                }
            }
        }
        assert!(corpus.score_if_at_least(0, 1, 0.0).unwrap() > 0.0);
    }

    /// on text alone; the unrelated ones must not.
    #[test]
    fn rewordings_without_locations_merge_on_text_alone() {
        let texts = [
            "Race condition: CountDevices check and the insert in CreateOrUpdateDevice are not atomic, so concurrent requests can exceed the device limit.",
            "Device limit enforcement races: two concurrent requests both pass the CountDevices check before either inserts a device.",
            "Potential race condition between counting devices and inserting a new device; concurrent requests could exceed the configured limit.",
            "The anonymousDeviceLimit setting lacks documentation in the configuration reference.",
            "Test TestIntegrationBeyondDeviceLimit does not check that existing devices can still be updated.",
            "tagDeviceUI caches the device ID before the store call returns, so a rejected device stays cached.",
        ];
        let findings: Vec<Finding> = texts.iter().map(|t| finding(t, t, None, None)).collect();
        let corpus = Corpus::new(
            findings.iter().map(FindingProfile::of).collect(),
            (0..findings.len()).collect(),
        );
        let threshold = crate::consolidate::cluster::MERGE_THRESHOLD;
        for (a, b) in [(0, 1), (0, 2), (1, 2)] {
            let e = corpus.evidence(a, b);
            assert_eq!(e.location, LocationRelation::Unknown);
            assert!(e.score() >= threshold, "race {a}-{b}: {e:?}");
        }
        for a in 0..3 {
            for b in 3..6 {
                let e = corpus.evidence(a, b);
                assert!(e.score() < threshold, "{a}-{b} should stay apart: {e:?}");
            }
        }
        // The member most like the others speaks for the cluster.
        let members = [0, 1, 2];
        let c: Vec<u64> = members
            .iter()
            .map(|&i| centrality(&corpus, i, &members))
            .collect();
        assert!(c.iter().all(|&x| x > 0), "{c:?}");
    }

    #[test]
    fn a_place_strengthens_text_evidence_and_never_makes_it() {
        let text_only = PairEvidence {
            text: 0.2,
            claim: 0.0,
            identifiers: 0.0,
            quote: 0.0,
            location: LocationRelation::Unknown,
            place_specificity: 1.0,
        };
        // Reworded text: cosine 0.2 reaches the merge threshold.
        assert!((text_only.score() - 0.3).abs() < 1e-9);
        let full = PairEvidence {
            text: 0.9,
            ..text_only
        };
        assert!((full.score() - TEXT_ONLY_WEIGHT).abs() < 1e-9);
        // With locations in different files the same text stays apart.
        let apart = PairEvidence {
            claim: 0.2,
            location: LocationRelation::Different,
            ..text_only
        };
        assert_eq!(apart.score(), 0.0);
        // The same lines with nothing claimed in common: nothing, whatever identifier and
        // quote they share.
        let same_lines = PairEvidence {
            text: 0.3,
            claim: 0.0,
            identifiers: 1.0,
            quote: 1.0,
            location: LocationRelation::Overlap,
            place_specificity: 1.0,
        };
        assert_eq!(same_lines.score(), 0.0);
        // A weak claim in common: the identifiers add at most as much, the lines half again,
        // which is where the same words would stand with no location at all.
        let weak = PairEvidence {
            claim: 0.12,
            ..same_lines
        };
        assert!((weak.text_evidence() - 0.24).abs() < 1e-9);
        assert!((weak.score() - 0.36).abs() < 1e-9);
        let unlocated = PairEvidence {
            text: 0.12,
            location: LocationRelation::Unknown,
            ..weak
        };
        assert!((unlocated.score() - weak.score()).abs() < 1e-9);
        let elsewhere = PairEvidence {
            location: LocationRelation::SameFile,
            identifiers: 0.0,
            quote: 0.0,
            ..weak
        };
        assert!(elsewhere.score() < crate::consolidate::cluster::MERGE_THRESHOLD);
        // The same words on a line a hundred findings cite: the line adds almost nothing.
        let crowded = PairEvidence {
            place_specificity: 0.1,
            ..weak
        };
        assert!((crowded.score() - 0.24 * 1.05).abs() < 1e-9);
        assert!(crowded.score() < crate::consolidate::cluster::MERGE_THRESHOLD);
    }

    #[test]
    fn a_profile_counts_its_title_twice_then_body_and_code() {
        let mut f = Finding::new("x", "Stale `cacheEntry` returned");
        f.explanation = "Readers get expired entries".into();
        let p = FindingProfile::of(&f);
        let tokens: Vec<&str> = p.tokens.iter().collect();
        let title = ["stale", "cacheentry", "cache", "entry", "return"];
        let mut expected: Vec<&str> = title.iter().chain(&title).copied().collect();
        expected.extend(["reader", "get", "expir", "entri"]);
        assert_eq!(tokens, expected);
        assert_eq!(p.tokens.len(), expected.len());
        assert_eq!(
            tokenize("Readers get expired entries"),
            ["reader", "get", "expir", "entri"]
        );
    }

    #[test]
    fn identifiers_split_at_case_and_underscores() {
        assert_eq!(
            split_identifier("ObservedGeneration"),
            ["Observed", "Generation"]
        );
        assert_eq!(split_identifier("get_item_key"), ["get", "item", "key"]);
        assert_eq!(split_identifier("HTTPServer2"), ["HTTP", "Server", "2"]);
        let t = tokenize("The `ObservedGeneration` errors");
        assert!(t.contains(&"observedgeneration".to_string()));
        assert!(t.contains(&"generation".to_string()));
        assert!(t.contains(&"error".to_string()));
        assert!(!t.contains(&"the".to_string()));
    }

    #[test]
    fn reworded_findings_on_the_same_lines_score_higher_than_unrelated_ones() {
        let a = finding(
            "Mirrored ObservedGeneration refers to the wrong resource",
            "`ObservedGeneration` is copied from the LimaVM condition; use `app.Generation`.",
            Some("app_controller.go:207"),
            Some("ObservedGeneration: cond.ObservedGeneration,"),
        );
        let b = finding(
            "Incorrect `ObservedGeneration` in mirrored conditions",
            "The code blindly copies `cond.ObservedGeneration` from the child resource.",
            Some("pkg/app/app_controller.go:193"),
            Some("Message: x,\nObservedGeneration: cond.ObservedGeneration,"),
        );
        let c = finding(
            "Swallowed error during normal reconcile",
            "A transient API error is logged and swallowed.",
            Some("pkg/app/app_controller.go:173-176"),
            Some("log.Error(err, \"Failed to fetch input ConfigMap\")"),
        );
        let corpus = Corpus::new(
            [&a, &b, &c].iter().map(|f| FindingProfile::of(f)).collect(),
            vec![0, 1, 2],
        );
        let ab = corpus.evidence(0, 1);
        let bc = corpus.evidence(1, 2);
        assert_eq!(ab.location, LocationRelation::Near);
        assert_eq!(ab.quote, 1.0);
        assert!(ab.score() > 0.5, "{ab:?}");
        assert!(bc.score() < 0.3, "{bc:?}");
    }

    #[test]
    fn locations_in_different_files_relate_as_different() {
        let a = vec!["a.go:1-5".parse().unwrap()];
        let b = vec!["b.go:1-5".parse().unwrap()];
        assert_eq!(location_relation(&a, &b), LocationRelation::Different);
        let c = vec!["x/a.go:40".parse().unwrap()];
        assert_eq!(location_relation(&a, &c), LocationRelation::SameFile);
        assert_eq!(location_relation(&a, &[]), LocationRelation::Unknown);
    }

    #[test]
    fn backticked_identifiers_skip_locations() {
        let ids = backticked("see `app.go:12` and `RemoveOwnedFinalizer` and `x`");
        assert!(ids.contains("removeownedfinalizer"));
        assert!(!ids.iter().any(|i| i.contains("app.go")));
    }
}
