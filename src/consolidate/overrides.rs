//! Decisions made outside consolidation's own rules, applied by consolidation itself: the
//! validated proposal of a synthesizer model (`crate::synthesize`). They name source findings
//! by agent and id only, so a merged finding's attribution is still the list of the source
//! findings it holds, and every other rule (representative, calibration, confidence, tier,
//! verdict) runs on the new grouping exactly as it does on its own.

use std::collections::{BTreeMap, BTreeSet};

use crate::types::{MergedFinding, Severity, Tier};

/// A source finding: the agent's short name and the finding's id in its review.
pub type SourceKey = (String, String);

/// What to do differently from consolidation's own clustering.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// Who decided, as notes name it: "the synthesizer (Claude)".
    pub by: String,
    /// Each group is one merged finding; its members leave the clusters they were in.
    pub groups: Vec<Vec<SourceKey>>,
    /// Findings set aside (any of their sources names them), with the reason: they move to
    /// "Low Confidence", kept, never deleted.
    pub drops: BTreeMap<SourceKey, String>,
    /// New severities (any source names the finding), with the reason.
    pub severities: BTreeMap<SourceKey, (Severity, String)>,
}

impl Overrides {
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty() && self.drops.is_empty() && self.severities.is_empty()
    }

    /// The clusters with every group's members taken out of theirs and the groups added.
    /// `keys[i]` names source `i`; members of a group that name no source are ignored (the
    /// caller validated them).
    pub fn regroup(&self, clusters: Vec<Vec<usize>>, keys: &[SourceKey]) -> Vec<Vec<usize>> {
        if self.groups.is_empty() {
            return clusters;
        }
        let index: BTreeMap<&SourceKey, usize> =
            keys.iter().enumerate().map(|(i, k)| (k, i)).collect();
        let grouped: Vec<Vec<usize>> = self
            .groups
            .iter()
            .map(|g| g.iter().filter_map(|k| index.get(k).copied()).collect())
            .filter(|g: &Vec<usize>| !g.is_empty())
            .collect();
        let taken: BTreeSet<usize> = grouped.iter().flatten().copied().collect();
        let mut out: Vec<Vec<usize>> = clusters
            .into_iter()
            .map(|c| c.into_iter().filter(|i| !taken.contains(i)).collect())
            .filter(|c: &Vec<usize>| !c.is_empty())
            .collect();
        out.extend(grouped.into_iter().map(|mut g| {
            g.sort_unstable();
            g
        }));
        // Clusters are in source order, as consolidation made them.
        out.sort_by_key(|c| c[0]);
        out
    }

    /// Applies the severity changes and drops that name one of `f`'s sources, each with its
    /// reason in the finding's calibration note.
    pub fn apply(&self, f: &mut MergedFinding) {
        let names = |map_has: &dyn Fn(&SourceKey) -> bool| {
            f.sources
                .iter()
                .map(|s| (s.agent.clone(), s.id.clone()))
                .find(|k| map_has(k))
        };
        let mut notes: Vec<String> = f.calibration.iter().cloned().collect();
        if let Some(key) = names(&|k| self.severities.contains_key(k))
            && let Some((severity, reason)) = self.severities.get(&key)
            && *severity != f.severity
        {
            notes.push(format!(
                "{}: {} → {} ({reason})",
                self.by, f.severity, severity
            ));
            f.severity = *severity;
        }
        if let Some(key) = names(&|k| self.drops.contains_key(k))
            && let Some(reason) = self.drops.get(&key)
        {
            notes.push(format!("{} set it aside: {reason}", self.by));
            f.tier = Tier::LowConfidence;
        }
        if !notes.is_empty() {
            f.calibration = Some(notes.join("; "));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(a: &str, id: &str) -> SourceKey {
        (a.to_string(), id.to_string())
    }

    #[test]
    fn groups_take_their_members_out_of_their_clusters() {
        let keys = vec![
            key("a", "I1"),
            key("b", "I1"),
            key("a", "S1"),
            key("c", "I2"),
        ];
        let clusters = vec![vec![0, 1], vec![2], vec![3]];
        let ov = Overrides {
            // Split a:I1 from b:I1, and merge b:I1 with c:I2.
            groups: vec![vec![key("b", "I1"), key("c", "I2")]],
            ..Overrides::default()
        };
        assert_eq!(
            ov.regroup(clusters, &keys),
            vec![vec![0], vec![1, 3], vec![2]]
        );
    }

    #[test]
    fn demotions_and_drops_carry_their_reason_and_keep_the_finding() {
        let mut f: MergedFinding = serde_json::from_value(serde_json::json!({
            "id": "C1", "title": "t", "body": "b", "severity": "critical",
            "agents": ["a"], "sources": [{"agent": "a", "id": "C1", "severity": "critical"}],
            "calibration": "earlier note"
        }))
        .unwrap();
        let mut ov = Overrides {
            by: "the synthesizer (T)".into(),
            ..Overrides::default()
        };
        ov.severities
            .insert(key("a", "C1"), (Severity::Suggestion, "style only".into()));
        ov.apply(&mut f);
        assert_eq!(f.severity, Severity::Suggestion);
        assert_eq!(
            f.calibration.as_deref(),
            Some("earlier note; the synthesizer (T): critical → suggestion (style only)")
        );
        assert_eq!(f.tier, Tier::Shown);
        ov.drops.insert(key("a", "C1"), "not reachable".into());
        ov.apply(&mut f);
        assert_eq!(f.tier, Tier::LowConfidence, "set aside, not deleted");
        assert!(
            f.calibration
                .unwrap()
                .ends_with("the synthesizer (T) set it aside: not reachable")
        );
    }
}
