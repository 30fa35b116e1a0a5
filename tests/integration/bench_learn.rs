//! `bench --learn`: agents' records learnt on one repository's golden labels and used on
//! another. A dataset made here, where one tool's lone findings are the real bugs and two
//! others' lone findings never are, shows the mechanism; on the development split (when
//! present) the command reports the held-out figures it is asked for.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

use deep_review::bench::learn::{Learn, leave_one_repo_out};
use deep_review::bench::{self, Dataset, PrData, dataset::GoldenBug};
use deep_review::types::{Finding, Review};

/// One PR of repository `repo`: all three tools describe bug `n`-A in the same words; `sharp`
/// alone finds bug `n`-B; `noisy1` and `noisy2` each raise a point that is no bug.
fn pr(repo: &str, n: usize) -> PrData {
    let words = [
        "copper", "violet", "harbor", "meadow", "falcon", "ember", "glacier", "quartz",
    ];
    let w = |k: usize| words[(n * 3 + k) % words.len()];
    let agreed = format!(
        "The {} handler dereferences a nil session when the {} token expires, which crashes the worker.",
        w(0),
        w(1)
    );
    let finding = |id: &str, text: &str| {
        let mut f = Finding::new(id, text);
        f.explanation = text.to_string();
        f
    };
    let review = |agent: &str, findings: Vec<Finding>| Review {
        agent: agent.into(),
        findings,
        ..Review::default()
    };
    let reviews = vec![
        review(
            "noisy1",
            vec![
                finding("1", &agreed),
                finding(
                    "2",
                    &format!("Consider renaming {}Helper{n} for readability.", w(2)),
                ),
            ],
        ),
        review(
            "noisy2",
            vec![
                finding("1", &agreed),
                finding(
                    "2",
                    &format!("The docs of module{n} could mention {} options.", w(1)),
                ),
            ],
        ),
        review(
            "sharp",
            vec![
                finding("1", &agreed),
                finding(
                    "2",
                    &format!(
                        "Integer overflow in quota{n}: the counter wraps past u32 max and the limit check passes."
                    ),
                ),
            ],
        ),
    ];
    let mut verdicts: HashMap<(String, String), BTreeSet<usize>> = HashMap::new();
    for tool in ["noisy1", "noisy2", "sharp"] {
        verdicts.insert((tool.into(), "1".into()), BTreeSet::from([0]));
    }
    verdicts.insert(("sharp".into(), "2".into()), BTreeSet::from([1]));
    PrData {
        url: format!("https://example.com/{repo}/pull/{n}"),
        repo: repo.into(),
        title: format!("PR {n}"),
        golden: vec![
            GoldenBug {
                comment: "nil session".into(),
                severity: None,
            },
            GoldenBug {
                comment: "overflow".into(),
                severity: None,
            },
        ],
        reviews,
        verdicts,
        evaluations: BTreeMap::new(),
    }
}

fn dataset() -> Dataset {
    let prs: Vec<PrData> = (0..4)
        .map(|n| pr("north", n))
        .chain((4..8).map(|n| pr("south", n)))
        .collect();
    Dataset {
        dir: PathBuf::from("made-here"),
        judge: "hand".into(),
        tools: vec!["noisy1".into(), "noisy2".into(), "sharp".into()],
        prs,
        warnings: Vec::new(),
    }
}

#[test]
fn a_record_learnt_on_one_repository_keeps_the_sharp_tools_lone_findings_on_the_other() {
    let ds = dataset();
    let agents = ds.tools.clone();
    let unlearned = bench::run(&ds, &agents, &bench::project_consolidator);
    // Without records, a lone text finding of one agent in three does not stand: only the
    // agreed bugs are kept, 8 of 16.
    assert_eq!(unlearned.consolidated.kept, 8);
    assert_eq!(unlearned.consolidated.golden_found, 8);

    let (learned, result) =
        leave_one_repo_out(&ds, &agents, Learn::LeaveOneRepoOut, &unlearned).unwrap();
    for r in &learned.repos {
        let other = if r.repo == "north" { "south" } else { "north" };
        assert_eq!(r.learnt_on, [other]);
        // Each repository's 4 PRs give 16 merged findings: 4 agreed, 4 sharp's, 8 noisy.
        assert_eq!(r.findings_learnt_from, 16);
        assert!(r.reliability.basis.contains(other) && !r.reliability.basis.contains(&r.repo));
        let sharp = r.reliability.row("sharp", None).unwrap();
        assert_eq!((sharp.acted_on, sharp.declined), (8, 0));
        let noisy = r.reliability.row("noisy1", None).unwrap();
        assert_eq!((noisy.acted_on, noisy.declined), (4, 4));
        // Held out: sharp's lone findings stand, the noisy ones do not.
        assert_eq!(
            (
                r.learned.kept,
                r.learned.true_positives,
                r.learned.golden_found
            ),
            (8, 8, 8),
            "{r:#?}"
        );
        assert_eq!(r.unlearned.kept, 4);
        assert!(r.learned.f1 > r.unlearned.f1);
    }
    assert_eq!(learned.learned.golden_found, 16);
    assert_eq!(result.consolidated, learned.learned);
    // Each kept finding's representative is what it should be: sharp's overflow is sharp's.
    let lone: Vec<&str> = result
        .prs
        .iter()
        .flat_map(|p| p.kept.iter())
        .filter(|k| k.members.len() == 1)
        .map(|k| k.agent.as_str())
        .collect();
    assert_eq!(lone, ["sharp"; 8]);

    // No records asked: nothing learnt.
    assert!(leave_one_repo_out(&ds, &agents, Learn::None, &unlearned).is_none());
    // From agreement alone: the same protocol, no label read.
    let (by_agreement, _) = leave_one_repo_out(&ds, &agents, Learn::Agreement, &unlearned).unwrap();
    assert_eq!(by_agreement.method, Learn::Agreement);
    assert!(
        by_agreement.repos[0]
            .reliability
            .basis
            .contains("no label read")
    );
}

/// The command on the development split: the held-out figures, each repository learnt on the
/// other, beside today's; `--learn none` leaves today's output as it was.
#[test]
#[ignore = "needs ../shared (reference reports and benchmark data): run with --run-ignored all"]
fn the_development_split_reports_learnt_figures_per_held_out_repository() {
    let dir = crate::support::shared::shared_dir("bench/martian-dev");
    let run = |learn: &str| -> serde_json::Value {
        let out = assert_cmd::Command::cargo_bin("deep-review")
            .unwrap()
            .args(["bench", "--format", "json", "--learn", learn, "--dataset"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let none = run("none");
    assert!(none.get("learned").is_none());
    assert!(none["weights"].as_str().unwrap().starts_with("none"));
    let learned = run("leave-one-repo-out");
    // Everything but the learnt part is today's.
    assert_eq!(learned["consolidated"], none["consolidated"]);
    assert_eq!(learned["repos"], none["repos"]);
    let repos = learned["learned"]["repos"].as_array().unwrap();
    let pairs: Vec<(&str, &str)> = repos
        .iter()
        .map(|r| {
            (
                r["repo"].as_str().unwrap(),
                r["learnt_on"][0].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(pairs, [("grafana", "sentry"), ("sentry", "grafana")]);
    for (r, today) in repos.iter().zip(none["repos"].as_array().unwrap()) {
        assert_eq!(r["unlearned"], today["consolidated"]);
        assert_eq!(r["best"], today["best"]);
        eprintln!(
            "{}: best single {} {:.3}, no records {:.3}, learnt {:.3} ({:+.3})",
            r["repo"],
            r["best_tool"],
            r["best"]["f1"].as_f64().unwrap(),
            r["unlearned"]["f1"].as_f64().unwrap(),
            r["learned"]["f1"].as_f64().unwrap(),
            r["delta_f1"].as_f64().unwrap()
        );
    }
    assert!(
        learned["weights"]
            .as_str()
            .unwrap()
            .starts_with("learned (golden labels, leave one repository out)")
    );
}
