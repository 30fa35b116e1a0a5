//! Clustering: which findings of different agents name the same defect.
//!
//! Pairs are scored with [`similarity`](super::similarity); the best pairs merge first, and two
//! clusters merge only when no agent would appear twice (one agent's two findings are two
//! defects, by its own account) and the findings of the one agree with those of the other pair
//! by pair, on average (average linkage): a chain of resemblances (A like B, B like C) does not
//! make A and C one defect.
//!
//! Only pairs that share a blocking key are scored ([`candidate_pairs_with_stats`]): a rare
//! word, an identifier or quoted line, or a place (file and bucket of lines). A key that more
//! findings share than [`max_posting`] allows names several defects, so its findings are paired
//! only when they share a second such key as well; what even then is too common is compared
//! with its neighbours in a window. Nothing is dropped unseen: [`CandidateStats`] counts both
//! cases. The work grows with the number of findings times the keys each holds, not with its
//! square.

use std::collections::HashMap;

use super::FastMap;
use super::similarity::{Corpus, RowScorer};

/// Two findings with a score at or above this are taken to name the same defect.
pub const MERGE_THRESHOLD: f64 = 0.30;

/// How many findings may share a key before it is refined: twice the number of agents (one
/// defect is named at most once per agent), and never fewer than 16.
pub fn max_posting(agents: usize) -> usize {
    (2 * agents).max(16)
}

/// Groups the findings of `corpus` into clusters (lists of indices into the corpus), each
/// holding at most one finding per agent. Clusters come out in the order of their first finding.
pub fn cluster(corpus: &Corpus) -> Vec<Vec<usize>> {
    cluster_at(corpus, MERGE_THRESHOLD)
}

/// [`cluster`] with another merge threshold (the benchmark's leave-one-out tuning).
pub fn cluster_at(corpus: &Corpus, threshold: f64) -> Vec<Vec<usize>> {
    let agents = &corpus.agents;
    let (candidates, _) = candidate_pairs_with_stats(corpus);
    let mut scored = score_candidates(corpus, &candidates, threshold);
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
        if members[cb]
            .iter()
            .any(|&i| members[ca].iter().any(|&j| agents[i] == agents[j]))
        {
            continue;
        }
        if !all_agree(
            &members[ca],
            &members[cb],
            corpus,
            threshold,
            &mut pair_cache,
        ) {
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

/// The candidate pairs that score at least `threshold`, with their scores. The pairs come sorted
/// by their first finding, so each run of one first finding is scored against one dense row
/// ([`RowScorer`]); the runs are split into a few slices per thread, each slice
/// scored on a thread of its own with its own row (scoring is most of clustering's time, and
/// the pairs are independent).
fn score_candidates(
    corpus: &Corpus,
    candidates: &[(usize, usize)],
    threshold: f64,
) -> Vec<(f64, usize, usize)> {
    use rayon::prelude::*;
    let slices = rayon::current_num_threads().max(1) * 4;
    let target = candidates.len().div_ceil(slices).max(1);
    // Cut at the first change of first finding after each `target` pairs.
    let mut cuts = vec![0];
    let mut at = target;
    while at < candidates.len() {
        let row = candidates[at - 1].0;
        while at < candidates.len() && candidates[at].0 == row {
            at += 1;
        }
        cuts.push(at);
        at += target;
    }
    cuts.push(candidates.len());
    cuts.dedup();
    cuts.par_windows(2)
        .map(|w| {
            let mut scorer = RowScorer::new(corpus);
            candidates[w[0]..w[1]]
                .iter()
                .filter_map(|&(a, b)| scorer.score_if_at_least(a, b, threshold).map(|s| (s, a, b)))
                .collect::<Vec<_>>()
        })
        .flatten_iter()
        .collect()
}

/// Average linkage: the mean score over every cross pair of the two clusters reaches the
/// threshold, so each finding of the merged cluster is checked against each of the other
/// (complete linkage, every pair above the threshold, splits reworded findings of one defect
/// that agree on average: on the benchmark it loses a sixth of the recall).
fn all_agree(
    a: &[usize],
    b: &[usize],
    corpus: &Corpus,
    threshold: f64,
    cache: &mut HashMap<(usize, usize), f64>,
) -> bool {
    let mut total = 0.0;
    for &x in a {
        for &y in b {
            let key = (x.min(y), x.max(y));
            total += *cache
                .entry(key)
                .or_insert_with(|| corpus.evidence(key.0, key.1).score());
        }
    }
    total / (a.len() * b.len()) as f64 >= threshold
}

/// What the blocking step did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CandidateStats {
    /// Distinct cross-agent pairs handed to scoring.
    pub pairs: usize,
    /// Keys shared by more than [`max_posting`] findings: their findings are paired only
    /// through a second such key.
    pub common_keys: usize,
    /// Pairs of common keys still shared by more than [`max_posting`] findings, compared
    /// within a window of that many neighbours.
    pub windowed_groups: usize,
}

/// How many of a finding's common keys (the least common first) are combined in pairs.
const COMBINED_KEYS: usize = 6;

/// Cross-agent pairs `(a, b)` with `a < b` that share at least one blocking key.
pub fn candidate_pairs(corpus: &Corpus) -> Vec<(usize, usize)> {
    candidate_pairs_with_stats(corpus).0
}

/// [`candidate_pairs`] and what it took to find them.
///
/// A key held by at most [`max_posting`] findings pairs them all. A key held by more (a common
/// word, `err`, a file every finding cites) names several defects: such keys are combined two
/// by two within each finding (its [`COMBINED_KEYS`] least common ones), and the findings that
/// share a combination are paired; a combination still held by too many is compared with its
/// neighbours in a window of [`max_posting`]. Pairs sharing a rarer key meet through that key
/// anyway, so nothing but pairs whose only common ground is common words is left to the window.
pub fn candidate_pairs_with_stats(corpus: &Corpus) -> (Vec<(usize, usize)>, CandidateStats) {
    let agents = &corpus.agents;
    let agent_count = {
        let mut d = agents.clone();
        d.sort_unstable();
        d.dedup();
        d.len()
    };
    let limit = max_posting(agent_count);
    let mut postings: FastMap<u64, Vec<u32>> = FastMap::default();
    for i in 0..corpus.len() {
        for &key in corpus.blocking_keys(i) {
            postings.entry(key).or_default().push(i as u32);
        }
    }
    let mut stats = CandidateStats::default();
    let mut pairs: Vec<u64> = Vec::new();
    for list in postings.values() {
        if (2..=limit).contains(&list.len()) {
            all_pairs(list, agents, &mut pairs);
        } else if list.len() > limit {
            stats.common_keys += 1;
        }
    }
    // Combinations of common keys, per finding.
    let mut combined: FastMap<(u64, u64), Vec<u32>> = FastMap::default();
    for i in 0..corpus.len() {
        let mut common: Vec<(usize, u64)> = corpus
            .blocking_keys(i)
            .iter()
            .map(|k| (postings[k].len(), *k))
            .filter(|&(n, _)| n > limit)
            .collect();
        common.sort_unstable();
        common.truncate(COMBINED_KEYS);
        for (x, &(_, a)) in common.iter().enumerate() {
            for &(_, b) in &common[x + 1..] {
                combined
                    .entry((a.min(b), a.max(b)))
                    .or_default()
                    .push(i as u32);
            }
        }
    }
    let mut crowded: Vec<((u64, u64), Vec<u32>)> = Vec::new();
    for (key, list) in combined {
        if (2..=limit).contains(&list.len()) {
            all_pairs(&list, agents, &mut pairs);
        } else if list.len() > limit {
            crowded.push((key, list));
        }
    }
    crowded.sort_unstable_by_key(|(key, _)| *key);
    stats.windowed_groups = crowded.len();
    for (_, list) in crowded {
        window(&list, limit, agents, &mut pairs);
    }
    pairs.sort_unstable();
    pairs.dedup();
    stats.pairs = pairs.len();
    let out = pairs
        .into_iter()
        .map(|p| ((p >> 32) as usize, (p & 0xffff_ffff) as usize))
        .collect();
    (out, stats)
}

/// Every cross-agent pair of `list`.
fn all_pairs(list: &[u32], agents: &[usize], pairs: &mut Vec<u64>) {
    for (k, &a) in list.iter().enumerate() {
        for &b in &list[k + 1..] {
            if agents[a as usize] != agents[b as usize] {
                pairs.push(pair_code(a, b));
            }
        }
    }
}

/// Compares each finding of a group too large to pair in full with the next `width` findings
/// of other agents, in index order: bounded work. A run of the finding's own agent is jumped in
/// one step (`next_other`), so a group of one agent's findings (one review that floods) costs
/// its length, not its square.
fn window(group: &[u32], width: usize, agents: &[usize], pairs: &mut Vec<u64>) {
    let agent = |k: usize| agents[group[k] as usize];
    // next_other[k]: the first position after k whose agent is not the agent at k.
    let mut next_other = vec![group.len(); group.len()];
    for k in (0..group.len().saturating_sub(1)).rev() {
        next_other[k] = if agent(k + 1) == agent(k) {
            next_other[k + 1]
        } else {
            k + 1
        };
    }
    for (k, &a) in group.iter().enumerate() {
        let mut taken = 0;
        let mut j = k + 1;
        while j < group.len() && taken < width {
            if agent(j) == agent(k) {
                // A run of this finding's agent: the next position of another agent is one
                // step away.
                j = next_other[j];
                continue;
            }
            pairs.push(pair_code(a, group[j]));
            taken += 1;
            j += 1;
        }
    }
}

fn pair_code(a: u32, b: u32) -> u64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    u64::from(lo) << 32 | u64::from(hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consolidate::similarity::FindingProfile;
    use crate::types::Finding;

    fn corpus(profiles: Vec<FindingProfile>, agents: &[usize]) -> Corpus {
        Corpus::new(profiles, agents.to_vec())
    }

    fn profile(title: &str, loc: &str) -> FindingProfile {
        let mut f = Finding::new("x", title);
        f.locations = vec![loc.parse().unwrap()];
        FindingProfile::of(&f)
    }

    #[test]
    fn one_agent_never_appears_twice_in_a_cluster() {
        let corpus = corpus(
            vec![
                profile("Swallowed error leaks ConfigMap", "a.go:10"),
                profile("Swallowed error leaks ConfigMap", "a.go:10"),
                profile("Swallowed error leaks ConfigMap", "a.go:10"),
            ],
            &[0, 0, 1],
        );
        assert_eq!(cluster(&corpus), vec![vec![0, 2], vec![1]]);
    }

    #[test]
    fn unrelated_findings_stay_apart() {
        let corpus = corpus(
            vec![
                profile("Swallowed error leaks ConfigMap", "a.go:10"),
                profile(
                    "Comment says bytes but code counts runes",
                    "conditions.go:12",
                ),
            ],
            &[0, 1],
        );
        assert_eq!(cluster(&corpus), vec![vec![0], vec![1]]);
    }

    fn located(title: &str, body: &str, loc: &str) -> FindingProfile {
        let mut f = Finding::new("x", title);
        f.explanation = body.into();
        f.locations = vec![loc.parse().unwrap()];
        FindingProfile::of(&f)
    }

    #[test]
    fn different_defects_on_the_same_lines_naming_the_same_function_stay_apart() {
        let corpus = corpus(
            vec![
                located(
                    "`parseConfig` leaks the file handle",
                    "`parseConfig` opens the file and returns early on a bad header without \
                     closing it, so every malformed upload leaks a descriptor.",
                    "src/config.rs:40-52",
                ),
                located(
                    "`parseConfig` accepts negative timeouts",
                    "`parseConfig` reads `timeout` as a signed integer and never checks the \
                     sign; a negative value disables the watchdog.",
                    "src/config.rs:40-52",
                ),
                located(
                    "File handle leaked by `parseConfig` on bad headers",
                    "On a malformed header `parseConfig` returns before closing the file: the \
                     descriptor leaks once per upload.",
                    "config.rs:44",
                ),
            ],
            &[0, 1, 2],
        );
        assert_eq!(cluster(&corpus), vec![vec![0, 2], vec![1]]);
    }

    /// Two agents' findings crowded on one line (the place says nothing): the last of each shares
    /// with the other's `shared` words, and nothing else but filler.
    fn crowd_sharing(shared: &str) -> Corpus {
        let filler = [
            "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
            "juliet", "kilo", "lima",
        ];
        let mut profiles = Vec::new();
        let mut agents = Vec::new();
        for agent in 0..2 {
            for k in 0..5 {
                let own = filler[agent * 6 + k];
                profiles.push(located(
                    &format!("{own} misbehaves"),
                    &format!("the {own} path misbehaves"),
                    "src/hot.rs:10",
                ));
                agents.push(agent);
            }
            let own = filler[agent * 6 + 5];
            profiles.push(located(
                &format!("{shared} {own}"),
                &format!("{shared} {shared} then {own} {own} again {shared}"),
                "src/hot.rs:10",
            ));
            agents.push(agent);
        }
        corpus(profiles, &agents)
    }

    #[test]
    fn one_shared_word_at_a_crowded_place_does_not_merge_but_two_do() {
        // One rare word, repeated on both sides: a coincidence as often as a defect.
        let alone = cluster(&crowd_sharing("quorum"));
        assert!(alone.iter().all(|c| c.len() == 1), "{alone:?}");
        // Two words of the claim in common: the same defect.
        let together = cluster(&crowd_sharing("quorum stale"));
        assert!(together.contains(&vec![5, 11]), "{together:?}");
    }

    /// Two agents, `n` findings each, all on one line and naming `err`, worded alike; finding 7
    /// of each also names a rare function.
    fn crowded(n: usize) -> Corpus {
        let mut profiles = Vec::new();
        let mut agents = Vec::new();
        for agent in 0..2 {
            for k in 0..n {
                let body = if k == 7 {
                    "the `err` from flushJournal is dropped".to_string()
                } else {
                    format!("the `err` of step{agent}x{k} is logged")
                };
                profiles.push(located(&format!("Issue {k}"), &body, "src/hot.rs:10"));
                agents.push(agent);
            }
        }
        corpus(profiles, &agents)
    }

    /// The window as it was first written: every later finding scanned, own agent skipped.
    fn window_by_scanning(group: &[u32], width: usize, agents: &[usize]) -> Vec<u64> {
        let mut pairs = Vec::new();
        for (k, &a) in group.iter().enumerate() {
            let mut taken = 0;
            for &b in &group[k + 1..] {
                if agents[a as usize] == agents[b as usize] {
                    continue;
                }
                pairs.push(pair_code(a, b));
                taken += 1;
                if taken == width {
                    break;
                }
            }
        }
        pairs
    }

    #[test]
    fn the_window_jumps_runs_of_one_agent_and_pairs_as_a_scan_would() {
        // Runs of one agent of every length between findings of others.
        let agents: Vec<usize> = (0..400)
            .map(|i| [0, 0, 0, 1, 0, 2, 2, 0, 0, 0, 0, 1][i % 12])
            .collect();
        let group: Vec<u32> = (0..400).collect();
        for width in [1, 3, 20] {
            let mut pairs = Vec::new();
            window(&group, width, &agents, &mut pairs);
            assert_eq!(
                pairs,
                window_by_scanning(&group, width, &agents),
                "width {width}"
            );
        }
        // One agent's flood: no pair, and the walk is one step per finding.
        let flood = vec![0; 200_000];
        let group: Vec<u32> = (0..200_000).collect();
        let mut pairs = Vec::new();
        window(&group, 20, &flood, &mut pairs);
        assert!(pairs.is_empty());
    }

    #[test]
    fn keys_many_findings_share_pair_them_in_bounded_work() {
        let (pairs, stats) = candidate_pairs_with_stats(&crowded(100));
        assert!(stats.common_keys >= 2, "{stats:?}");
        assert!(stats.windowed_groups >= 1, "{stats:?}");
        assert_eq!(stats.pairs, pairs.len());
        // The rare word pairs the two findings that name it, whatever the crowd.
        assert!(pairs.contains(&(7, 107)));
        // Twice the findings, about twice the pairs (all pairs would be four times).
        let (more, _) = candidate_pairs_with_stats(&crowded(200));
        assert!(
            more.len() as f64 <= 2.2 * pairs.len() as f64,
            "{} then {} pairs",
            pairs.len(),
            more.len()
        );
        assert!(more.contains(&(7, 207)));
    }
}
