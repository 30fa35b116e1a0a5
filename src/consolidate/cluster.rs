//! Clustering: which findings of different agents name the same defect.
//!
//! Pairs are scored with [`similarity`](super::similarity); the best pairs merge first, and two
//! clusters merge only when no agent would appear twice (one agent's two findings are two
//! defects, by its own account) and their average link stays above the threshold, so a chain of
//! weak resemblances cannot glue unrelated findings together. Comparisons are limited to pairs
//! that share a blocking key (a file, an identifier, a rare word), which keeps the work close to
//! linear in the number of findings.

use std::collections::{HashMap, HashSet};

use super::similarity::Corpus;

/// Two findings with a score at or above this are taken to name the same defect.
pub const MERGE_THRESHOLD: f64 = 0.30;

/// Keys shared by more findings than this say little about any pair: they are skipped for
/// blocking (the pairs may still meet through a rarer key).
const MAX_POSTING: usize = 64;

/// Groups the findings of `corpus` into clusters (lists of indices into the corpus), each
/// holding at most one finding per agent; `agents[i]` is the agent of finding `i`. Clusters
/// come out in the order of their first finding.
pub fn cluster(corpus: &Corpus, agents: &[usize]) -> Vec<Vec<usize>> {
    let candidates = candidate_pairs(corpus, agents);
    let mut scored: Vec<(f64, usize, usize)> = candidates
        .into_iter()
        .filter_map(|(a, b)| {
            let s = corpus.evidence(a, b).score();
            (s >= MERGE_THRESHOLD).then_some((s, a, b))
        })
        .collect();
    // Best pairs first; ties broken by position so the result never depends on hash order.
    scored.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));

    let mut cluster_of: Vec<usize> = (0..corpus.len()).collect();
    let mut members: Vec<Vec<usize>> = (0..corpus.len()).map(|i| vec![i]).collect();
    let mut pair_cache: HashMap<(usize, usize), f64> =
        scored.iter().map(|&(s, a, b)| ((a, b), s)).collect();

    for (_, a, b) in scored {
        let (ca, cb) = (cluster_of[a], cluster_of[b]);
        if ca == cb {
            continue;
        }
        let agents_a: HashSet<usize> = members[ca].iter().map(|&i| agents[i]).collect();
        if members[cb].iter().any(|&i| agents_a.contains(&agents[i])) {
            continue;
        }
        if average_link(&members[ca], &members[cb], corpus, &mut pair_cache) < MERGE_THRESHOLD {
            continue;
        }
        let moved = std::mem::take(&mut members[cb]);
        for &i in &moved {
            cluster_of[i] = ca;
        }
        members[ca].extend(moved);
    }

    let mut clusters: Vec<Vec<usize>> = members.into_iter().filter(|m| !m.is_empty()).collect();
    for c in &mut clusters {
        c.sort_unstable();
    }
    clusters.sort_by_key(|c| c[0]);
    clusters
}

/// The mean score over every cross pair of two clusters.
fn average_link(
    a: &[usize],
    b: &[usize],
    corpus: &Corpus,
    cache: &mut HashMap<(usize, usize), f64>,
) -> f64 {
    let mut total = 0.0;
    for &x in a {
        for &y in b {
            let key = (x.min(y), x.max(y));
            total += *cache
                .entry(key)
                .or_insert_with(|| corpus.evidence(key.0, key.1).score());
        }
    }
    total / (a.len() * b.len()) as f64
}

/// Cross-agent pairs `(a, b)` with `a < b` that share at least one blocking key.
fn candidate_pairs(corpus: &Corpus, agents: &[usize]) -> Vec<(usize, usize)> {
    let mut postings: HashMap<u32, Vec<usize>> = HashMap::new();
    for i in 0..corpus.len() {
        for &key in corpus.blocking_keys(i) {
            postings.entry(key).or_default().push(i);
        }
    }
    let mut seen: HashSet<(usize, usize)> = HashSet::new();
    for list in postings.values() {
        if list.len() < 2 || list.len() > MAX_POSTING {
            continue;
        }
        for (k, &a) in list.iter().enumerate() {
            for &b in &list[k + 1..] {
                if agents[a] != agents[b] {
                    seen.insert((a.min(b), a.max(b)));
                }
            }
        }
    }
    let mut pairs: Vec<_> = seen.into_iter().collect();
    pairs.sort_unstable();
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consolidate::similarity::FindingProfile;
    use crate::types::Finding;

    fn profile(title: &str, loc: &str) -> FindingProfile {
        let mut f = Finding::new("x", title);
        f.locations = vec![loc.parse().unwrap()];
        FindingProfile::of(&f)
    }

    #[test]
    fn one_agent_never_appears_twice_in_a_cluster() {
        let corpus = Corpus::new(vec![
            profile("Swallowed error leaks ConfigMap", "a.go:10"),
            profile("Swallowed error leaks ConfigMap", "a.go:10"),
            profile("Swallowed error leaks ConfigMap", "a.go:10"),
        ]);
        assert_eq!(cluster(&corpus, &[0, 0, 1]), vec![vec![0, 2], vec![1]]);
    }

    #[test]
    fn unrelated_findings_stay_apart() {
        let corpus = Corpus::new(vec![
            profile("Swallowed error leaks ConfigMap", "a.go:10"),
            profile(
                "Comment says bytes but code counts runes",
                "conditions.go:12",
            ),
        ]);
        assert_eq!(cluster(&corpus, &[0, 1]), vec![vec![0], vec![1]]);
    }
}
