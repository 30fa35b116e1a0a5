//! Merging the prose sections: design observations, testing gaps, documentation notes and
//! acknowledged limitations. The same clustering as findings, on text alone, so that two agents
//! praising the same thing become one bullet attributed to both.

use crate::types::{AttributedNote, Finding, MergedObservation, Observation};

use super::cluster::cluster;
use super::similarity::{Corpus, FindingProfile};

/// A note of one agent, before merging.
#[derive(Debug, Clone)]
pub struct Note {
    /// Index of the agent in reviewer order.
    pub agent: usize,
    pub title: Option<String>,
    pub text: String,
}

/// Merges notes of different agents that say the same thing. Each group keeps the longest
/// text and lists its agents in reviewer order.
pub fn merge_notes(notes: &[Note], agent_names: &[String]) -> Vec<AttributedNote> {
    group(notes)
        .into_iter()
        .map(|members| {
            let best = members
                .iter()
                .copied()
                .max_by_key(|&i| (notes[i].text.len(), std::cmp::Reverse(i)))
                .unwrap_or(members[0]);
            let mut agents: Vec<usize> = members.iter().map(|&i| notes[i].agent).collect();
            agents.sort_unstable();
            agents.dedup();
            AttributedNote {
                title: notes[best].title.clone(),
                text: notes[best].text.clone(),
                agents: agents.iter().map(|&a| agent_names[a].clone()).collect(),
            }
        })
        .collect()
}

/// Merges design observations of one kind (the caller keeps concerns and strengths apart).
/// Scope tags of all members are kept.
pub fn merge_observations(
    observations: &[(usize, Observation)],
    agent_names: &[String],
) -> Vec<MergedObservation> {
    let notes: Vec<Note> = observations
        .iter()
        .map(|(agent, o)| Note {
            agent: *agent,
            title: o.title.clone(),
            text: o.text.clone(),
        })
        .collect();
    let merged = merge_notes(&notes, agent_names);
    let groups = group(&notes);
    merged
        .into_iter()
        .zip(groups)
        .map(|(note, members)| {
            let mut scopes: Vec<String> = Vec::new();
            for &i in &members {
                for s in &observations[i].1.scopes {
                    if !scopes.contains(s) {
                        scopes.push(s.clone());
                    }
                }
            }
            MergedObservation {
                kind: observations[members[0]].1.kind,
                title: note.title,
                text: note.text,
                scopes,
                agents: note.agents,
            }
        })
        .collect()
}

fn group(notes: &[Note]) -> Vec<Vec<usize>> {
    let profiles: Vec<FindingProfile> = notes
        .iter()
        .map(|n| {
            let mut f = Finding::new("", n.title.clone().unwrap_or_default());
            f.explanation = n.text.clone();
            FindingProfile::of(&f)
        })
        .collect();
    let agents: Vec<usize> = notes.iter().map(|n| n.agent).collect();
    cluster(&Corpus::new(profiles, agents))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_praise_from_two_agents_becomes_one_note() {
        let names = vec!["claude".to_string(), "codex".to_string()];
        let notes = vec![
            Note {
                agent: 0,
                title: None,
                text: "The explicit `Requeue: true` after deleting the input ConfigMap avoids a silent stall.".into(),
            },
            Note {
                agent: 1,
                title: None,
                text: "The explicit `Requeue: true` after deleting the unwatched ConfigMap is right; it avoids a stall.".into(),
            },
            Note {
                agent: 1,
                title: None,
                text: "Making spec.namespace immutable guards against orphaned children.".into(),
            },
        ];
        let merged = merge_notes(&notes, &names);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].agents, ["claude", "codex"]);
        assert_eq!(merged[1].agents, ["codex"]);
    }
}
