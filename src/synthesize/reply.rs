//! The synthesizer's reply: read as JSON and checked against the report it was given. Every
//! check is code; a reply passes only when all of them do:
//!
//! - every cited id is a source id of the report (`agent:id`);
//! - every decision has a reason;
//! - merges, drops and demotions take whole findings; a merge takes two or more;
//! - a split's groups are exactly one finding's source ids, two or more non-empty groups;
//! - a source id ends in one place at most (one merge, split or drop; untouched ones are kept);
//! - a demotion lowers the severity; nothing is raised;
//! - retro paragraphs name only the report's agents; the executive summary is not empty.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::input::source_id;
use crate::consolidate::overrides::{Overrides, SourceKey};
use crate::types::{Report, Severity};

/// A reply that passed every check.
#[derive(Debug, Clone, PartialEq)]
pub struct Accepted {
    pub summary: String,
    pub verdict_rationale: Option<String>,
    pub overrides: Overrides,
    /// Retro paragraphs by agent name.
    pub agents: BTreeMap<String, String>,
    /// "1 merge, 1 drop".
    pub changes: String,
}

/// The JSON object in a reply: the whole text, a ```` ```json ```` block, or the text from the
/// first `{` to the last `}` (models wrap JSON in prose).
fn json_of(text: &str) -> Result<Value, String> {
    let t = text.trim().trim_start_matches('\u{feff}');
    if !t.contains('{') {
        return Err("the reply holds no JSON object".into());
    }
    let candidates = [
        Some(t),
        crate::parse::json::fenced_json(t),
        t.find('{')
            .zip(t.rfind('}'))
            .filter(|(a, b)| a < b)
            .map(|(a, b)| &t[a..=b]),
    ];
    let mut last_err = String::from("the reply holds no JSON object");
    for c in candidates.into_iter().flatten() {
        match serde_json::from_str::<Value>(c) {
            Ok(v) if v.is_object() => return Ok(v),
            Ok(_) => last_err = "the reply's JSON is not an object".into(),
            Err(e) => last_err = format!("the reply is not valid JSON ({e})"),
        }
    }
    Err(last_err)
}

/// Where each source id sits in the report.
struct Index {
    /// source id → the index of the finding holding it.
    finding_of: BTreeMap<String, usize>,
    /// Per finding: its source ids and its id (`I1`) and severity.
    sources: Vec<BTreeSet<String>>,
    ids: Vec<String>,
    severity: Vec<Severity>,
    keys: BTreeMap<String, SourceKey>,
}

impl Index {
    fn new(report: &Report) -> Index {
        let mut idx = Index {
            finding_of: BTreeMap::new(),
            sources: Vec::new(),
            ids: Vec::new(),
            severity: Vec::new(),
            keys: BTreeMap::new(),
        };
        for (i, f) in report.findings.iter().enumerate() {
            let mut set = BTreeSet::new();
            for s in &f.sources {
                let id = source_id(s);
                idx.finding_of.insert(id.clone(), i);
                idx.keys.insert(id.clone(), (s.agent.clone(), s.id.clone()));
                set.insert(id);
            }
            idx.sources.push(set);
            idx.ids.push(f.id.clone());
            idx.severity.push(f.severity);
        }
        idx
    }
}

/// Checks `text` against `report`: the accepted decisions, or every reason it fails.
pub fn check(text: &str, report: &Report, by: &str) -> Result<Accepted, Vec<String>> {
    let value = json_of(text).map_err(|e| vec![e])?;
    let idx = Index::new(report);
    let mut errors: Vec<String> = Vec::new();
    let summary = executive_summary(&value, &mut errors);
    let rationale = value["verdict_rationale"]
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let agents = agent_paragraphs(&value, report, &mut errors);
    let decisions = decision_list(&value, &mut errors);
    let mut taken = Decisions::new(&idx, by);
    for (n, d) in decisions.iter().enumerate() {
        taken.take(n + 1, d, &mut errors);
    }
    taken.no_demotion_of_a_drop(&mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    let changes = taken.changes();
    Ok(Accepted {
        summary,
        verdict_rationale: rationale,
        overrides: taken.overrides,
        agents,
        changes,
    })
}

/// The executive summary, which must be there.
fn executive_summary(value: &Value, errors: &mut Vec<String>) -> String {
    let summary = value["executive_summary"]
        .as_str()
        .map(str::trim)
        .unwrap_or("")
        .to_string();
    if summary.is_empty() {
        errors.push("`executive_summary` is missing or empty".into());
    }
    summary
}

/// The retro paragraphs by agent: only the report's agents, each a paragraph of text.
fn agent_paragraphs(
    value: &Value,
    report: &Report,
    errors: &mut Vec<String>,
) -> BTreeMap<String, String> {
    let mut agents = BTreeMap::new();
    match &value["agents"] {
        Value::Null => {}
        Value::Object(map) => {
            for (name, text) in map {
                if !report.agents.iter().any(|a| &a.name == name) {
                    errors.push(format!(
                        "`agents` has a paragraph for `{name}`, which is not a reviewer of this \
                         report"
                    ));
                    continue;
                }
                match text.as_str().map(str::trim) {
                    Some(t) if !t.is_empty() => {
                        agents.insert(name.clone(), t.to_string());
                    }
                    _ => errors.push(format!("`agents.{name}` is not a paragraph of text")),
                }
            }
        }
        _ => errors.push("`agents` is not an object of agent name → paragraph".into()),
    }
    agents
}

/// The decisions, a list (none when absent).
fn decision_list(value: &Value, errors: &mut Vec<String>) -> Vec<Value> {
    match &value["decisions"] {
        Value::Null => Vec::new(),
        Value::Array(list) => list.clone(),
        _ => {
            errors.push("`decisions` is not a list".into());
            Vec::new()
        }
    }
}

/// A list of ids as given (each trimmed; a non-string is an empty id, which is unknown).
fn id_list(v: &Value) -> Option<Vec<String>> {
    v.as_array().map(|a| {
        a.iter()
            .map(|x| x.as_str().unwrap_or("").trim().to_string())
            .collect()
    })
}

/// The decisions checked so far and what they make.
struct Decisions<'i> {
    idx: &'i Index,
    overrides: Overrides,
    /// source id → the decision that placed it (1-based, as the errors count them).
    placed: BTreeMap<String, usize>,
    dropped: BTreeSet<String>,
    demotes: Vec<(usize, Vec<String>)>,
    counts: BTreeMap<&'static str, usize>,
}

impl<'i> Decisions<'i> {
    fn new(idx: &'i Index, by: &str) -> Self {
        Decisions {
            idx,
            overrides: Overrides {
                by: by.to_string(),
                ..Overrides::default()
            },
            placed: BTreeMap::new(),
            dropped: BTreeSet::new(),
            demotes: Vec::new(),
            counts: BTreeMap::new(),
        }
    }

    /// Checks decision `n` and records what it decides.
    fn take(&mut self, n: usize, d: &Value, errors: &mut Vec<String>) {
        let action = d["action"].as_str().unwrap_or("");
        let label = format!(
            "decision {n} ({})",
            if action.is_empty() {
                "no action"
            } else {
                action
            }
        );
        let reason = d["reason"].as_str().map(str::trim).unwrap_or("");
        if reason.is_empty() {
            errors.push(format!("{label} gives no reason"));
        }
        match action {
            "merge" => self.merge(n, &label, d, errors),
            "split" => self.split(n, &label, d, errors),
            "drop" => self.drop(n, &label, d, reason, errors),
            "demote" => self.demote(n, &label, d, reason, errors),
            other => errors.push(format!(
                "decision {n} has action `{other}`: use merge, split, drop or demote"
            )),
        }
    }

    /// A merge joins two or more whole findings.
    fn merge(&mut self, n: usize, label: &str, d: &Value, errors: &mut Vec<String>) {
        let Some(ids) = id_list(&d["sources"]) else {
            errors.push(format!("{label} has no `sources` list"));
            return;
        };
        if self.known(label, &ids, errors) {
            let touched = self.whole(label, &ids, errors);
            if touched.len() < 2 {
                errors.push(format!(
                    "{label} merges fewer than two findings: a merge joins two or more"
                ));
            }
        }
        self.place(n, label, &ids, errors);
        let group = self.keys_of(&ids);
        self.overrides.groups.push(group);
        *self.counts.entry("merge").or_default() += 1;
    }

    /// A split divides exactly one finding's source ids into two or more non-empty groups.
    fn split(&mut self, n: usize, label: &str, d: &Value, errors: &mut Vec<String>) {
        let groups: Vec<Vec<String>> = d["groups"]
            .as_array()
            .map(|gs| gs.iter().filter_map(id_list).collect())
            .unwrap_or_default();
        if groups.len() < 2 || groups.iter().any(Vec::is_empty) {
            errors.push(format!(
                "{label} needs `groups`: two or more non-empty lists of source ids"
            ));
            return;
        }
        let all: Vec<String> = groups.iter().flatten().cloned().collect();
        if self.known(label, &all, errors) {
            let touched = self.whole(label, &all, errors);
            if touched.len() != 1 {
                errors.push(format!(
                    "{label} spans {} findings: a split divides one finding",
                    touched.len()
                ));
            }
        }
        self.place(n, label, &all, errors);
        for g in &groups {
            let group = self.keys_of(g);
            self.overrides.groups.push(group);
        }
        *self.counts.entry("split").or_default() += 1;
    }

    /// A drop takes whole findings out, with its reason.
    fn drop(&mut self, n: usize, label: &str, d: &Value, reason: &str, errors: &mut Vec<String>) {
        let Some(ids) = id_list(&d["sources"]) else {
            errors.push(format!("{label} has no `sources` list"));
            return;
        };
        if ids.is_empty() {
            errors.push(format!("{label} drops nothing"));
        }
        if self.known(label, &ids, errors) {
            self.whole(label, &ids, errors);
        }
        self.place(n, label, &ids, errors);
        for id in &ids {
            self.dropped.insert(id.clone());
            if let Some(k) = self.idx.keys.get(id) {
                self.overrides.drops.insert(k.clone(), reason.to_string());
            }
        }
        *self.counts.entry("drop").or_default() += 1;
    }

    /// A demotion lowers whole findings to a named lower severity.
    fn demote(&mut self, n: usize, label: &str, d: &Value, reason: &str, errors: &mut Vec<String>) {
        let Some(ids) = id_list(&d["sources"]) else {
            errors.push(format!("{label} has no `sources` list"));
            return;
        };
        let severity = d["severity"]
            .as_str()
            .and_then(|s| s.parse::<Severity>().ok());
        let Some(severity) = severity else {
            errors.push(format!(
                "{label} has no `severity` of critical, important or suggestion"
            ));
            return;
        };
        if self.known(label, &ids, errors) {
            for f in self.whole(label, &ids, errors) {
                if severity >= self.idx.severity[f] {
                    errors.push(format!(
                        "{label} does not lower finding {} ({} → {severity}): only a \
                         lower severity is allowed",
                        self.idx.ids[f], self.idx.severity[f]
                    ));
                }
            }
        }
        self.demotes.push((n, ids.clone()));
        for id in &ids {
            if let Some(k) = self.idx.keys.get(id) {
                self.overrides
                    .severities
                    .insert(k.clone(), (severity, reason.to_string()));
            }
        }
        *self.counts.entry("demotion").or_default() += 1;
    }

    /// Whether every id is a source id of the report (each unknown one is an error).
    fn known(&self, label: &str, ids: &[String], errors: &mut Vec<String>) -> bool {
        let mut ok = true;
        for id in ids {
            if !self.idx.finding_of.contains_key(id) {
                errors.push(format!(
                    "{label} cites `{id}`, which is not a source id of this report"
                ));
                ok = false;
            }
        }
        ok
    }

    /// The findings the ids touch; each one the ids do not hold whole is an error.
    fn whole(&self, label: &str, ids: &[String], errors: &mut Vec<String>) -> BTreeSet<usize> {
        let given: BTreeSet<&String> = ids.iter().collect();
        let touched: BTreeSet<usize> = ids
            .iter()
            .filter_map(|id| self.idx.finding_of.get(id).copied())
            .collect();
        for &f in &touched {
            let missing: Vec<&String> = self.idx.sources[f]
                .iter()
                .filter(|s| !given.contains(s))
                .collect();
            if !missing.is_empty() {
                errors.push(format!(
                    "{label} takes part of finding {} but not {}: a finding is moved whole, \
                     with every source id it has",
                    self.idx.ids[f],
                    missing
                        .iter()
                        .map(|s| format!("`{s}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        touched
    }

    /// Records that decision `n` places the ids: an id listed twice, or placed by another
    /// decision, is an error.
    fn place(&mut self, n: usize, label: &str, ids: &[String], errors: &mut Vec<String>) {
        let mut seen = BTreeSet::new();
        for id in ids {
            if !seen.insert(id.clone()) {
                errors.push(format!("{label} lists `{id}` twice"));
                continue;
            }
            if let Some(before) = self.placed.insert(id.clone(), n) {
                errors.push(format!(
                    "`{id}` ends in two places: decision {before} and decision {n}"
                ));
            }
        }
    }

    fn keys_of(&self, ids: &[String]) -> Vec<SourceKey> {
        ids.iter()
            .filter_map(|id| self.idx.keys.get(id).cloned())
            .collect()
    }

    /// A source id is demoted or dropped, never both.
    fn no_demotion_of_a_drop(&self, errors: &mut Vec<String>) {
        for (n, ids) in &self.demotes {
            for id in ids.iter().filter(|id| self.dropped.contains(*id)) {
                errors.push(format!(
                    "decision {n} demotes `{id}`, which another decision drops"
                ));
            }
        }
    }

    /// "1 merge, 1 drop".
    fn changes(&self) -> String {
        if self.counts.is_empty() {
            return "no change to the findings".to_string();
        }
        self.counts
            .iter()
            .map(|(what, n)| crate::text::plural(*n, what, &format!("{what}s")))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{AgentRetro, MergedFinding, SourceRef, Tier};
    use serde_json::json;

    fn finding(id: &str, severity: Severity, sources: &[(&str, &str)]) -> MergedFinding {
        MergedFinding {
            id: id.into(),
            title: id.into(),
            body: String::new(),
            severity,
            category: None,
            locations: vec![],
            code: None,
            fix: None,
            fix_diff: None,
            agents: sources.iter().map(|(a, _)| a.to_string()).collect(),
            sources: sources
                .iter()
                .map(|(a, i)| SourceRef {
                    agent: a.to_string(),
                    id: i.to_string(),
                    severity: Some(severity),
                    noted_in: None,
                })
                .collect(),
            calibration: None,
            confidence: None,
            confidence_reason: None,
            tier: Tier::Shown,
            verification: None,
            fingerprint: String::new(),
            round_status: Default::default(),
            prior: None,
        }
    }

    fn report() -> Report {
        let retro = |name: &str| {
            let mut r: AgentRetro = serde_json::from_value(json!({
                "name": name, "display": name, "counts": {"critical": 0, "important": 0, "suggestion": 0},
                "design_observations": 0, "unique_insights": 0, "coverage_misses": []
            }))
            .unwrap();
            r.name = name.into();
            r
        };
        let mut r: Report = serde_json::from_value(json!({
            "meta": {}, "verdict": "Rework", "findings": [], "agents": []
        }))
        .unwrap();
        r.findings = vec![
            finding("C1", Severity::Critical, &[("alpha", "C1"), ("beta", "C2")]),
            finding("I1", Severity::Important, &[("alpha", "I1")]),
            finding("S1", Severity::Suggestion, &[("gamma", "S1")]),
        ];
        r.agents = vec![retro("alpha"), retro("beta"), retro("gamma")];
        r
    }

    fn check_json(v: serde_json::Value) -> Result<Accepted, Vec<String>> {
        check(&v.to_string(), &report(), "the synthesizer (T)")
    }

    fn errors(v: serde_json::Value) -> String {
        check_json(v).unwrap_err().join("\n")
    }

    #[test]
    fn a_valid_reply_becomes_overrides_named_by_source_ids() {
        let ok = check_json(json!({
            "executive_summary": "S",
            "decisions": [
                {"action": "merge", "sources": ["alpha:I1", "gamma:S1"], "reason": "one defect"},
                {"action": "split", "groups": [["alpha:C1"], ["beta:C2"]], "reason": "two defects"},
            ],
            "agents": {"beta": "B"}
        }))
        .unwrap();
        assert_eq!(ok.overrides.groups.len(), 3);
        assert_eq!(
            ok.overrides.groups[0],
            vec![
                ("alpha".to_string(), "I1".to_string()),
                ("gamma".to_string(), "S1".to_string())
            ]
        );
        assert_eq!(ok.changes, "1 merge, 1 split");
        assert_eq!(ok.agents["beta"], "B");
        // Wrapped in prose and a fence, as models answer, it still reads.
        let wrapped = format!(
            "Here you go:\n```json\n{}\n```\n",
            json!({"executive_summary": "S"})
        );
        assert_eq!(
            check(&wrapped, &report(), "t").unwrap().changes,
            "no change to the findings"
        );
    }

    #[test]
    fn every_broken_rule_is_named() {
        let e = errors(json!({
            "executive_summary": "",
            "decisions": [
                {"action": "drop", "sources": ["gamma:S1"]},
                {"action": "merge", "sources": ["alpha:C1", "alpha:I1"], "reason": "r"},
                {"action": "merge", "sources": ["zeta:I9", "alpha:I1"], "reason": "r"},
                {"action": "demote", "sources": ["gamma:S1"], "severity": "critical", "reason": "r"},
                {"action": "rename", "sources": [], "reason": "r"},
            ],
            "agents": {"delta": "D"}
        }));
        for expected in [
            "`executive_summary` is missing or empty",
            "decision 1 (drop) gives no reason",
            "decision 2 (merge) takes part of finding C1 but not `beta:C2`",
            "decision 3 (merge) cites `zeta:I9`, which is not a source id of this report",
            "`alpha:I1` ends in two places: decision 2 and decision 3",
            "decision 4 (demote) does not lower finding S1 (suggestion → critical)",
            "decision 5 has action `rename`",
            "`agents` has a paragraph for `delta`",
            "decision 4 demotes `gamma:S1`, which another decision drops",
        ] {
            assert!(e.contains(expected), "missing {expected:?} in:\n{e}");
        }
    }

    #[test]
    fn splits_take_exactly_one_finding_and_merges_two_or_more() {
        let e = errors(json!({"executive_summary": "S", "decisions": [
            {"action": "split", "groups": [["alpha:C1", "beta:C2"]], "reason": "r"}]}));
        assert!(e.contains("two or more non-empty lists"), "{e}");
        let e = errors(json!({"executive_summary": "S", "decisions": [
            {"action": "split", "groups": [["alpha:C1", "beta:C2"], ["alpha:I1"]], "reason": "r"}]}));
        assert!(e.contains("spans 2 findings"), "{e}");
        let e = errors(json!({"executive_summary": "S", "decisions": [
            {"action": "merge", "sources": ["alpha:C1", "beta:C2"], "reason": "r"}]}));
        assert!(e.contains("fewer than two findings"), "{e}");
        assert!(check("not json at all", &report(), "t").unwrap_err()[0].contains("no JSON"));
    }
}
