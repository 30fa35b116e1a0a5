//! The store as a record that is read as much as written: a run consolidated again from its
//! bundle, a killed run resumed, the events log, `list` and `show`, and a failed agent's cause
//! in its own words. Shell scripts stand in for the agents (custom agents in the user config),
//! on real repositories, through the built binary as a user runs it.

use serde_json::Value;

use crate::support::standin::{Agents, json_report, repo, review, run};

/// What must not change when a run is consolidated again: each finding's id, title, severity,
/// tier, attribution and sources.
fn findings(report: &Value) -> Vec<Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            serde_json::json!({
                "id": f["id"], "title": f["title"], "severity": f["severity"], "tier": f["tier"],
                "agents": f["agents"], "sources": f["sources"], "fingerprint": f["fingerprint"],
            })
        })
        .collect()
}

#[test]
fn a_run_consolidated_again_from_its_bundle_gives_the_same_report() {
    let repo = repo();
    let agents = Agents::new();
    agents.reviewing(
        "alpha",
        &review("Login accepts any password", Some("Rename auth")),
    );
    agents.reviewing("beta", &review("login() accepts every password", None));
    let ran = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "alpha,beta", "--quiet"]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let report = json_report(&ran);
    assert_eq!(report["schema_version"], 2);
    let id = report["meta"]["id"].as_str().unwrap().to_string();
    // Both agents found the login defect: one finding, two agents.
    assert!(
        findings(&report)
            .iter()
            .any(|f| f["agents"] == serde_json::json!(["alpha", "beta"])),
        "{report:#}"
    );

    let bundle = repo.path().join(".git/deep-review/runs").join(&id);
    let again = run(agents.cmd(repo.path()).args([
        "consolidate",
        "--bundle",
        bundle.to_str().unwrap(),
        "--format",
        "json",
    ]));
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    let again: Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(findings(&again), findings(&report));
    assert_eq!(again["verdict"], report["verdict"]);
    assert_eq!(again["meta"]["id"], report["meta"]["id"]);
    assert_eq!(again["meta"]["reviewers"], report["meta"]["reviewers"]);
    // No agent ran again.
    assert_eq!((agents.runs_of("alpha"), agents.runs_of("beta")), (1, 1));
}

#[test]
fn resume_runs_again_only_the_agent_that_was_killed() {
    let repo = repo();
    let agents = Agents::new();
    agents.reviewing("alpha", &review("Login accepts any password", None));
    // beta is killed by a signal in its first run, and reviews in the next.
    let once = agents.path("beta.killed-once");
    let beta_review = agents.path("beta.md");
    std::fs::write(
        &beta_review,
        review("Any password logs in", Some("Rename auth")),
    )
    .unwrap();
    agents.add(
        "beta",
        &format!(
            "if [ ! -e '{once}' ]; then touch '{once}'; kill -9 $$; fi\ncat '{}'",
            beta_review.display(),
            once = once.display()
        ),
    );
    let first = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "alpha,beta", "--quiet"]));
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let report = json_report(&first);
    let beta = report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "beta")
        .unwrap()
        .clone();
    assert_eq!(beta["status"], "failed");
    // Under bubblewrap, an agent killed by a signal N is reported as bwrap reports it, exit
    // code 128 + N (an agent's own exit code in that range cannot be told from it).
    let error = beta["error"].as_str().unwrap();
    assert!(
        error.contains("signal 9") || error.contains("code 137"),
        "{beta:#}"
    );
    let id = report["meta"]["id"].as_str().unwrap().to_string();

    let resumed = run(agents
        .cmd(repo.path())
        .args(["run", "--resume", &id, "--quiet"]));
    assert_eq!(resumed.code, Some(0), "{}", resumed.stderr);
    assert_eq!(agents.runs_of("alpha"), 1, "alpha's saved review is reused");
    assert_eq!(agents.runs_of("beta"), 2, "beta runs again");
    let report = json_report(&resumed);
    assert_eq!(report["meta"]["id"], id.as_str(), "the run's own report");
    for a in report["agents"].as_array().unwrap() {
        assert_eq!(a["status"], "ok", "{a:#}");
    }
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["title"] == "Rename auth"),
        "beta's findings are in: {report:#}"
    );
    // The killed attempt's files stay in the bundle, set aside.
    let bundle = repo.path().join(".git/deep-review/runs").join(&id);
    assert!(bundle.join("beta/before-resume-1/meta.json").is_file());
    // Resuming a finished run runs nothing.
    let again = run(agents
        .cmd(repo.path())
        .args(["run", "--resume", "latest", "--quiet"]));
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert_eq!((agents.runs_of("alpha"), agents.runs_of("beta")), (1, 2));
}

#[test]
fn events_are_logged_one_json_object_per_line() {
    let repo = repo();
    let agents = Agents::new();
    agents.reviewing("alpha", &review("Login accepts any password", None));
    agents.add("broken", "echo 'no credentials' >&2\nexit 2");
    let ran = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "alpha,broken", "--quiet"]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let id = json_report(&ran)["meta"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let log = std::fs::read_to_string(
        repo.path()
            .join(".git/deep-review/runs")
            .join(&id)
            .join("events.jsonl"),
    )
    .unwrap();
    let events: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds = |agent: &str| -> Vec<String> {
        events
            .iter()
            .filter(|e| e["agent"] == agent)
            .map(|e| e["event"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(kinds("alpha"), ["queued", "started", "finished"]);
    assert_eq!(kinds("broken"), ["queued", "started", "failed"]);
    let failed = events.iter().find(|e| e["event"] == "failed").unwrap();
    assert_eq!(failed["failure"]["kind"], "exited");
    assert_eq!(failed["failure"]["code"], 2);
    assert_eq!(failed["message"], "exited with code 2: no credentials");
    assert_eq!(events.last().unwrap()["event"], "done");
    let times: Vec<f64> = events.iter().map(|e| e["at_s"].as_f64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
}

#[test]
fn list_and_show_read_the_store_back() {
    let repo = repo();
    let agents = Agents::new();
    agents.reviewing("alpha", &review("Login accepts any password", None));
    let empty = run(agents.cmd(repo.path()).args(["list"]));
    assert_eq!(empty.code, Some(0));
    assert!(empty.stderr.contains("no report"), "{}", empty.stderr);

    let first = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "alpha", "--quiet"]));
    let second = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "alpha", "--quiet"]));
    assert_eq!(
        (first.code, second.code),
        (Some(0), Some(0)),
        "{}",
        second.stderr
    );
    let newest = json_report(&second)["meta"]["id"]
        .as_str()
        .unwrap()
        .to_string();

    let listed = run(agents.cmd(repo.path()).args(["list", "--format", "json"]));
    let list: Value = serde_json::from_str(&listed.stdout).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["id"], newest.as_str(), "newest first");
    assert_eq!(list[0]["target"], "login");
    assert_eq!(list[0]["verdict"], "Merge with fixes");
    assert_eq!(list[0]["counts"]["important"], 1);
    let text = run(agents.cmd(repo.path()).arg("list"));
    assert!(text.stdout.starts_with(&newest), "{}", text.stdout);
    assert!(text.stdout.contains("Merge with fixes"), "{}", text.stdout);

    let shown = run(agents.cmd(repo.path()).args(["show", "latest"]));
    assert_eq!(shown.code, Some(0), "{}", shown.stderr);
    let md_path = second.stdout.lines().find(|l| l.ends_with(".md")).unwrap();
    assert_eq!(shown.stdout, std::fs::read_to_string(md_path).unwrap());
    let json = run(agents
        .cmd(repo.path())
        .args(["show", &newest, "--format", "json"]));
    let json: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(json["meta"]["id"], newest.as_str());
    let missing = run(agents
        .cmd(repo.path())
        .args(["show", "20990101-000000-nope"]));
    assert_eq!(missing.code, Some(2));
    assert!(
        missing.stderr.contains("deep-review list"),
        "{}",
        missing.stderr
    );
}

#[test]
fn a_failed_agent_is_reported_with_the_line_that_says_why() {
    let repo = repo();
    let agents = Agents::new();
    agents.reviewing("alpha", &review("Login accepts any password", None));
    agents.add(
        "gem",
        "echo 'Loaded cached credentials.' >&2\n\
         echo 'When using Gemini API, you must specify the GEMINI_API_KEY environment variable.' >&2\n\
         echo 'Update your environment and try again (no reload needed if using .env)!' >&2\n\
         exit 41",
    );
    let ran = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "alpha,gem", "--quiet"]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let cause = "you must specify the GEMINI_API_KEY environment variable";
    // The progress line, the retro and the executive summary all say it.
    assert!(
        ran.stderr.contains("gem: failed after") && ran.stderr.contains(cause),
        "{}",
        ran.stderr
    );
    let report = json_report(&ran);
    let gem = report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "gem")
        .unwrap();
    assert!(gem["error"].as_str().unwrap().contains(cause), "{gem:#}");
    assert!(
        report["summary"].as_str().unwrap().contains(cause),
        "{}",
        report["summary"]
    );
    assert!(
        !gem["error"]
            .as_str()
            .unwrap()
            .contains("Update your environment"),
        "{gem:#}"
    );
}
