//! The reports of fixed inputs, byte for byte: a refactoring of parsing, verification or
//! consolidation (issue 24: functions split into named steps, verification rebuilt for speed)
//! must not change one byte of what users get.
//!
//! Each case renders a report (Markdown and JSON) of fixed input with a fixed id and date, and
//! its SHA-256 is compared with the one recorded in `tests/fixtures/report_digests/*.txt`,
//! written by the code before the refactoring. Inputs: `tests/fixtures` (every parse fixture
//! alone and together, a report's appendix, the hand-made bench dataset), and, with
//! `../shared`, the shared generators' reviews (the Zipf vocabulary with planted duplicates,
//! the crowded shapes, a second round), reviews of a generated repository verified against it,
//! the synthesizer's replies checked against a generated report, the reference reports and
//! the code-review benchmark.
//!
//! A deliberate change of behaviour changes digests: run the tests with
//! `DEEP_REVIEW_BLESS_DIGESTS=1` to record the new ones, and say in the commit why the reports
//! changed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use deep_review::consolidate::consolidate;
use deep_review::parse::read_review_file;
use deep_review::pipeline::{Analysis, analyze_reviews};
use deep_review::report::{Format, markdown_read, render};
use deep_review::rounds::{History, history};
use deep_review::synthesize::reply;
use deep_review::types::{ReportMeta, Review};
use deep_review::verify::VerifyContext;
use sha2::{Digest, Sha256};

use crate::support::bench_gen;
use crate::support::git::git;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Digests by case name, compared with (or, when blessing, written to) one file.
struct Digests {
    file: PathBuf,
    got: BTreeMap<String, String>,
}

impl Digests {
    fn new(name: &str) -> Digests {
        Digests {
            file: manifest().join("tests/fixtures/report_digests").join(name),
            got: BTreeMap::new(),
        }
    }

    fn add(&mut self, case: &str, text: &str) {
        let digest = Sha256::digest(text.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert!(
            self.got.insert(case.to_string(), hex).is_none(),
            "case {case} twice"
        );
    }

    /// The Markdown and JSON reports of an analysis.
    fn report(&mut self, case: &str, analysis: &Analysis) {
        self.add(&format!("{case}.md"), &render(&analysis.report, Format::Md));
        self.add(
            &format!("{case}.json"),
            &render(&analysis.report, Format::Json),
        );
    }

    fn check(self) {
        let text: String = self
            .got
            .iter()
            .map(|(case, hex)| format!("{hex}  {case}\n"))
            .collect();
        if std::env::var_os("DEEP_REVIEW_BLESS_DIGESTS").is_some() {
            assert!(
                std::env::var_os("CI").is_none(),
                "DEEP_REVIEW_BLESS_DIGESTS records the digests: it is refused in CI, which checks them"
            );
            std::fs::create_dir_all(self.file.parent().unwrap()).unwrap();
            std::fs::write(&self.file, text).unwrap();
            return;
        }
        let recorded = std::fs::read_to_string(&self.file).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; record it with DEEP_REVIEW_BLESS_DIGESTS=1",
                self.file.display()
            )
        });
        let recorded: BTreeMap<&str, &str> = recorded
            .lines()
            .filter_map(|l| l.split_once("  "))
            .map(|(hex, case)| (case, hex))
            .collect();
        let changed: Vec<&str> = self
            .got
            .iter()
            .filter(|(case, hex)| recorded.get(case.as_str()) != Some(&hex.as_str()))
            .map(|(case, _)| case.as_str())
            .collect();
        let gone: Vec<&&str> = recorded
            .keys()
            .filter(|case| !self.got.contains_key(**case))
            .collect();
        assert!(
            changed.is_empty() && gone.is_empty(),
            "reports changed: {changed:?}, cases missing: {gone:?} (against {}); when the change \
             is meant, record it with DEEP_REVIEW_BLESS_DIGESTS=1 and say why in the commit",
            self.file.display()
        );
    }
}

/// What `consolidate --raw` makes of these reviews, with a fixed id and date.
fn analyze(reviews: Vec<Review>, verify: Option<VerifyContext>, history: History) -> Analysis {
    let meta = ReportMeta {
        id: "20260101-000000-consolidated".into(),
        date: chrono::NaiveDate::from_ymd_opt(2026, 1, 1).and_then(|d| d.and_hms_opt(0, 0, 0)),
        ..ReportMeta::default()
    };
    analyze_reviews(reviews, verify, meta, history)
}

fn read_all(files: &[(String, PathBuf)]) -> Vec<Review> {
    files
        .iter()
        .map(|(name, path)| read_review_file(name, path).unwrap())
        .collect()
}

/// `deep-review bench --dataset DIR --format json`, without its wall time.
fn bench_json(dataset: &str) -> String {
    let out = Command::cargo_bin("deep-review")
        .unwrap()
        .current_dir(manifest())
        .args(["bench", "--dataset", dataset, "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with("\"wall_time_s\""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn reports_of_the_fixtures_are_unchanged() {
    let mut digests = Digests::new("fixtures.txt");
    let parse_dir = manifest().join("tests/fixtures/parse");
    let mut names: Vec<String> = std::fs::read_dir(&parse_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut together = Vec::new();
    for name in &names {
        let path = parse_dir.join(name);
        if name == "report.md" {
            let source = markdown_read::read_report(&path).unwrap();
            digests.report(
                "from-report/report.md",
                &analyze(source.reviews, None, History::default()),
            );
            continue;
        }
        let agent = name.replace(['.', '_'], "-");
        match read_review_file(&agent, &path) {
            Ok(review) => {
                together.push(review.clone());
                digests.report(
                    &format!("raw/{name}"),
                    &analyze(vec![review], None, History::default()),
                );
            }
            // The error names the file: its digest must not depend on where the clone is.
            Err(e) => digests.add(
                &format!("raw/{name}.error"),
                &e.to_string().replace(
                    &path.display().to_string(),
                    &format!("tests/fixtures/parse/{name}"),
                ),
            ),
        }
    }
    digests.report(
        "raw/all-together",
        &analyze(together, None, History::default()),
    );
    digests.add("bench/fixture.json", &bench_json("tests/fixtures/bench"));
    digests.check();
}

#[test]
#[ignore = "needs ../shared (the generators, reference reports and benchmark data): run with --run-ignored all"]
fn reports_of_the_shared_generators_and_reference_data_are_unchanged() {
    let scripts = bench_gen::required();
    let tmp = tempfile::tempdir().unwrap();
    let mut digests = Digests::new("shared.txt");

    // The Zipf vocabulary with planted duplicates, and the crowded shapes.
    let shapes: [(&str, &[&str]); 4] = [
        (
            "synth-zipf-10x200",
            &[
                "synth",
                "--agents",
                "10",
                "--findings",
                "200",
                "--zipf",
                "1",
                "--vocab",
                "50000",
                "--planted",
            ],
        ),
        (
            "synth-same-line-5x100",
            &[
                "synth",
                "--agents",
                "5",
                "--findings",
                "100",
                "--shape",
                "same_line",
            ],
        ),
        (
            "synth-same-title-5x100",
            &[
                "synth",
                "--agents",
                "5",
                "--findings",
                "100",
                "--shape",
                "same_title",
            ],
        ),
        (
            "synth-same-all-4x60",
            &[
                "synth",
                "--agents",
                "4",
                "--findings",
                "60",
                "--shape",
                "same_all",
            ],
        ),
    ];
    let mut zipf_report = None;
    for (case, args) in shapes {
        let files = bench_gen::reviews(&scripts, &tmp.path().join(case), args);
        let analysis = analyze(read_all(&files), None, History::default());
        digests.report(case, &analysis);
        if zipf_report.is_none() {
            zipf_report = Some((files, analysis));
        }
    }
    let (zipf_files, zipf) = zipf_report.unwrap();

    // A second round: the same reviews against the first round's report.
    let prior = tmp.path().join("round1.md");
    std::fs::write(&prior, render(&zipf.report, Format::Md)).unwrap();
    let read = history::read_prior_file(&prior).unwrap();
    let second = history::assemble(None, vec![read], Vec::new());
    digests.report(
        "synth-zipf-10x200-round2",
        &analyze(read_all(&zipf_files), None, second),
    );

    // The synthesizer's replies against the report: each check's outcome, and the report
    // consolidated again with an accepted reply's decisions.
    for (case, text) in replies(&zipf.report) {
        let outcome = reply::check(&text, &zipf.report, "the synthesizer (test)");
        assert_eq!(
            outcome.is_ok(),
            matches!(case, "valid" | "valid-in-prose" | "no-change"),
            "reply {case}: {outcome:?}"
        );
        digests.add(&format!("reply/{case}"), &format!("{outcome:#?}"));
        if let Ok(accepted) = outcome {
            let mut options = zipf.options.clone();
            options.overrides = accepted.overrides;
            let report = consolidate(&zipf.reviews, &options);
            digests.add(
                &format!("reply/{case}.report.md"),
                &render(&report, Format::Md),
            );
        }
    }

    // Reviews of a generated repository, verified against it.
    let repo = tmp.path().join("repo");
    bench_gen::repo(
        &scripts,
        &repo,
        &["--files", "400", "--lines", "60", "--branch", "feat:40:8"],
    );
    let files = bench_gen::reviews(
        &scripts,
        &tmp.path().join("repo-reviews"),
        &[
            "repo",
            "--repo",
            repo.to_str().unwrap(),
            "--rev",
            "feat",
            "--base",
            "main",
            "--agents",
            "3",
            "--findings",
            "60",
            "--missing",
            "0.1",
            "--common",
            "0.05",
        ],
    );
    let head = git(&repo, &["rev-parse", "feat"]).trim().to_string();
    let base = git(&repo, &["merge-base", "main", "feat"])
        .trim()
        .to_string();
    let verify = VerifyContext {
        repo: repo.clone(),
        head,
        base: Some(base),
        checkout: None,
    };
    let verified = analyze(read_all(&files), Some(verify), History::default());
    assert!(verified.verified.is_some(), "the repository was verified");
    digests.report("repo-3x60-verified", &verified);

    // The reference reports (their own ids and dates) and the code-review benchmark.
    let reports = crate::support::shared::shared_dir("fixtures/reports");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&reports)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    names.sort();
    for path in names {
        let source = markdown_read::read_report(&path).unwrap();
        let mut meta = source.meta;
        meta.date = meta
            .date
            .or(chrono::NaiveDate::from_ymd_opt(2026, 1, 1).and_then(|d| d.and_hms_opt(0, 0, 0)));
        let analysis = analyze_reviews(source.reviews, None, meta, History::default());
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        digests.report(&format!("from-report/{name}"), &analysis);
    }
    digests.add(
        "bench/martian-dev.json",
        &bench_json("../shared/bench/martian-dev"),
    );
    digests.check();
}

/// Replies of a synthesizer to `report`, valid and broken in each way `reply::check` names,
/// built from its findings' source ids.
fn replies(report: &deep_review::types::Report) -> Vec<(&'static str, String)> {
    use serde_json::json;
    let ids = |i: usize| -> Vec<String> {
        report.findings[i]
            .sources
            .iter()
            .map(|s| format!("{}:{}", s.agent, s.id))
            .collect()
    };
    let multi = report
        .findings
        .iter()
        .position(|f| f.sources.len() >= 2)
        .expect("a merged finding of two or more sources");
    let singles: Vec<usize> = (0..report.findings.len())
        .filter(|&i| report.findings[i].sources.len() == 1 && i != multi)
        .take(4)
        .collect();
    let important = report
        .findings
        .iter()
        .position(|f| f.severity > deep_review::types::Severity::Suggestion)
        .expect("a finding above a suggestion");
    let agents: serde_json::Map<String, serde_json::Value> = report
        .agents
        .iter()
        .take(2)
        .map(|a| (a.name.clone(), json!(format!("{} did well.", a.name))))
        .collect();
    let merged: Vec<String> = [ids(singles[0]), ids(singles[1])].concat();
    let merge = json!({"action": "merge", "reason": "one defect", "sources": merged});
    let split_ids = ids(multi);
    let (left, right) = split_ids.split_at(1);
    let split = json!({"action": "split", "reason": "two defects", "groups": [left, right]});
    let drop = json!({"action": "drop", "reason": "not a defect", "sources": ids(singles[2])});
    let demote = json!({"action": "demote", "reason": "minor", "severity": "suggestion",
        "sources": ids(important)});
    let valid = json!({"executive_summary": "The change does a thing.",
        "verdict_rationale": "Because.", "agents": agents,
        "decisions": [merge, split, drop, demote]});
    let mut out = vec![
        ("valid", valid.to_string()),
        (
            "valid-in-prose",
            format!("Here it is:\n```json\n{valid:#}\n```\nDone."),
        ),
        (
            "no-change",
            json!({"executive_summary": "Fine."}).to_string(),
        ),
        ("no-json", "I could not decide.".to_string()),
        ("not-an-object", "[1, {\"a\": 2}]".to_string()),
    ];
    let broken = json!({
        "executive_summary": " ",
        "agents": {"nobody": "x", report.agents[0].name.clone(): 3},
        "decisions": [
            {"action": "merge", "sources": [ids(singles[0])[0].clone(), "zz:I999"]},
            {"action": "merge", "reason": "r", "sources": [split_ids[0].clone()]},
            {"action": "split", "reason": "r", "groups": [ids(singles[0]), ids(singles[1])]},
            {"action": "split", "reason": "r", "groups": [ids(multi)]},
            {"action": "drop", "reason": "r", "sources": []},
            {"action": "drop", "reason": "r", "sources": ids(singles[3])},
            {"action": "demote", "reason": "r", "severity": "critical", "sources": ids(singles[3])},
            {"action": "demote", "reason": "r", "severity": "huge", "sources": ids(singles[3])},
            {"action": "rename", "reason": "r"},
            {"action": "merge", "reason": "r", "sources": [ids(singles[1])[0].clone(), ids(singles[1])[0].clone()]},
            {"reason": "r"}
        ]
    });
    out.push(("broken-every-way", broken.to_string()));
    out.push((
        "wrong-types",
        json!({"executive_summary": "s", "agents": [1], "decisions": {"a": 1}}).to_string(),
    ));
    out
}
