//! Where the tool and its docs disagreed (issue 33 item 5), each through the built binary as a
//! user runs it: the tool now does what the docs promise, or says what it does.

use crate::support::standin::{self, Agents, json_report, run};

#[test]
fn a_negative_budget_is_refused_by_what_a_budget_is() {
    let repo = standin::repo();
    let agents = Agents::new();
    agents.reviewing("a", &standin::review("Login accepts any password", None));
    let ran = run(agents.cmd(repo.path()).args([
        "run",
        "--agents",
        "a",
        "--dry-run",
        "--budget-usd",
        "-1",
    ]));
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("the budget must be a positive number"),
        "{}",
        ran.stderr
    );
    assert!(
        !ran.stderr.contains("unexpected argument"),
        "{}",
        ran.stderr
    );
}

#[test]
fn an_out_file_in_a_missing_folder_is_refused_before_any_agent_runs() {
    let repo = standin::repo();
    let agents = Agents::new();
    agents.reviewing("a", &standin::review("Login accepts any password", None));
    let out = repo.path().join("no/such/folder/report.md");
    let ran = run(agents.cmd(repo.path()).args([
        "run",
        "--agents",
        "a",
        "--quiet",
        "--fail-on",
        "important",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("--out") && ran.stderr.contains("does not exist"),
        "{}",
        ran.stderr
    );
    assert_eq!(agents.runs_of("a"), 0, "the agent ran before the refusal");
}

#[test]
fn an_agent_cut_by_the_runs_timeout_is_blamed_on_the_run_not_its_own_limit() {
    let repo = standin::repo();
    let agents = Agents::new();
    agents.reviewing(
        "quick",
        &standin::review("Login accepts any password", None),
    );
    agents.add("slow", "sleep 60");
    agents.append_config("timeout = \"10m\"\n");
    let ran = run(agents.cmd(repo.path()).args([
        "run",
        "--agents",
        "quick,slow",
        "--quiet",
        "--timeout",
        "8s",
    ]));
    // The report of the agent that finished is written: the run ends as usual, not with 124.
    assert_eq!(ran.code, Some(0), "{}\n{}", ran.stdout, ran.stderr);
    let report = json_report(&ran);
    let slow = report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "slow")
        .unwrap_or_else(|| panic!("{report:#}"));
    let error = slow["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("the run's deadline (`--timeout`)") && error.contains("own limit of 10m"),
        "{slow:#}"
    );
    assert!(!error.contains("the limit for this agent"), "{error}");
}

/// `trust` and `run` agree on which `.deep-review.toml` applies: a run reads the file at the
/// merge-base of the change (a change never steers its own review), so `trust` no longer says
/// an uncommitted edit "now applies"; once committed, it does.
#[test]
fn trust_says_an_uncommitted_config_applies_once_committed() {
    let repo = standin::repo();
    let agents = Agents::new();
    repo.write(".deep-review.toml", "brief_template = \"review.j2\"\n");
    let ran = run(agents.cmd(repo.path()).args(["trust"]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("applies once it is committed"),
        "{}",
        ran.stderr
    );
    assert!(!ran.stderr.contains("now apply"), "{}", ran.stderr);

    repo.commit("Config");
    let ran = run(agents.cmd(repo.path()).args(["trust"]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("`brief_template` now apply"),
        "{}",
        ran.stderr
    );
}

/// A repository's review settings (`display`, `timeout`) apply to an agent the user's own
/// config defines, trusted or not, as to a built-in one; only an agent that exists nowhere but
/// in the repository's file (nothing but its command) is dropped.
#[test]
fn a_repository_names_and_times_a_user_defined_agent() {
    let repo = crate::support::repo::Repo::new();
    repo.write("src/lib.rs", "pub fn a() {}\n");
    repo.write(
        ".deep-review.toml",
        "[agents.mine]\ndisplay = \"House Reviewer\"\ntimeout = \"7m\"\n\n\
         [agents.theirs]\ncommand = \"/bin/true\"\n",
    );
    repo.commit("initial");
    repo.git(&["checkout", "-q", "-b", "feat"]);
    repo.write("src/lib.rs", "pub fn a() {}\npub fn b() {}\n");
    repo.commit("Add b");
    let agents = Agents::new();
    agents.reviewing("mine", &standin::review("Login accepts any password", None));
    let ran = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "mine", "--dry-run"]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(ran.stdout.contains("House Reviewer"), "{}", ran.stdout);
    assert!(ran.stdout.contains("7m"), "{}", ran.stdout);
    assert!(!ran.stderr.contains("`[agents.mine]`"), "{}", ran.stderr);
    // The repository's own agent is still only a command it names: dropped, and said so.
    assert!(ran.stderr.contains("`[agents.theirs]`"), "{}", ran.stderr);
}
