//! Scoring of `deep-review bench` on a hand-made dataset whose figures are computed by hand, and
//! on the real development split (when present) against the judge's own per-tool counts.
//!
//! The hand-made dataset (tests/fixtures/bench/): 2 PRs, 5 golden bugs, 3 tools.
//!
//! | PR | tool  | id | verdict                         |
//! |----|-------|----|---------------------------------|
//! | 1  | alpha | 1  | G1 (race on redeemCoupon)       |
//! | 1  | alpha | 2  | false positive                  |
//! | 1  | beta  | 1  | G1                              |
//! | 1  | beta  | 2  | G2 (divide by zero)             |
//! | 1  | gamma | 1  | false positive                  |
//! | 2  | alpha | 1  | H1 and H2 (one candidate, two)  |
//! | 2  | beta  | 1  | false positive                  |
//! | 2  | beta  | 2  | false positive                  |
//!
//! PR 1 has 3 golden bugs (G3 nobody finds), PR 2 has 2: 5 in all.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use deep_review::bench::{self, KeptFinding, SourceId, dataset};
use deep_review::types::Review;

const EPS: f64 = 1e-9;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench")
}

fn all(ds: &bench::Dataset) -> Vec<String> {
    ds.tools.clone()
}

fn assert_close(got: f64, want: f64, what: &str) {
    assert!((got - want).abs() < EPS, "{what}: got {got}, want {want}");
}

#[test]
fn reviews_are_built_from_the_candidates() {
    let ds = dataset::load(&fixture(), None).unwrap();
    assert_eq!(ds.judge, "judge-a");
    assert_eq!(ds.tools, ["alpha", "beta", "gamma"]);
    assert_eq!(ds.prs.len(), 2);
    assert_eq!(ds.golden_total(), 5);
    let pr1 = &ds.prs[0];
    assert_eq!(pr1.url, "https://github.com/example/shop/pull/1");
    // Sorted by tool name, whatever the order in the JSON file.
    let agents: Vec<&str> = pr1.reviews.iter().map(|r| r.agent.as_str()).collect();
    assert_eq!(agents, ["alpha", "beta", "gamma"]);
    let alpha = pr1.review("alpha").unwrap();
    assert_eq!(alpha.findings.len(), 2);
    let f = &alpha.findings[0];
    assert_eq!(f.id, "1");
    assert_eq!(
        f.title,
        "redeemCoupon is not atomic: two concurrent checkouts can both redeem the same single-use coupon."
    );
    assert!(
        f.explanation
            .ends_with("Wrap the read and the write in a transaction.")
    );
    assert!(f.locations.is_empty() && f.severity.is_none());
    // A path and line in the data become the finding's location.
    let beta2 = pr1.finding("beta", "2").unwrap();
    assert_eq!(beta2.locations[0].to_string(), "cart/discount.go:42");
    // gamma has no entry for PR 2: no review for it there.
    assert!(ds.prs[1].review("gamma").is_none());
    // The verdicts: one candidate matched to two golden bugs.
    assert_eq!(ds.prs[1].golden_matched("alpha", "1").unwrap().len(), 2);
    assert!(pr1.golden_matched("alpha", "2").is_none());
}

#[test]
fn each_tool_alone_matches_the_hand_computed_figures() {
    let ds = dataset::load(&fixture(), None).unwrap();
    let r = bench::run(&ds, &all(&ds), &bench::union_consolidator);

    // alpha: kept 3 (PR1: 2, PR2: 1), TP 2 (PR1 #1, PR2 #1), golden found G1, H1, H2 = 3 of 5.
    let a = &r.tools["alpha"];
    assert_eq!(
        (a.kept, a.true_positives, a.golden_found, a.golden_total),
        (3, 2, 3, 5)
    );
    assert_close(a.precision, 2.0 / 3.0, "alpha precision");
    assert_close(a.recall, 3.0 / 5.0, "alpha recall");
    assert_close(a.f1, 12.0 / 19.0, "alpha F1"); // 2·(2/3)(3/5) / (2/3 + 3/5)

    // beta: kept 4, TP 2 (PR1 #1, #2), found G1, G2 = 2 of 5.
    let b = &r.tools["beta"];
    assert_eq!((b.kept, b.true_positives, b.golden_found), (4, 2, 2));
    assert_close(b.precision, 0.5, "beta precision");
    assert_close(b.recall, 0.4, "beta recall");
    assert_close(b.f1, 4.0 / 9.0, "beta F1");

    // gamma: one false positive; nothing found.
    let g = &r.tools["gamma"];
    assert_eq!((g.kept, g.true_positives, g.golden_found), (1, 0, 0));
    assert_eq!((g.precision, g.recall, g.f1), (0.0, 0.0, 0.0));

    // Per PR: alpha on PR 1 keeps 2, 1 TP, finds 1 of 3.
    let pr1 = &r.prs[0].tools["alpha"];
    assert_eq!(
        (
            pr1.kept,
            pr1.true_positives,
            pr1.golden_found,
            pr1.golden_total
        ),
        (2, 1, 1, 3)
    );
    assert_close(
        pr1.f1,
        2.0 * 0.5 * (1.0 / 3.0) / (0.5 + 1.0 / 3.0),
        "alpha PR1 F1",
    );

    // The union (every candidate kept): 8 kept, 4 TP, found G1, G2, H1, H2 = 4 of 5.
    let u = &r.consolidated;
    assert_eq!((u.kept, u.true_positives, u.golden_found), (8, 4, 4));
    assert_close(u.f1, 8.0 / 13.0, "union F1"); // 2·0.5·0.8 / 1.3

    // The best single tool among all three is alpha.
    assert_eq!(r.best_tool(&r.agents).unwrap().0, "alpha");
}

/// A consolidation given by hand: PR 1 merges alpha#1 with beta#1 and keeps beta#2; PR 2 keeps
/// alpha#1. The first member is the representative.
fn hand_grouping(first_pr1: (&str, &str)) -> impl Fn(&[Review]) -> Vec<KeptFinding> {
    let first = SourceId::new(first_pr1.0, first_pr1.1);
    move |reviews: &[Review]| {
        let pr1 = reviews.iter().any(|r| r.agent == "gamma");
        if pr1 {
            vec![
                KeptFinding {
                    members: vec![first.clone(), SourceId::new("beta", "1")],
                },
                KeptFinding {
                    members: vec![SourceId::new("beta", "2")],
                },
            ]
        } else {
            vec![KeptFinding {
                members: vec![SourceId::new("alpha", "1")],
            }]
        }
    }
}

#[test]
fn the_representative_decides_a_merged_findings_verdict() {
    let ds = dataset::load(&fixture(), None).unwrap();
    // Representative alpha#1 (matched G1): 3 kept, all TP; found G1, G2, H1, H2 = 4 of 5.
    let r = bench::run(&ds, &all(&ds), &hand_grouping(("alpha", "1")));
    let c = &r.consolidated;
    assert_eq!((c.kept, c.true_positives, c.golden_found), (3, 3, 4));
    assert_close(c.precision, 1.0, "precision");
    assert_close(c.recall, 0.8, "recall");
    assert_close(c.f1, 8.0 / 9.0, "F1");
    let kept = &r.prs[0].kept[0];
    assert_eq!(kept.agent, "alpha");
    assert!(kept.true_positive);
    assert_eq!(kept.members.len(), 2);
    assert_eq!(kept.members[1].agent, "beta");

    // Same members, but the false positive gamma#1 shown first: that finding is now a false
    // positive and G1 is no longer found, although a matched candidate is among its members.
    let r = bench::run(&ds, &all(&ds), &hand_grouping(("gamma", "1")));
    let c = &r.consolidated;
    assert_eq!((c.kept, c.true_positives, c.golden_found), (3, 2, 3));
    assert_close(c.precision, 2.0 / 3.0, "precision");
    assert_close(c.recall, 0.6, "recall");
    assert!(!r.prs[0].kept[0].true_positive);
}

#[test]
fn a_golden_bug_counts_once_however_many_kept_findings_match_it() {
    let ds = dataset::load(&fixture(), None).unwrap();
    // alpha#1 and beta#1 both match G1, kept apart: 2 TP, but 1 golden bug found.
    let kept = vec![
        KeptFinding {
            members: vec![SourceId::new("alpha", "1")],
        },
        KeptFinding {
            members: vec![SourceId::new("beta", "1")],
        },
    ];
    let t = bench::score::score_pr(&ds.prs[0], &kept);
    assert_eq!(
        (t.kept, t.true_positives, t.golden_found, t.golden_total),
        (2, 2, 1, 3)
    );
    // An id no review has is a false positive, not a panic.
    let bogus = vec![KeptFinding {
        members: vec![SourceId::new("alpha", "99")],
    }];
    assert_eq!(bench::score::score_pr(&ds.prs[0], &bogus).true_positives, 0);
}

#[test]
fn bad_json_is_reported_with_the_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), tmp.path());
    let cands = tmp.path().join("results/judge-a/candidates.json");
    std::fs::write(
        &cands,
        "{\n  \"https://x/pull/1\": {\"a\": [ {\"text\": 3} ]\n}\n",
    )
    .unwrap();
    let err = dataset::load(tmp.path(), None).unwrap_err().to_string();
    assert!(err.contains("candidates.json:2:"), "{err}");

    std::fs::write(&cands, "{ not json").unwrap();
    let err = dataset::load(tmp.path(), None).unwrap_err().to_string();
    assert!(err.contains("candidates.json:1:"), "{err}");
}

#[test]
fn judges_are_chosen_or_named() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), tmp.path());
    let err = dataset::load(tmp.path(), Some("judge-b"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("judge \"judge-b\" not found") && err.contains("judge-a"),
        "{err}"
    );
    copy_dir(
        &fixture().join("results/judge-a"),
        &tmp.path().join("results/judge-b"),
    );
    let err = dataset::load(tmp.path(), None).unwrap_err().to_string();
    assert!(err.contains("--judge"), "{err}");
    assert_eq!(
        dataset::load(tmp.path(), Some("judge-b")).unwrap().judge,
        "judge-b"
    );
    let err = dataset::load(&tmp.path().join("nope"), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("does not exist"), "{err}");
}

#[test]
fn the_command_prints_json_that_carries_its_own_scoring() {
    let out = Command::cargo_bin("deep-review")
        .unwrap()
        .args(["bench", "--format", "json", "--dataset"])
        .arg(fixture())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_close(
        v["tools"]["alpha"]["f1"].as_f64().unwrap(),
        12.0 / 19.0,
        "alpha F1",
    );
    assert_eq!(v["tools"]["beta"]["kept"], 4);
    assert_eq!(v["agents"], serde_json::json!(["alpha", "beta", "gamma"]));
    let prs = v["prs"].as_array().unwrap();
    assert_eq!(prs.len(), 2);
    // Every kept finding's representative is its first member, and the counts add up.
    let mut kept = 0;
    let mut tp = 0;
    for pr in prs {
        for k in pr["kept"].as_array().unwrap() {
            assert_eq!(k["agent"], k["members"][0]["agent"]);
            assert_eq!(k["text"], k["members"][0]["text"]);
            kept += 1;
            tp += usize::from(k["true_positive"].as_bool().unwrap());
        }
    }
    assert_eq!(v["consolidated"]["kept"], kept);
    assert_eq!(v["consolidated"]["true_positives"], tp);
    // The race that alpha and beta both describe is kept and shown by a matched candidate.
    let race = prs[0]["kept"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["text"].as_str().unwrap().contains("redeemCoupon"))
        .expect("the race is kept");
    assert_eq!(race["true_positive"], true);
}

#[test]
fn the_table_names_the_best_tool_and_the_delta() {
    Command::cargo_bin("deep-review")
        .unwrap()
        .args(["bench", "--agents", "alpha,beta", "--dataset"])
        .arg(fixture())
        .assert()
        .success()
        .stdout(predicates::str::contains("best single (alpha)"))
        .stdout(predicates::str::contains("consolidated (alpha,beta)"))
        .stdout(predicates::str::contains("delta F1"))
        .stdout(predicates::str::contains("wall time"));
}

#[test]
fn a_tool_named_twice_is_one_agent() {
    let ds = dataset::load(&fixture(), None).unwrap();
    let twice = ["alpha".to_string(), "beta".to_string(), "alpha".to_string()];
    assert_eq!(
        bench::resolve_agents(&ds, Some(&twice)).unwrap(),
        ["alpha", "beta"]
    );
    assert!(bench::resolve_agents(&ds, Some(&[])).is_err());
}

#[test]
fn an_unknown_agent_is_named_in_the_error() {
    Command::cargo_bin("deep-review")
        .unwrap()
        .args(["bench", "--agents", "alpha,delta", "--dataset"])
        .arg(fixture())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("unknown tool \"delta\""))
        .stderr(predicates::str::contains("alpha, beta, gamma"));
}

/// The project's consolidation on the hand-made dataset, by its stated rule
/// (src/consolidate/confidence.rs): on PR 1 the race that alpha and beta both describe is one
/// merged finding, kept on agreement (2 of 3 reporting agents); beta's divide-by-zero stands
/// alone because it has a location and reads as a defect; alpha's naming remark and gamma's
/// logging remark are single, unlocated and dropped. On PR 2 every finding is one agent's and
/// unlocated: nothing is kept. So 2 kept, both true, 2 of 5 golden bugs found.
#[test]
fn the_project_consolidation_keeps_what_its_rule_says() {
    let ds = dataset::load(&fixture(), None).unwrap();
    let r = bench::run(&ds, &all(&ds), &bench::project_consolidator);
    let c = &r.consolidated;
    assert_eq!((c.kept, c.true_positives, c.golden_found), (2, 2, 2));
    assert_close(c.precision, 1.0, "precision");
    assert_close(c.recall, 0.4, "recall");
    assert_close(c.f1, 2.0 * 0.4 / 1.4, "F1");
    let race = &r.prs[0].kept[0];
    let mut who: Vec<&str> = race.members.iter().map(|m| m.agent.as_str()).collect();
    who.sort();
    assert_eq!(who, ["alpha", "beta"]);
    assert!(race.true_positive);
    assert_eq!(r.prs[0].kept[1].members.len(), 1);
    assert_eq!(r.prs[0].kept[1].agent, "beta");
    assert!(r.prs[1].kept.is_empty());
}

/// The acceptance figures of the development split, as a guard for whoever changes
/// similarity or confidence: consolidating all tools beats the best single tool by at least
/// 0.05 F1, and so does consolidating claude, gemini and copilot against the best of those three.
#[test]
#[ignore = "needs ../shared (reference reports and benchmark data): run with --run-ignored all"]
fn consolidation_beats_the_best_single_tool_on_the_development_split() {
    let dir = martian_dev();
    let ds = dataset::load(&dir, None).unwrap();
    for agents in [
        ds.tools.clone(),
        vec!["claude".into(), "gemini".into(), "copilot".into()],
    ] {
        let r = bench::run(&ds, &agents, &bench::project_consolidator);
        let (best, fig) = r.best_tool(&agents).unwrap();
        eprintln!(
            "{}: consolidated F1 {:.3} (P {:.3} R {:.3}), best single {best} {:.3}",
            agents.join(","),
            r.consolidated.f1,
            r.consolidated.precision,
            r.consolidated.recall,
            fig.f1
        );
        assert!(
            r.consolidated.f1 >= fig.f1 + 0.05,
            "{}: consolidated F1 {:.3} < {best} {:.3} + 0.05",
            agents.join(","),
            r.consolidated.f1,
            fig.f1
        );
    }
}

/// The shared development split (see [`crate::support::shared`]).
fn martian_dev() -> PathBuf {
    crate::support::shared::shared_dir("bench/martian-dev")
}

/// On the real development split, scoring a tool alone reproduces the judge's own counts: the
/// golden bugs found equal the evaluation file's `tp` for every (PR, tool), and the false
/// positives equal its `fp` except where the file does not add up by itself (a placeholder
/// such as "Baz review" listed as a false positive for a tool with no candidates, or a candidate
/// the file lists neither as matched nor as a false positive).
#[test]
#[ignore = "needs ../shared (reference reports and benchmark data): run with --run-ignored all"]
fn per_tool_scores_reproduce_the_evaluation_file() {
    let dir = crate::support::shared::shared_dir("bench/martian-dev");
    let ds = dataset::load(&dir, None).unwrap();
    assert_eq!(ds.prs.len(), 20);
    let mut checked = 0;
    let mut inconsistent = 0;
    for pr in &ds.prs {
        for (tool, eval) in &pr.evaluations {
            if eval.skipped {
                continue;
            }
            let t = bench::score::score_pr(pr, &bench::score::tool_alone(pr, tool));
            assert_eq!(
                t.golden_found, eval.tp,
                "{} {tool}: golden found vs tp",
                pr.url
            );
            let texts: Vec<&str> = pr
                .review(tool)
                .map(|r| r.findings.iter().map(|f| f.explanation.as_str()).collect())
                .unwrap_or_default();
            let listed_fp_not_candidate = eval
                .false_positive_texts
                .iter()
                .filter(|t| !texts.contains(&t.as_str()))
                .count();
            let unaccounted = texts.len()
                - (t.true_positives + eval.false_positive_texts.len() - listed_fp_not_candidate);
            let ours_fp = t.kept - t.true_positives;
            if listed_fp_not_candidate == 0 && unaccounted == 0 {
                assert_eq!(ours_fp, eval.fp, "{} {tool}: false positives", pr.url);
            } else {
                inconsistent += 1;
                assert_eq!(
                    ours_fp + listed_fp_not_candidate,
                    eval.fp + unaccounted,
                    "{} {tool}: false positives, after the file's own gaps",
                    pr.url
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 200, "only {checked} (PR, tool) pairs checked");
    assert!(
        inconsistent <= 20,
        "{inconsistent} pairs do not add up in the file"
    );
    eprintln!("{checked} (PR, tool) pairs checked, {inconsistent} where the file has gaps");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// The hand-made split has one repository: per-repository figures are the overall ones, and
/// there is nothing to hold out.
#[test]
fn one_repository_gives_one_row_and_no_leave_one_out() {
    let ds = dataset::load(&fixture(), None).unwrap();
    assert!(ds.prs.iter().all(|p| p.repo == "shop"));
    let r = bench::run(&ds, &all(&ds), &bench::project_consolidator);
    assert_eq!(r.repos.len(), 1);
    let shop = &r.repos[0];
    assert_eq!((shop.repo.as_str(), shop.prs), ("shop", 2));
    assert_eq!(shop.consolidated, r.consolidated);
    let (best, fig) = r.best_tool(&r.agents).unwrap();
    assert_eq!((shop.best_tool.as_str(), shop.best), (best, *fig));
    assert!(bench::generalize::leave_one_out(&ds, &all(&ds)).is_empty());
}

/// With the two PRs as two repositories, each is held out in turn: the thresholds chosen are
/// the grid's best on the other repository, and the held-out figures are those the chosen
/// thresholds give on the held-out PR.
#[test]
fn leave_one_out_chooses_on_the_other_repository_and_scores_the_held_out_one() {
    use deep_review::consolidate::Tuning;
    let mut ds = dataset::load(&fixture(), None).unwrap();
    ds.prs[0].repo = "one".into();
    ds.prs[1].repo = "two".into();
    let agents = all(&ds);
    let held = bench::generalize::leave_one_out(&ds, &agents);
    assert_eq!(held.len(), 2);
    for h in &held {
        let other = if h.held_out == "one" { "two" } else { "one" };
        assert_eq!(h.tuned_on, [other]);
        let f1_on = |repo: &str, t: Tuning| {
            let c = move |reviews: &[Review]| bench::project_kept(reviews, t);
            let r = bench::run(&ds, &agents, &c);
            r.repos
                .iter()
                .find(|f| f.repo == repo)
                .unwrap()
                .consolidated
        };
        let chosen = f1_on(other, h.tuning).f1;
        for merge_threshold in bench::generalize::MERGE_GRID {
            for keep_log_odds in bench::generalize::KEEP_GRID {
                let t = Tuning {
                    merge_threshold,
                    keep_log_odds,
                };
                assert!(
                    f1_on(other, t).f1 <= chosen + EPS,
                    "{t:?} beats {:?}",
                    h.tuning
                );
            }
        }
        assert_eq!(h.consolidated, f1_on(&h.held_out, h.tuning));
        assert_close(h.delta_f1, h.consolidated.f1 - h.best.f1, "delta");
    }
}

/// On the real split: one row per repository (10 PRs each) and each held out once, tuned on
/// the other. (Whether the target margin is met is reported by `bench`, not asserted.)
#[test]
#[ignore = "needs ../shared (reference reports and benchmark data): run with --run-ignored all"]
fn the_development_split_reports_per_repository_and_leave_one_out() {
    let ds = dataset::load(&martian_dev(), None).unwrap();
    let r = bench::run(&ds, &ds.tools, &bench::project_consolidator);
    let rows: Vec<(&str, usize)> = r.repos.iter().map(|f| (f.repo.as_str(), f.prs)).collect();
    assert_eq!(rows, [("grafana", 10), ("sentry", 10)]);
    let golden: usize = r.repos.iter().map(|f| f.consolidated.golden_total).sum();
    assert_eq!(golden, r.consolidated.golden_total);
    let held = bench::generalize::leave_one_out(&ds, &ds.tools);
    let pairs: Vec<(&str, &str)> = held
        .iter()
        .map(|h| (h.held_out.as_str(), h.tuned_on[0].as_str()))
        .collect();
    assert_eq!(pairs, [("grafana", "sentry"), ("sentry", "grafana")]);
}
