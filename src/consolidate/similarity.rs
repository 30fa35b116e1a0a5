//! How alike two findings are, from what they say and where they point.
//!
//! Reviewers describe one defect in different words, so plain string distance is weak. What they
//! share is more telling: the file and lines, the quoted code, the identifiers in backticks, the
//! rarer words of the text. Each is scored on its own and combined into one number in 0..1.

use std::collections::{BTreeSet, HashMap};

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
    /// Lower-case word tokens of title, explanation and code, with identifiers split into parts.
    pub tokens: Vec<String>,
    /// Identifiers quoted in backticks in title and explanation, lower case.
    pub identifiers: BTreeSet<String>,
    /// Quoted code lines with whitespace folded, without trivial lines (braces, `...`).
    pub quote_lines: BTreeSet<String>,
    pub locations: Vec<Location>,
}

impl FindingProfile {
    pub fn of(finding: &Finding) -> Self {
        let mut text = String::new();
        text.push_str(&finding.title);
        text.push('\n');
        text.push_str(&finding.title); // the title says what the defect is: count it twice
        text.push('\n');
        text.push_str(&finding.explanation);
        let mut tokens = tokenize(&text);
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
            tokens.extend(tokenize(&code.code));
        }
        let mut identifiers = backticked(&finding.title);
        identifiers.extend(backticked(&finding.explanation));
        FindingProfile {
            tokens,
            identifiers,
            quote_lines,
            locations: finding.locations.clone(),
        }
    }
}

/// Inverse document frequencies over all findings of one consolidation: rare words weigh more.
#[derive(Debug, Clone, Default)]
pub struct Idf {
    weights: HashMap<String, f64>,
    docs: usize,
}

impl Idf {
    pub fn new<'a>(profiles: impl IntoIterator<Item = &'a FindingProfile>) -> Self {
        let mut df: HashMap<String, usize> = HashMap::new();
        let mut docs = 0;
        for p in profiles {
            docs += 1;
            let unique: BTreeSet<&String> = p.tokens.iter().chain(p.identifiers.iter()).collect();
            for t in unique {
                *df.entry(t.clone()).or_default() += 1;
            }
        }
        let weights = df
            .into_iter()
            .map(|(t, n)| (t, ((1.0 + docs as f64) / (1.0 + n as f64)).ln() + 1.0))
            .collect();
        Idf { weights, docs }
    }

    pub fn weight(&self, token: &str) -> f64 {
        self.weights
            .get(token)
            .copied()
            .unwrap_or_else(|| (1.0 + self.docs as f64).ln() + 1.0)
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
    pub text: f64,
    pub identifiers: f64,
    pub quote: f64,
    pub location: LocationRelation,
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

impl PairEvidence {
    /// One number in 0..1.
    ///
    /// With locations on both sides, text carries most weight and a shared quote or
    /// overlapping lines add to it; findings in different files are almost never one defect.
    /// Where either finding has no location (benchmark data, a finding about the change as a
    /// whole), the text is the main evidence, read on the scale of reworded text
    /// ([`TEXT_FULL`]); identifiers and quotes still add.
    pub fn score(&self) -> f64 {
        let s = match self.location {
            LocationRelation::Unknown => {
                TEXT_ONLY_WEIGHT * (self.text / TEXT_FULL).min(1.0)
                    + 0.2 * self.identifiers
                    + 0.2 * self.quote
            }
            located => {
                let loc = match located {
                    LocationRelation::Overlap => 0.25,
                    LocationRelation::Near => 0.15,
                    LocationRelation::SameFile => 0.05,
                    _ => -0.3,
                };
                0.55 * self.text + 0.2 * self.identifiers + 0.2 * self.quote + loc
            }
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
    pub idf: Idf,
    vectors: Vec<SparseVector>,
    identifiers: Vec<SparseVector>,
    quotes: Vec<Vec<u32>>,
    keys: Vec<Vec<u32>>,
}

/// A sparse vector over interned ids, sorted by id.
#[derive(Debug, Clone, Default)]
struct SparseVector(Vec<(u32, f64)>);

impl SparseVector {
    /// Walks the two sorted lists once, calling `f` with both weights of each shared id.
    fn shared(&self, other: &SparseVector, mut f: impl FnMut(f64, f64)) {
        let (a, b) = (&self.0, &other.0);
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    f(a[i].1, b[j].1);
                    i += 1;
                    j += 1;
                }
            }
        }
    }

    fn dot(&self, other: &SparseVector) -> f64 {
        let mut sum = 0.0;
        self.shared(other, |x, y| sum += x * y);
        sum
    }

    fn total(&self) -> f64 {
        self.0.iter().map(|(_, w)| w).sum()
    }

    /// Weighted Jaccard of two sets whose members carry one weight each.
    fn jaccard(&self, other: &SparseVector) -> f64 {
        if self.0.is_empty() || other.0.is_empty() {
            return 0.0;
        }
        let mut inter = 0.0;
        self.shared(other, |x, _| inter += x);
        let union = self.total() + other.total() - inter;
        if union > 0.0 { inter / union } else { 0.0 }
    }
}

/// Gives each distinct string a small integer.
#[derive(Default)]
struct Interner<'a>(HashMap<&'a str, u32>);

impl<'a> Interner<'a> {
    fn id(&mut self, s: &'a str) -> u32 {
        let next = self.0.len() as u32;
        *self.0.entry(s).or_insert(next)
    }
}

impl Corpus {
    pub fn new(profiles: Vec<FindingProfile>) -> Self {
        let idf = Idf::new(&profiles);
        let mut words = Interner::default();
        let mut quotes_ids = Interner::default();
        let mut files = Interner::default();
        let mut vectors = Vec::with_capacity(profiles.len());
        let mut identifiers = Vec::with_capacity(profiles.len());
        let mut quotes = Vec::with_capacity(profiles.len());
        let mut keys = Vec::with_capacity(profiles.len());
        let lowered: Vec<Vec<String>> = profiles
            .iter()
            .map(|p| {
                p.locations
                    .iter()
                    .map(|l| l.file_name().to_ascii_lowercase())
                    .collect()
            })
            .collect();
        for (p, names) in profiles.iter().zip(&lowered) {
            let mut tf: HashMap<u32, (f64, f64)> = HashMap::new();
            for t in &p.tokens {
                let id = words.id(t);
                tf.entry(id).or_insert((0.0, idf.weight(t))).0 += 1.0;
            }
            let mut v: Vec<(u32, f64)> = tf
                .into_iter()
                .map(|(id, (n, w))| (id, (1.0 + f64::ln(n)) * w))
                .collect();
            v.sort_unstable_by_key(|(id, _)| *id);
            let norm = v.iter().map(|(_, w)| w * w).sum::<f64>().sqrt();
            if norm > 0.0 {
                for (_, w) in &mut v {
                    *w /= norm;
                }
            }
            let mut key: Vec<u32> = v.iter().map(|(id, _)| *id * 3).collect();

            let mut ids: Vec<(u32, f64)> = p
                .identifiers
                .iter()
                .map(|i| (words.id(i), idf.weight(i)))
                .collect();
            ids.sort_unstable_by_key(|(id, _)| *id);
            ids.dedup_by_key(|(id, _)| *id);
            key.extend(ids.iter().map(|(id, _)| *id * 3));

            let mut q: Vec<u32> = p.quote_lines.iter().map(|l| quotes_ids.id(l)).collect();
            q.sort_unstable();
            q.dedup();

            key.extend(names.iter().map(|n| files.id(n) * 3 + 1));
            key.sort_unstable();
            key.dedup();

            vectors.push(SparseVector(v));
            identifiers.push(SparseVector(ids));
            quotes.push(q);
            keys.push(key);
        }
        Corpus {
            profiles,
            idf,
            vectors,
            identifiers,
            quotes,
            keys,
        }
    }

    pub fn len(&self) -> usize {
        self.profiles.len()
    }

    pub fn is_empty(&self) -> bool {
        self.profiles.is_empty()
    }

    /// Blocking keys of finding `i`: its words, identifiers and file names as integers. Two
    /// findings are compared only when they share a key that is rare enough to mean something.
    pub fn blocking_keys(&self, i: usize) -> &[u32] {
        &self.keys[i]
    }

    /// The evidence that findings `a` and `b` of the corpus name the same defect.
    pub fn evidence(&self, a: usize, b: usize) -> PairEvidence {
        let (pa, pb) = (&self.profiles[a], &self.profiles[b]);
        PairEvidence {
            text: self.vectors[a].dot(&self.vectors[b]).clamp(0.0, 1.0),
            identifiers: self.identifiers[a].jaccard(&self.identifiers[b]),
            quote: sorted_overlap(&self.quotes[a], &self.quotes[b]),
            location: location_relation(&pa.locations, &pb.locations),
        }
    }
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

/// The share of the shorter sorted list's members found in the other.
fn sorted_overlap(a: &[u32], b: &[u32]) -> f64 {
    let (small, large) = if a.len() < b.len() { (a, b) } else { (b, a) };
    if small.is_empty() {
        return 0.0;
    }
    let shared = small
        .iter()
        .filter(|x| large.binary_search(x).is_ok())
        .count();
    shared as f64 / small.len() as f64
}

/// Lower-case tokens: words of three letters or more without stopwords, numbers of two digits or
/// more, and identifiers both whole and split at camelCase and snake_case boundaries.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if raw.is_empty() {
            continue;
        }
        let parts = split_identifier(raw);
        if parts.len() > 1 {
            out.push(raw.to_lowercase());
        }
        for p in parts {
            let p = p.to_lowercase();
            let keep = if p.chars().all(|c| c.is_ascii_digit()) {
                p.len() >= 2
            } else {
                p.chars().count() >= 3 && !STOPWORDS.contains(&p.as_str())
            };
            if keep {
                out.push(stem(&p));
            }
        }
    }
    out
}

/// A light stemmer: plural and -ing/-ed endings, so "errors" meets "error".
fn stem(word: &str) -> String {
    for suffix in ["ing", "ed", "es", "s"] {
        if word.len() > suffix.len() + 3 && word.ends_with(suffix) && !word.ends_with("ss") {
            return word[..word.len() - suffix.len()].to_string();
        }
    }
    word.to_string()
}

/// Splits `ObservedGeneration`, `observed_generation`, `HTTPServer2` into their words.
pub fn split_identifier(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for piece in s.split('_').filter(|p| !p.is_empty()) {
        let chars: Vec<(usize, char)> = piece.char_indices().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (idx, c) = chars[i];
            let prev = chars[i - 1].1;
            let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
            let boundary = (c.is_uppercase() && (prev.is_lowercase() || prev.is_ascii_digit()))
                || (c.is_uppercase() && prev.is_uppercase() && next_lower)
                || (c.is_ascii_digit() != prev.is_ascii_digit());
            if boundary {
                parts.push(&piece[start..idx]);
                start = idx;
            }
        }
        parts.push(&piece[start..]);
    }
    parts
}

/// Text in single backticks that looks like an identifier or a code expression (not a path
/// with line numbers: locations are compared separately).
pub fn backticked(text: &str) -> BTreeSet<String> {
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
        out.insert(inner.to_lowercase());
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
        let corpus = Corpus::new(findings.iter().map(FindingProfile::of).collect());
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
    fn text_only_scores_are_scaled_and_located_ones_are_not() {
        let text_only = PairEvidence {
            text: 0.2,
            identifiers: 0.0,
            quote: 0.0,
            location: LocationRelation::Unknown,
        };
        assert!((text_only.score() - 0.3).abs() < 1e-9);
        let full = PairEvidence {
            text: 0.9,
            ..text_only
        };
        assert!((full.score() - TEXT_ONLY_WEIGHT).abs() < 1e-9);
        // With locations in different files the same text stays apart.
        let apart = PairEvidence {
            location: LocationRelation::Different,
            ..text_only
        };
        assert_eq!(apart.score(), 0.0);
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
        let corpus = Corpus::new([&a, &b, &c].iter().map(|f| FindingProfile::of(f)).collect());
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
