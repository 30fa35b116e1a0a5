//! Notes as evidence. An agent's testing, documentation and design notes are not findings, but
//! one that cites a place in the code says something about that place:
//!
//! - a note that cites the lines of a finding and says the same thing (the same evidence as
//!   clustering: [`similarity`](super::similarity), at the merge threshold) backs that finding:
//!   its agent is added to the finding's agents as support, "also noted by Codex in Testing";
//! - a testing or documentation note that cites a place no finding covers is a gap of that file:
//!   it becomes a suggestion of category `gap`, attributed to the agents that noted it.
//!
//! A note that cites no place stays where it is: it is about the change as a whole.

use std::sync::OnceLock;

use regex::Regex;

use crate::types::{Finding, Location};
use crate::verify::coverage::paths_match;

use super::cluster::MERGE_THRESHOLD;
use super::similarity::{Corpus, FindingProfile, LocationRelation, location_relation};

/// A note of one agent that cites a place.
#[derive(Debug, Clone)]
pub struct LocatedNote {
    /// The agent's index in reviewer order.
    pub agent: usize,
    /// `Testing`, `Documentation` or `Design`.
    pub section: &'static str,
    /// 1-based position in its section of the agent's review.
    pub position: usize,
    pub text: String,
    pub locations: Vec<Location>,
}

impl LocatedNote {
    /// How a source list names it: `Testing 2`.
    pub fn id(&self) -> String {
        format!("{} {}", self.section, self.position)
    }
}

/// Places a note cites: `path/file.ext:12` or `file.ext:12-20`, in backticks or not. A path
/// needs an extension and a line: "line 123" alone says no file.
pub fn cited_locations(text: &str) -> Vec<Location> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"(?:^|[\s`(\[])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z]\w*:\d+(?:[-–]\d+)?)")
            .expect("the location pattern is valid")
    });
    let mut out: Vec<Location> = Vec::new();
    for c in re.captures_iter(text) {
        if let Ok(l) = c[1].parse::<Location>()
            && l.start.is_some()
            && !out.contains(&l)
        {
            out.push(l);
        }
    }
    out
}

/// Whether a note says something is missing or wrong (a gap), rather than what is fine:
/// "not documented", "no test covers", "should read", "misleading". Only such a note becomes a
/// suggestion when no finding covers its place.
pub fn reads_as_gap(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?i)\b(missing|lacks?|lacking|untested|undocumented|uncovered|no (unit |integration )?(tests?|docs?|documentation|comments?|coverage)|not (tested|covered|documented|explained|described|mentioned|exercised)|(does|do|did)( not|n't) (test|cover|exercise|document|explain|mention)|should|needs?|wrong|incorrect|inaccurate|misleading|outdated|stale|typo|grammar|unclear|would slip|slip through)\b",
        )
        .expect("the gap pattern is valid")
    });
    re.is_match(text)
}

/// A note's title: its bold lead when it has one, else its first sentence, at most 100
/// characters.
pub fn note_title(text: &str) -> String {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix("**")
        && let Some(end) = rest.find("**")
        && end > 0
    {
        return rest[..end].trim().trim_end_matches([':', '.']).to_string();
    }
    let first = super::summary::sentences(text)
        .into_iter()
        .next()
        .unwrap_or_default();
    let mut title: String = first.chars().take(100).collect();
    if first.chars().count() > 100 {
        title.push('…');
    }
    title
}

/// For each note, the cluster of findings it backs, if any: among the findings at or near the
/// lines the note cites, the one whose text is most like the note's, when the two texts read
/// alike at the merge threshold as text alone (a note speaks of the test or the doc of a
/// defect, not of the defect: the place ties them, the words must name the same subject).
/// `findings[i]` is finding `i` of the clusters' indices.
pub fn backing(
    notes: &[LocatedNote],
    clusters: &[Vec<usize>],
    findings: &[&Finding],
    agents: &[usize],
) -> Vec<Option<usize>> {
    if notes.is_empty() {
        return Vec::new();
    }
    // Only findings in a file some note cites are compared.
    let mut candidates: Vec<usize> = Vec::new();
    for (i, f) in findings.iter().enumerate() {
        let cited = f.locations.iter().any(|l| {
            notes
                .iter()
                .any(|n| n.locations.iter().any(|m| paths_match(&l.path, &m.path)))
        });
        if cited {
            candidates.push(i);
        }
    }
    let mut cluster_of = vec![usize::MAX; findings.len()];
    for (c, members) in clusters.iter().enumerate() {
        for &i in members {
            cluster_of[i] = c;
        }
    }
    // Profiles without places: the texts are compared as text alone.
    let unplaced = |f: &Finding| {
        let mut p = FindingProfile::of(f);
        p.locations.clear();
        p
    };
    let mut profiles: Vec<FindingProfile> =
        candidates.iter().map(|&i| unplaced(findings[i])).collect();
    let mut corpus_agents: Vec<usize> = candidates.iter().map(|&i| agents[i]).collect();
    for n in notes {
        let mut f = Finding::new("", "");
        f.explanation = n.text.clone();
        profiles.push(unplaced(&f));
        corpus_agents.push(n.agent);
    }
    let corpus = Corpus::new(profiles, corpus_agents);
    notes
        .iter()
        .enumerate()
        .map(|(k, n)| {
            let note = candidates.len() + k;
            candidates
                .iter()
                .enumerate()
                .filter(|&(_, &i)| {
                    matches!(
                        location_relation(&n.locations, &findings[i].locations),
                        LocationRelation::Overlap | LocationRelation::Near
                    )
                })
                .map(|(j, &i)| (corpus.evidence(j, note).score(), i))
                .filter(|&(s, _)| s >= MERGE_THRESHOLD)
                .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
                .map(|(_, i)| cluster_of[i])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_cite_places_with_a_file_and_a_line() {
        let l = cited_locations(
            "The BATS test misses the state that wedges the finalizer in \
             `pkg/app/app_controller.go:73-86`; see also lima.yaml:14 and (conditions.go:12). \
             Reused at line 123. Version 1.2:3 is not a file.",
        );
        let shown: Vec<String> = l.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "pkg/app/app_controller.go:73-86",
                "lima.yaml:14",
                "conditions.go:12"
            ]
        );
        assert!(cited_locations("No place here, only `RemoveOwnedFinalizer`.").is_empty());
    }

    #[test]
    fn a_gap_says_what_is_missing_or_wrong() {
        assert!(reads_as_gap(
            "No test covers two instances starting at once (`lima.yaml:14`)."
        ));
        assert!(reads_as_gap(
            "`controller.go:63`: the comment should read \"which allows\"."
        ));
        assert!(reads_as_gap(
            "The template is not documented (`lima.yaml:1`)."
        ));
        assert!(!reads_as_gap(
            "`predicates.go:5-7`: package-level doc is terse but accurate."
        ));
        assert!(!reads_as_gap(
            "`kube.go:198`: the docstring correctly notes the fallback."
        ));
    }

    #[test]
    fn a_note_title_is_its_bold_lead_or_first_sentence() {
        assert_eq!(
            note_title("**Crash recovery during creation** — App created, then a crash."),
            "Crash recovery during creation"
        );
        assert_eq!(
            note_title("`controller.go:63` has a grammar slip. Should read ..."),
            "`controller.go:63` has a grammar slip."
        );
    }
}
