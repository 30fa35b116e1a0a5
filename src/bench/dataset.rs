//! Reads a code-review benchmark in its own layout:
//!
//! ```text
//! DIR/golden_comments/<repo>.json        [{pr_title, url, comments[{comment, severity}]}]
//! DIR/results/<judge>/candidates.json    {pr_url: {tool: [{text, path, line, source}]}}
//! DIR/results/<judge>/evaluations.json   {pr_url: {tool: {true_positives[{golden_comment,
//!                                          matched_candidate}], false_positives[{candidate}],
//!                                          tp, fp, ...}}}
//! ```
//!
//! For every PR each tool's candidates become one agent's [`Review`] (agent id = the tool name,
//! one [`Finding`] per candidate), which is all consolidation gets to see. The judge's verdicts
//! are kept apart, in [`PrData::verdicts`], for scoring only.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::Deserialize;

use crate::types::{Finding, Location, Review};

/// One golden bug of a PR, as the benchmark wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoldenBug {
    pub comment: String,
    pub severity: Option<String>,
}

/// What the judge's evaluation file says about one tool on one PR, as written there (used to
/// check that scoring a tool alone reproduces the judge's counts).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolEvaluation {
    /// Golden bugs the tool found, by the file's own count.
    pub tp: usize,
    /// Candidates the judge matched to no golden bug, by the file's own count.
    pub fp: usize,
    /// The texts the file lists as false positives (some are placeholders with no candidate).
    pub false_positive_texts: Vec<String>,
    pub skipped: bool,
}

/// One pull request of the benchmark: its golden bugs, every tool's review, the verdicts.
#[derive(Debug, Clone)]
pub struct PrData {
    pub url: String,
    /// The repository: the name of the golden-comments file the PR is in (`grafana`).
    pub repo: String,
    pub title: String,
    pub golden: Vec<GoldenBug>,
    /// One review per tool that has an entry for this PR, in the dataset's tool order. Finding
    /// ids are the candidate's 1-based position in the tool's list.
    pub reviews: Vec<Review>,
    /// `(tool, finding id)` → indices into `golden` of the bugs the judge matched it to. A
    /// candidate absent here is a false positive.
    pub verdicts: HashMap<(String, String), BTreeSet<usize>>,
    /// The evaluation file's own per-tool summary.
    pub evaluations: BTreeMap<String, ToolEvaluation>,
}

impl PrData {
    /// The review of `tool`, when the tool has an entry for this PR.
    pub fn review(&self, tool: &str) -> Option<&Review> {
        self.reviews.iter().find(|r| r.agent == tool)
    }

    /// The finding `id` of `tool`'s review.
    pub fn finding(&self, tool: &str, id: &str) -> Option<&Finding> {
        self.review(tool)?.findings.iter().find(|f| f.id == id)
    }

    /// The golden bugs the judge matched to `tool`'s finding `id` (empty: a false positive).
    pub fn golden_matched(&self, tool: &str, id: &str) -> Option<&BTreeSet<usize>> {
        self.verdicts.get(&(tool.to_string(), id.to_string()))
    }
}

/// A benchmark split, read from disk.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub dir: PathBuf,
    pub judge: String,
    /// Every tool with candidates anywhere in the split, sorted by name (so the order of
    /// reviews, and with it which source a merged finding shows first, never depends on the
    /// order of keys in a JSON file).
    pub tools: Vec<String>,
    /// PRs in the order of the candidates file's URLs, sorted.
    pub prs: Vec<PrData>,
    /// Things in the data that do not add up, for the reader to know (never fatal).
    pub warnings: Vec<String>,
}

impl Dataset {
    /// Number of golden bugs over all PRs.
    pub fn golden_total(&self) -> usize {
        self.prs.iter().map(|p| p.golden.len()).sum()
    }
}

#[derive(Debug, Deserialize)]
struct GoldenPrFile {
    #[serde(default)]
    pr_title: Option<String>,
    url: String,
    #[serde(default)]
    comments: Vec<GoldenCommentFile>,
}

#[derive(Debug, Deserialize)]
struct GoldenCommentFile {
    comment: String,
    #[serde(default)]
    severity: Option<String>,
}

#[derive(Debug, Deserialize)]
struct CandidateFile {
    text: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    line: Option<LineFile>,
}

/// A line as benchmarks write it: a number, or text such as `"12"` or `"12-20"`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum LineFile {
    Number(u32),
    Text(String),
}

#[derive(Debug, Deserialize)]
struct EvaluationFile {
    #[serde(default)]
    skipped: bool,
    #[serde(default)]
    true_positives: Vec<TruePositiveFile>,
    #[serde(default)]
    false_positives: Vec<FalsePositiveFile>,
    #[serde(default)]
    tp: Option<usize>,
    #[serde(default)]
    fp: Option<usize>,
}

#[derive(Debug, Deserialize)]
struct TruePositiveFile {
    golden_comment: String,
    matched_candidate: String,
}

#[derive(Debug, Deserialize)]
struct FalsePositiveFile {
    candidate: String,
}

type CandidatesFile = BTreeMap<String, BTreeMap<String, Vec<CandidateFile>>>;
type EvaluationsFile = BTreeMap<String, BTreeMap<String, EvaluationFile>>;

/// Reads the split in `dir`. `judge` names the directory under `results/`; when `None` and
/// exactly one judge is there, that one is used.
pub fn load(dir: &Path, judge: Option<&str>) -> anyhow::Result<Dataset> {
    if !dir.is_dir() {
        bail!(
            "dataset directory {} does not exist: pass --dataset with a directory holding \
             golden_comments/ and results/<judge>/",
            dir.display()
        );
    }
    let judge = pick_judge(dir, judge)?;
    let results = dir.join("results").join(&judge);
    let candidates: CandidatesFile = read_json(&results.join("candidates.json"))?;
    let evaluations: EvaluationsFile = read_json(&results.join("evaluations.json"))?;
    let golden = read_golden(&dir.join("golden_comments"))?;

    let mut warnings = Vec::new();
    let tools: Vec<String> = candidates
        .values()
        .flat_map(|by_tool| by_tool.keys().cloned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();

    let mut prs = Vec::new();
    for (url, by_tool) in &candidates {
        let Some((repo, title, bugs)) = golden.get(url) else {
            bail!(
                "{}: PR {url} has candidates but no golden comments in {}",
                results.join("candidates.json").display(),
                dir.join("golden_comments").display()
            );
        };
        let empty = BTreeMap::new();
        let evals = evaluations.get(url).unwrap_or_else(|| {
            warnings.push(format!(
                "no evaluations for PR {url}: every candidate counts as a false positive"
            ));
            &empty
        });
        let mut pr = build_pr(url, title, bugs, by_tool, evals, &mut warnings);
        pr.repo = repo.clone();
        prs.push(pr);
    }
    for url in golden.keys() {
        if !candidates.contains_key(url) {
            warnings.push(format!(
                "PR {url} has golden comments but no candidates: not scored"
            ));
        }
    }
    Ok(Dataset {
        dir: dir.to_path_buf(),
        judge,
        tools,
        prs,
        warnings,
    })
}

fn build_pr(
    url: &str,
    title: &str,
    bugs: &[GoldenBug],
    by_tool: &BTreeMap<String, Vec<CandidateFile>>,
    evals: &BTreeMap<String, EvaluationFile>,
    warnings: &mut Vec<String>,
) -> PrData {
    let mut reviews = Vec::new();
    let mut verdicts: HashMap<(String, String), BTreeSet<usize>> = HashMap::new();
    for (tool, cands) in by_tool {
        let findings: Vec<Finding> = cands
            .iter()
            .enumerate()
            .map(|(i, c)| candidate_finding(i + 1, c))
            .collect();
        if let Some(eval) = evals.get(tool) {
            for tp in &eval.true_positives {
                let Some(pos) = cands.iter().position(|c| c.text == tp.matched_candidate) else {
                    warnings.push(format!(
                        "{url} {tool}: matched candidate not among the candidates: {:.60}",
                        tp.matched_candidate
                    ));
                    continue;
                };
                let Some(g) = find_golden(bugs, &tp.golden_comment) else {
                    warnings.push(format!(
                        "{url} {tool}: matched golden comment not among the golden comments: {:.60}",
                        tp.golden_comment
                    ));
                    continue;
                };
                verdicts
                    .entry((tool.clone(), (pos + 1).to_string()))
                    .or_default()
                    .insert(g);
            }
        }
        reviews.push(Review {
            agent: tool.clone(),
            findings,
            ..Review::default()
        });
    }
    let evaluations = evals
        .iter()
        .map(|(tool, e)| {
            let summary = ToolEvaluation {
                tp: e.tp.unwrap_or(e.true_positives.len()),
                fp: e.fp.unwrap_or(e.false_positives.len()),
                false_positive_texts: e
                    .false_positives
                    .iter()
                    .map(|f| f.candidate.clone())
                    .collect(),
                skipped: e.skipped,
            };
            (tool.clone(), summary)
        })
        .collect();
    PrData {
        url: url.to_string(),
        repo: String::new(),
        title: title.to_string(),
        golden: bugs.to_vec(),
        reviews,
        verdicts,
        evaluations,
    }
}

/// A golden comment by its text; whitespace differences are forgiven.
fn find_golden(bugs: &[GoldenBug], text: &str) -> Option<usize> {
    bugs.iter().position(|b| b.comment == text).or_else(|| {
        let want = fold(text);
        bugs.iter().position(|b| fold(&b.comment) == want)
    })
}

fn fold(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One candidate as a finding: the text is the explanation, its first sentence the title; a
/// location only when the data has a path.
fn candidate_finding(position: usize, c: &CandidateFile) -> Finding {
    let mut f = Finding::new(position.to_string(), first_sentence(&c.text));
    f.explanation = c.text.clone();
    if let Some(path) = c.path.as_deref().filter(|p| !p.trim().is_empty()) {
        let (start, end) = match &c.line {
            Some(LineFile::Number(n)) => (Some(*n), None),
            Some(LineFile::Text(t)) => {
                let mut parts = t.splitn(2, ['-', ':']);
                let start = parts.next().and_then(|p| p.trim().parse().ok());
                let end = parts.next().and_then(|p| p.trim().parse().ok());
                (start, end)
            }
            None => (None, None),
        };
        f.locations.push(Location::new(path.trim(), start, end));
    }
    f
}

/// The text up to the end of its first sentence (a `.`, `!` or `?` followed by white space), or
/// all of it.
pub fn first_sentence(text: &str) -> String {
    let text = text.trim();
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?')
            && bytes.get(i + 1).is_some_and(|n| n.is_ascii_whitespace())
            && i >= 10
        {
            return text[..=i].to_string();
        }
    }
    text.to_string()
}

fn pick_judge(dir: &Path, judge: Option<&str>) -> anyhow::Result<String> {
    let results = dir.join("results");
    let mut judges: Vec<String> = fs::read_dir(&results)
        .with_context(|| {
            format!(
                "reading {}: the dataset needs a results/<judge>/ directory",
                results.display()
            )
        })?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    judges.sort();
    match judge {
        Some(j) if judges.iter().any(|x| x == j) => Ok(j.to_string()),
        Some(j) => bail!(
            "judge {j:?} not found in {}: available judges are {}",
            results.display(),
            list_or_none(&judges)
        ),
        None if judges.len() == 1 => Ok(judges.remove(0)),
        None if judges.is_empty() => bail!("{} holds no judge directory", results.display()),
        None => bail!(
            "{} holds several judges ({}): choose one with --judge NAME",
            results.display(),
            judges.join(", ")
        ),
    }
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_string()
    } else {
        items.join(", ")
    }
}

/// Golden comments of every `<repo>.json` in `dir`: url → (repo, title, bugs).
type Golden = BTreeMap<String, (String, String, Vec<GoldenBug>)>;

fn read_golden(dir: &Path) -> anyhow::Result<Golden> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| {
            format!(
                "reading {}: the dataset needs golden_comments/",
                dir.display()
            )
        })?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("{} holds no .json file of golden comments", dir.display());
    }
    let mut out = BTreeMap::new();
    for file in files {
        let prs: Vec<GoldenPrFile> = read_json(&file)?;
        let repo = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        for pr in prs {
            let bugs = pr
                .comments
                .into_iter()
                .map(|c| GoldenBug {
                    comment: c.comment,
                    severity: c.severity,
                })
                .collect();
            if out
                .insert(
                    pr.url.clone(),
                    (repo.clone(), pr.pr_title.unwrap_or_default(), bugs),
                )
                .is_some()
            {
                bail!(
                    "{}: PR {} appears twice in golden_comments",
                    file.display(),
                    pr.url
                );
            }
        }
    }
    Ok(out)
}

/// Reads and parses one JSON file; errors name the file and, for bad JSON, line and column.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}:{}: not the benchmark's layout or not valid JSON: {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sentence_stops_at_the_first_full_stop() {
        assert_eq!(
            first_sentence("Race in Foo.bar. Two callers can both pass."),
            "Race in Foo.bar."
        );
        assert_eq!(first_sentence("No stop here"), "No stop here");
        assert_eq!(first_sentence("e.g. a bug. Rest"), "e.g. a bug.");
    }
}
