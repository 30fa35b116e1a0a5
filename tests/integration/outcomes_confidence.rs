//! The agents' records are descriptive, never a weight (issue 33 item 6): through the built
//! binary, a store whose other changes show one reviewer's findings acted on and another's
//! declined changes nothing in a run where each raises one finding alone. The report is the same
//! as with no history, finding for finding, holds no records, and neither `run` nor
//! `consolidate` takes `--reliability` any more. (`stats` still shows the records, and
//! `bench --learn` still measures what weighing with them would do: tests `outcomes_stats` and
//! `bench_learn`.)

use deep_review::consolidate::{ConsolidateOptions, consolidate};
use deep_review::parse::parse_review;
use deep_review::store::Store;
use deep_review::types::{Action, ReportMeta, Resolution, ResolutionItem};
use serde_json::Value;

use crate::support::repo::Repo;
use crate::support::standin::{Agents, json_report, run};

/// A review with one suggestion at `location`, no quoted code.
fn review(title: &str, location: &str, body: &str) -> String {
    format!(
        "**Verdict**: Merge with optional fixes\n\n## Executive Summary\n\nA change.\n\n\
         ## Findings\n\n### Critical Issues\n\nNone.\n\n### Important Issues\n\nNone.\n\n\
         ### Suggestions\n\n1. **{title}** — `{location}` (suggestion, regression)\n\n{body}\n"
    )
}

const GOOD: (&str, &str, &str) = (
    "Retry loop never stops",
    "src/net.rs:2",
    "`retry` loops while the error is transient and never counts its attempts.",
);
const POOR: (&str, &str, &str) = (
    "Timeout constant is short",
    "src/net.rs:1",
    "`TIMEOUT_MS` at 300 may cut slow responses.",
);

/// A repository whose branch `net` adds a retry loop.
fn repo() -> Repo {
    let repo = Repo::new();
    repo.write("src/lib.rs", "pub mod net;\n");
    repo.write("src/net.rs", "\n");
    repo.commit("initial");
    repo.git(&["checkout", "-q", "-b", "net"]);
    repo.write(
        "src/net.rs",
        "pub const TIMEOUT_MS: u64 = 300;\npub fn retry() { loop { if send().is_ok() { break } } }\n",
    );
    repo.commit("Add a retry loop");
    repo
}

/// `changes` earlier changes in the store, each reviewed by `good` and `poor`, each raising one
/// finding of its own: the author acted on every one of good's and declined every one of poor's.
fn history(store: &Store, changes: usize) {
    for i in 0..changes {
        let reviews = vec![
            parse_review(
                "good",
                &review(
                    &format!("Handler {i} drops the error"),
                    &format!("src/h{i}.rs:3"),
                    "The error of `send` is ignored, so a failed write looks like success.",
                ),
            ),
            parse_review(
                "poor",
                &review(
                    &format!("Variable {i} could be renamed"),
                    &format!("src/v{i}.rs:9"),
                    "Naming: `tmp` could be clearer.",
                ),
            ),
        ];
        let id = format!("20260101-00{i:04}-hist-{i}");
        let opts = ConsolidateOptions {
            meta: ReportMeta {
                id: id.clone(),
                branch: Some(format!("hist-{i}")),
                round: Some(1),
                ..ReportMeta::default()
            },
            ..ConsolidateOptions::default()
        };
        let mut report = consolidate(&reviews, &opts);
        let items = report
            .findings
            .iter()
            .map(|f| ResolutionItem {
                id: f.id.clone(),
                title: f.title.clone(),
                action: if f.agents == ["good"] {
                    Action::Fixed
                } else {
                    Action::Skipped
                },
                reason: if f.agents == ["good"] {
                    String::new()
                } else {
                    "naming is the team's call".into()
                },
            })
            .collect();
        report.resolution = Some(Resolution {
            items,
            ..Resolution::default()
        });
        assert_eq!(report.findings.len(), 2);
        store
            .write_report(&id, "json", &serde_json::to_string(&report).unwrap())
            .unwrap();
    }
}

fn agents() -> Agents {
    let agents = Agents::new();
    agents.reviewing("good", &review(GOOD.0, GOOD.1, GOOD.2));
    agents.reviewing("poor", &review(POOR.0, POOR.1, POOR.2));
    agents
}

fn run_report(agents: &Agents, repo: &Repo, extra: &[&str]) -> Value {
    let ran = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "good,poor", "--quiet"])
        .args(extra));
    assert_eq!(ran.code, Some(0), "{}\n{}", ran.stdout, ran.stderr);
    json_report(&ran)
}

fn finding<'a>(report: &'a Value, title: &str) -> &'a Value {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["title"] == title)
        .unwrap_or_else(|| panic!("no finding {title:?}: {report:#}"))
}

/// The findings, every field of each.
fn decided(report: &Value) -> Vec<Value> {
    report["findings"].as_array().unwrap().to_vec()
}

#[test]
fn a_store_of_decisions_does_not_weigh_a_run() {
    // Today's report: no history.
    let fresh = repo();
    let agents = agents();
    let today = run_report(&agents, &fresh, &[]);
    assert_eq!(finding(&today, GOOD.0)["tier"], "shown");
    assert_eq!(finding(&today, POOR.0)["tier"], "shown");

    // The same change in a store where good's findings were acted on 12 times of 12, poor's
    // declined 12 times of 12: the findings are today's, every field of each.
    let repo = repo();
    let store = Store::new(&repo.store());
    history(&store, 12);
    let later = run_report(&agents, &repo, &[]);
    assert_eq!(decided(&later), decided(&today));
    for report in [&today, &later] {
        assert!(report.get("reliability").is_none(), "{report:#}");
        assert!(
            report["findings"]
                .as_array()
                .unwrap()
                .iter()
                .all(|f| f.get("confidence_reason").is_none()),
            "{report:#}"
        );
    }
    let id = later["meta"]["id"].as_str().unwrap();
    let md = std::fs::read_to_string(store.report_path(id, "md")).unwrap();
    assert!(!md.contains("Record:"), "{md}");
    assert!(!store.bundle_dir(id).join("reliability.json").exists());

    // A dry run names no records.
    let ran = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "good,poor", "--dry-run"]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(!ran.stdout.contains("Records:"), "{}", ran.stdout);

    // The retired option is refused by both commands, by name.
    for args in [
        &["run", "--agents", "good,poor", "--reliability", "outcomes"][..],
        &["consolidate", "--reliability", "x.json"][..],
    ] {
        let ran = run(agents.cmd(repo.path()).args(args));
        assert_eq!(ran.code, Some(2), "{args:?}: {}", ran.stderr);
        assert!(ran.stderr.contains("--reliability"), "{}", ran.stderr);
    }
}
