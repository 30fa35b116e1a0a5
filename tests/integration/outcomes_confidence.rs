//! Agents' records in confidence, through the built binary: a store whose other changes show one
//! reviewer's findings acted on and another's declined, then a run where each raises one finding
//! alone. The good record's finding stands, the poor record's is demoted, each with its reason;
//! with no history (or `--reliability none`) the report is today's, finding for finding; the run
//! consolidated again from its bundle is the same even after more decisions; and a change's own
//! decisions never score it.

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
fn a_good_record_keeps_a_lone_finding_and_a_poor_one_demotes_it() {
    // Today's report: no history.
    let fresh = repo();
    let agents = agents();
    let today = run_report(&agents, &fresh, &[]);
    assert_eq!(finding(&today, GOOD.0)["tier"], "shown");
    assert_eq!(finding(&today, POOR.0)["tier"], "shown");
    assert!(today.get("reliability").is_none(), "{today:#}");
    assert!(
        today["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f.get("confidence_reason").is_none())
    );

    // The same change in a store where good's findings were acted on 12 times of 12, poor's
    // declined 12 times of 12.
    let repo = repo();
    let store = Store::new(&repo.store());
    history(&store, 12);
    let weighed = run_report(&agents, &repo, &[]);
    let good = finding(&weighed, GOOD.0);
    let poor = finding(&weighed, POOR.0);
    assert_eq!(good["tier"], "shown", "{good:#}");
    assert_eq!(poor["tier"], "low_confidence", "{poor:#}");
    assert!(good["confidence"].as_f64() > finding(&today, GOOD.0)["confidence"].as_f64());
    assert!(poor["confidence"].as_f64() < finding(&today, POOR.0)["confidence"].as_f64());
    let good_reason = good["confidence_reason"].as_str().unwrap();
    let poor_reason = poor["confidence_reason"].as_str().unwrap();
    assert!(
        good_reason.starts_with("Good: 12 of 12 similar findings acted on; not raised by Poor"),
        "{good_reason}"
    );
    assert!(
        poor_reason.starts_with("Poor: 0 of 12 similar findings acted on; not raised by Good"),
        "{poor_reason}"
    );
    // The records used are in the report, and the Markdown says why.
    let table = &weighed["reliability"];
    assert_eq!(table["method"], "outcomes");
    assert!(
        table["basis"].as_str().unwrap().starts_with(
            "24 decided findings (12 acted on, 12 declined) of 12 reports (12 changes)"
        ),
        "{table:#}"
    );
    let id = weighed["meta"]["id"].as_str().unwrap();
    let md = std::fs::read_to_string(store.report_path(id, "md")).unwrap();
    assert!(
        md.contains("Record: Poor: 0 of 12 similar findings acted on"),
        "{md}"
    );
    let html = std::fs::read_to_string(store.report_path(id, "html")).unwrap();
    assert!(
        html.contains("<strong>Record:</strong> Good: 12 of 12"),
        "{html}"
    );

    // A dry run says what the agents will be weighed by.
    let ran = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "good,poor", "--dry-run"]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(
        ran.stdout
            .contains("Records: agents weighed by outcomes (24 decided findings"),
        "{}",
        ran.stdout
    );

    // Asked for no records, the same history changes nothing: today's findings exactly.
    let unweighed = self::repo();
    history(&Store::new(&unweighed.store()), 12);
    let none = run_report(&agents, &unweighed, &["--reliability", "none"]);
    assert_eq!(decided(&none), decided(&today));
    assert!(none.get("reliability").is_none());
    // From agreement alone (asked for), the records come from who raised what, no decision.
    let by_agreement = self::repo();
    history(&Store::new(&by_agreement.store()), 12);
    let agreed = run_report(&agents, &by_agreement, &["--reliability", "agreement"]);
    assert_eq!(agreed["reliability"]["method"], "agreement");
    assert!(
        finding(&agreed, GOOD.0)["confidence_reason"]
            .as_str()
            .unwrap()
            .starts_with("Good: by agreement alone, raises "),
        "{agreed:#}"
    );

    // More decisions since the run do not change it when it is consolidated again: the bundle
    // holds the records it was weighed with.
    history(&store, 30);
    let bundle = store.bundle_dir(id);
    let ran = run(agents.cmd(repo.path()).args([
        "consolidate",
        "--bundle",
        bundle.to_str().unwrap(),
        "--format",
        "json",
    ]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let again: Value = serde_json::from_str(&ran.stdout).unwrap();
    assert_eq!(decided(&again), decided(&weighed));
    assert_eq!(again["reliability"], weighed["reliability"]);

    // The same table given to `consolidate --reliability` weighs saved reviews the same way.
    let good_md = agents.path("good.md");
    let poor_md = agents.path("poor.md");
    let ran = run(agents.cmd(repo.path()).args([
        "consolidate",
        "--raw",
        &format!("good={}", good_md.display()),
        "--raw",
        &format!("poor={}", poor_md.display()),
        "--reliability",
        store.report_path(id, "json").to_str().unwrap(),
        "--format",
        "json",
    ]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let offline: Value = serde_json::from_str(&ran.stdout).unwrap();
    assert_eq!(finding(&offline, POOR.0)["tier"], "low_confidence");
    assert_eq!(
        finding(&offline, GOOD.0)["confidence_reason"],
        good["confidence_reason"]
    );
}

#[test]
fn a_change_is_never_weighed_with_its_own_decisions() {
    let repo = repo();
    let store = Store::new(&repo.store());
    history(&store, 3);
    let agents = agents();
    let first = run_report(&agents, &repo, &[]);
    let rows = |r: &Value, agent: &str| {
        r["reliability"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["agent"] == agent && row.get("category").is_none())
            .unwrap()
            .clone()
    };
    assert_eq!(rows(&first, "poor")["declined"], 3);
    // The author declines this change's finding of good's; the next round of the same change is
    // weighed with the other changes' decisions only.
    let id = first["meta"]["id"].as_str().unwrap();
    let good_id = finding(&first, GOOD.0)["id"].as_str().unwrap().to_string();
    let ran = run(agents.cmd(repo.path()).args([
        "resolve",
        id,
        "--skipped",
        &format!("{good_id}=the loop is bounded by the caller"),
    ]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    repo.write("src/other.rs", "pub fn x() {}\n");
    repo.commit("More");
    let second = run_report(&agents, &repo, &[]);
    assert_eq!(second["round"], 2);
    assert_eq!(rows(&second, "good")["acted_on"], 3);
    assert_eq!(rows(&second, "good")["declined"], 0);
    assert_eq!(second["reliability"], first["reliability"]);
    // Another change is weighed with it.
    repo.git(&["checkout", "-q", "-b", "net-2"]);
    let other = run_report(&agents, &repo, &[]);
    assert_eq!(rows(&other, "good")["declined"], 1);
}
