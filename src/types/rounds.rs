//! Rounds of one change: what the author did about a report's findings (its `## Resolution`),
//! and what a later round says about the earlier ones ("Since round N", "Declined in prior
//! rounds").

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the author did about one finding, as the reference reports' Resolution tables say it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(from = "String", into = "String")]
pub enum Action {
    /// The code was changed to fix it.
    Fixed,
    /// Declined, with a reason: not raised again while its code stays as it is.
    Skipped,
    /// A test now covers it.
    TestWritten,
    /// The documentation now says it.
    Documented,
    /// Answered with a comment rather than a change: declined like `Skipped`.
    Commented,
    /// Any other word a hand-written table used, kept as written.
    Other(String),
}

impl Action {
    /// The words of the Resolution table: `Fixed`, `Skipped`, `Test written`, ...
    pub fn as_str(&self) -> &str {
        match self {
            Action::Fixed => "Fixed",
            Action::Skipped => "Skipped",
            Action::TestWritten => "Test written",
            Action::Documented => "Documentation updated",
            Action::Commented => "Commented",
            Action::Other(s) => s,
        }
    }

    /// The author changed something for it (code, a test, the docs): if it is raised again,
    /// it came back.
    pub fn addresses(&self) -> bool {
        matches!(
            self,
            Action::Fixed | Action::TestWritten | Action::Documented
        )
    }

    /// The author decided not to act on it (skipped, or answered with a comment): it is not
    /// raised again while its code stays as it is.
    pub fn declines(&self) -> bool {
        matches!(self, Action::Skipped | Action::Commented)
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<String> for Action {
    fn from(s: String) -> Self {
        s.parse()
            .unwrap_or_else(|_| Action::Other(s.trim().to_string()))
    }
}

impl From<Action> for String {
    fn from(a: Action) -> Self {
        a.as_str().to_string()
    }
}

impl FromStr for Action {
    type Err = String;

    /// Reads the action words of a Resolution table, ignoring case and emphasis.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().trim_matches(['*', '_', '`']).trim().to_lowercase();
        Ok(match t.as_str() {
            "fixed" | "fix" | "done" | "resolved" => Action::Fixed,
            "skipped" | "skip" | "declined" | "wontfix" | "won't fix" | "won't-fix" => {
                Action::Skipped
            }
            "test written" | "tests written" | "test added" | "tested" => Action::TestWritten,
            "documentation updated" | "docs updated" | "documented" | "doc updated" => {
                Action::Documented
            }
            "commented" | "comment" | "replied" | "answered" => Action::Commented,
            _ => return Err(format!("unknown action {s:?}")),
        })
    }
}

/// One row of a Resolution table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResolutionItem {
    /// The finding's id in its report: `S3`, `I1`, or `T2` for the report's second testing gap.
    pub id: String,
    /// The finding's title when the decision was recorded (ids can change when a report is
    /// consolidated again; the title tells which finding was meant).
    pub title: String,
    pub action: Action,
    /// Why, in the author's words; required for `Skipped`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// The `## Resolution` section of a report: what the author did after reading it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Resolution {
    /// The day the author acted (the Addressed row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addressed: Option<chrono::NaiveDate>,
    /// The commits that carry the changes: short sha and subject (the Commit row).
    #[serde(default)]
    pub commits: Vec<super::CommitInfo>,
    /// Free text after the commits in the Commit row ("folded into the PR commit via ...").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_note: Option<String>,
    pub items: Vec<ResolutionItem>,
}

impl Resolution {
    /// The decision recorded for finding `id`, if any.
    pub fn item(&self, id: &str) -> Option<&ResolutionItem> {
        self.items.iter().find(|i| i.id.eq_ignore_ascii_case(id))
    }
}

/// How a finding relates to the findings of earlier rounds of the same change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoundStatus {
    /// No earlier round raised it (every finding of a first round).
    #[default]
    New,
    /// An earlier round raised it and nothing was done about it yet.
    Persisting,
    /// An earlier round raised it, the author marked it fixed, and it is back.
    Regressed,
}

impl RoundStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RoundStatus::New => "new",
            RoundStatus::Persisting => "persisting",
            RoundStatus::Regressed => "regressed",
        }
    }
}

/// The finding of an earlier round that a finding was matched to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PriorRef {
    pub round: u32,
    /// Its id in that round's report.
    pub id: String,
}

/// One earlier finding in a "Since round N" list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PriorItem {
    /// The round whose report raised it.
    pub round: u32,
    /// Its id in that report (`S4`; `T3` for a testing gap).
    pub id: String,
    pub title: String,
    /// Why it is in this list: the author's decision and reason, or what this round found.
    #[serde(default)]
    pub reason: String,
    /// The author's decision on it, when one was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
    /// Its fingerprint, so a later round can match it without reading that report again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// The id of this round's finding it continues (persisting, regressed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now: Option<String>,
    /// Findings of this round dropped because they raise it again ("Claude: title").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub raised_again: Vec<String>,
}

/// What this round says about the earlier rounds' findings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PriorRounds {
    /// The round the lists compare against (the last earlier one); `None` in a first round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_round: Option<u32>,
    /// Raised last round, not raised again.
    #[serde(default)]
    pub resolved: Vec<PriorItem>,
    /// Raised before and raised again, with no decision on it (or declined, but its code changed).
    #[serde(default)]
    pub persisting: Vec<PriorItem>,
    /// Declined before (skipped, or answered with a comment) and not shown again.
    #[serde(default)]
    pub declined: Vec<PriorItem>,
    /// Marked fixed before and raised again.
    #[serde(default)]
    pub regressed: Vec<PriorItem>,
}

impl PriorRounds {
    pub fn is_empty(&self) -> bool {
        self.resolved.is_empty()
            && self.persisting.is_empty()
            && self.declined.is_empty()
            && self.regressed.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_read_the_reference_words_and_keep_others() {
        assert_eq!("Fixed".parse::<Action>(), Ok(Action::Fixed));
        assert_eq!(
            "Documentation updated".parse::<Action>(),
            Ok(Action::Documented)
        );
        assert_eq!(
            "**Test written**".parse::<Action>(),
            Ok(Action::TestWritten)
        );
        assert_eq!(
            Action::from("Deferred to #12".to_string()),
            Action::Other("Deferred to #12".into())
        );
        assert!(Action::Commented.declines() && !Action::Commented.addresses());
        assert!(Action::TestWritten.addresses());
        let json = serde_json::to_string(&Action::TestWritten).unwrap();
        assert_eq!(json, "\"Test written\"");
        assert_eq!(
            serde_json::from_str::<Action>(&json).unwrap(),
            Action::TestWritten
        );
    }
}
