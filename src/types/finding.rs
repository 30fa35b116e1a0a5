//! One reviewer's finding, as written in its raw review.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::verification::Verification;

/// How much a finding matters. Ordered so that `Critical > Important > Suggestion`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Suggestion,
    Important,
    Critical,
}

impl Severity {
    /// All severities, most severe first: the order of the report's sections.
    pub const ALL: [Severity; 3] = [
        Severity::Critical,
        Severity::Important,
        Severity::Suggestion,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Important => "important",
            Severity::Suggestion => "suggestion",
        }
    }

    /// The letter of the report's finding ids: `C1`, `I1`, `S1`.
    pub fn id_prefix(self) -> char {
        match self {
            Severity::Critical => 'C',
            Severity::Important => 'I',
            Severity::Suggestion => 'S',
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Severity {
    type Err = String;

    /// Accepts the words reviewers use, in any case: `critical`, `important`, `suggestion`,
    /// and the common synonyms (`high`, `major`, `minor`, `nit`, ...).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "critical" | "blocker" | "blocking" | "high" => Ok(Severity::Critical),
            "important" | "major" | "medium" | "moderate" | "warning" => Ok(Severity::Important),
            "suggestion" | "suggestions" | "minor" | "low" | "nit" | "info" | "optional" => {
                Ok(Severity::Suggestion)
            }
            other => Err(format!(
                "unknown severity {other:?}: expected critical, important or suggestion"
            )),
        }
    }
}

/// What kind of problem a finding is. Reviewers mostly use the three known words; any other
/// word is kept as written rather than forced into a bucket.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(from = "String", into = "String")]
pub enum Category {
    Regression,
    Gap,
    Enhancement,
    Other(String),
}

impl Category {
    pub fn as_str(&self) -> &str {
        match self {
            Category::Regression => "regression",
            Category::Gap => "gap",
            Category::Enhancement => "enhancement",
            Category::Other(s) => s,
        }
    }
}

impl From<String> for Category {
    fn from(s: String) -> Self {
        match s.trim().to_ascii_lowercase().as_str() {
            "regression" => Category::Regression,
            "gap" => Category::Gap,
            "enhancement" => Category::Enhancement,
            _ => Category::Other(s.trim().to_string()),
        }
    }
}

impl From<&str> for Category {
    fn from(s: &str) -> Self {
        Category::from(s.to_string())
    }
}

impl From<Category> for String {
    fn from(c: Category) -> Self {
        c.as_str().to_string()
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A place in the code: `path`, `path:12` or `path:12-20`. Lines are 1-based and inclusive.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Location {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<u32>,
}

impl Location {
    /// A location; line 0 means "no line", and a range written backwards is turned around.
    pub fn new(path: impl Into<String>, start: Option<u32>, end: Option<u32>) -> Self {
        Location {
            path: path.into(),
            start,
            end,
        }
        .normalized()
    }

    /// The same place with line 0 read as "no line", the end filled from the start, and a
    /// backwards range (`a.rs:9-3`) turned around.
    pub fn normalized(mut self) -> Self {
        self.start = self.start.filter(|l| *l > 0);
        self.end = self.end.filter(|l| *l > 0).or(self.start);
        if self.start.is_none() {
            self.end = None;
        }
        if let (Some(s), Some(e)) = (self.start, self.end)
            && e < s
        {
            (self.start, self.end) = (Some(e), Some(s));
        }
        self
    }

    /// The last line of the range (the start when the range is one line).
    pub fn end_line(&self) -> Option<u32> {
        self.end.or(self.start)
    }

    /// The file name without its directories: reviewers often cite `app.go` for `pkg/x/app.go`.
    pub fn file_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.start, self.end_line()) {
            (Some(s), Some(e)) if e != s => write!(f, "{}:{}-{}", self.path, s, e),
            (Some(s), _) => write!(f, "{}:{}", self.path, s),
            _ => f.write_str(&self.path),
        }
    }
}

impl FromStr for Location {
    type Err = String;

    /// Parses `path`, `path:12`, `path:12-20` (also with an en dash), and `path:12:5` (a
    /// column, dropped). Anything after the line numbers (`path:13-14,30-37`) keeps only the
    /// first range.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().trim_matches('`');
        if s.is_empty() {
            return Err("empty location".into());
        }
        let Some((mut path, mut lines)) = s.rsplit_once(':') else {
            return Ok(Location::new(s, None, None));
        };
        // `path:LINE:COL`: the last number is a column.
        if let Some((p, line)) = path.rsplit_once(':')
            && !line.is_empty()
            && line.chars().all(|c| c.is_ascii_digit())
            && lines.chars().all(|c| c.is_ascii_digit())
        {
            (path, lines) = (p, line);
        }
        let first = lines.split(',').next().unwrap_or("");
        let mut parts = first.splitn(2, ['-', '–']);
        let start = parts.next().and_then(|p| p.trim().parse::<u32>().ok());
        let end = parts.next().and_then(|p| p.trim().parse::<u32>().ok());
        match start {
            Some(start) if !path.is_empty() => Ok(Location::new(path, Some(start), end)),
            _ => Ok(Location::new(s, None, None)),
        }
    }
}

/// A block of code quoted in a finding, with the language of its fence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CodeSnippet {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    pub code: String,
}

/// One finding of one reviewer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// The id the reviewer gave it (`C1`, `I2`, `S1`, `1`), or one made from its section and
    /// position when it had none. Unique within one review.
    pub id: String,
    pub title: String,
    /// Zero or more places; a finding about the change as a whole has none.
    #[serde(default)]
    pub locations: Vec<Location>,
    /// `None` where the source has no severity (e.g. benchmark data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<Category>,
    /// The code the finding quotes (its first code block that is not a diff).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<CodeSnippet>,
    /// The finding's prose: what is wrong and why.
    #[serde(default)]
    pub explanation: String,
    /// The fix in words, when the reviewer wrote one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// The fix as a diff, when the reviewer wrote one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix_diff: Option<String>,
    /// Filled by the verify stage; `None` before it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
}

impl Finding {
    /// A finding with only a title: the starting point of parsers and tests.
    pub fn new(id: impl Into<String>, title: impl Into<String>) -> Self {
        Finding {
            id: id.into(),
            title: title.into(),
            locations: Vec::new(),
            severity: None,
            category: None,
            code: None,
            explanation: String::new(),
            fix: None,
            fix_diff: None,
            verification: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_parses_the_forms_reviewers_write() {
        let l: Location = "app_controller.go:73-84".parse().unwrap();
        assert_eq!(l, Location::new("app_controller.go", Some(73), Some(84)));
        let l: Location = "`pkg/a.go:207`".parse().unwrap();
        assert_eq!(l, Location::new("pkg/a.go", Some(207), Some(207)));
        let l: Location = "lima.yaml:13-14,30-37".parse().unwrap();
        assert_eq!((l.start, l.end), (Some(13), Some(14)));
        let l: Location = "docs/api.md".parse().unwrap();
        assert_eq!((l.path.as_str(), l.start), ("docs/api.md", None));
        let l: Location = "a.rs:10–12".parse().unwrap();
        assert_eq!((l.start, l.end), (Some(10), Some(12)));
        assert_eq!(l.to_string(), "a.rs:10-12");
        let l: Location = "src/main.rs:2:5".parse().unwrap();
        assert_eq!(
            (l.path.as_str(), l.start, l.end),
            ("src/main.rs", Some(2), Some(2))
        );
        let l: Location = "a.rs:9-3".parse().unwrap();
        assert_eq!((l.start, l.end), (Some(3), Some(9)));
        let l: Location = "a.rs:0".parse().unwrap();
        assert_eq!((l.path.as_str(), l.start, l.end), ("a.rs", None, None));
    }

    #[test]
    fn severity_orders_and_reads_synonyms() {
        assert!(Severity::Critical > Severity::Important);
        assert!(Severity::Important > Severity::Suggestion);
        assert_eq!("CRITICAL".parse::<Severity>(), Ok(Severity::Critical));
        assert_eq!("nit".parse::<Severity>(), Ok(Severity::Suggestion));
        assert!("whatever".parse::<Severity>().is_err());
    }

    #[test]
    fn unknown_category_is_kept_as_written() {
        assert_eq!(Category::from("Regression"), Category::Regression);
        assert_eq!(Category::from("Security").as_str(), "Security");
    }
}
