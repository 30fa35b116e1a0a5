//! Outcomes and `deep-review stats`: a store made by real runs of stand-in agents on a real
//! repository, three rounds of two changes, the author's decisions recorded with
//! `deep-review resolve`, and every count of the scorecards checked by hand.

use serde_json::Value;

use crate::support::repo::Repo;
use crate::support::standin::{Agents, json_report, run};

/// One finding of a stand-in review.
struct F {
    title: &'static str,
    location: &'static str,
    severity: &'static str,
    category: &'static str,
    quote: &'static str,
    body: &'static str,
}

/// A review in the layout the brief asks for.
fn review(findings: &[&F]) -> String {
    let section = |sev: &str| {
        let list: Vec<String> = findings
            .iter()
            .filter(|f| f.severity == sev)
            .enumerate()
            .map(|(i, f)| {
                format!(
                    "{}. **{}** — `{}` ({}, {})\n\n```rust\n{}\n```\n\n{}\n",
                    i + 1,
                    f.title,
                    f.location,
                    f.severity,
                    f.category,
                    f.quote,
                    f.body
                )
            })
            .collect();
        if list.is_empty() {
            "None.\n".to_string()
        } else {
            list.join("\n")
        }
    };
    format!(
        "**Verdict**: Merge with fixes\n\n## Executive Summary\n\nA change.\n\n## Findings\n\n\
         ### Critical Issues\n\nNone.\n\n### Important Issues\n\n{}\n### Suggestions\n\n{}\n",
        section("important"),
        section("suggestion")
    )
}

// Change `login`.
const LOGIN: F = F {
    title: "Login accepts any password",
    location: "src/auth.rs:1",
    severity: "important",
    category: "regression",
    quote: "pub fn login(_pw: &str) -> bool { true }",
    body: "`login` ignores its argument and returns true, so anyone logs in.",
};
const TOKEN: F = F {
    title: "Session token is a constant",
    location: "src/auth.rs:3",
    severity: "suggestion",
    category: "enhancement",
    quote: "pub fn token() -> u32 { 4 }",
    body: "`token` returns the same value for every session, so sessions can be guessed.",
};
const SECRET: F = F {
    title: "Password compared with a hard-coded secret",
    location: "src/auth.rs:1",
    severity: "important",
    category: "regression",
    quote: "const SECRET: &str = \"s3cret\";",
    body: "`SECRET` is in the source: anyone who reads the repository can log in.",
};
const RATE: F = F {
    title: "Login has no rate limit",
    location: "src/auth.rs:3",
    severity: "suggestion",
    category: "enhancement",
    quote: "pub fn login(pw: &str) -> bool { pw == read_secret() }",
    body: "`login` can be called without limit, so the password can be guessed by brute force.",
};

// Change `cache`.
const EXPIRY: F = F {
    title: "Cache never expires",
    location: "src/cache.rs:1",
    severity: "important",
    category: "gap",
    quote: "pub fn get(key: &str) -> Option<String> { STORE.get(key) }",
    body: "`get` returns entries forever: a stale value is served after an update.",
};
const KEY: F = F {
    title: "Cache key ignores the user",
    location: "src/cache.rs:2",
    severity: "important",
    category: "regression",
    quote: "pub fn key(path: &str) -> String { path.to_string() }",
    body: "`key` leaves the user out, so one user's page is served to another.",
};
const SIZE: F = F {
    title: "Cache size is unbounded",
    location: "src/cache.rs:1",
    severity: "suggestion",
    category: "enhancement",
    quote: "pub fn get(key: &str) -> Option<String> { STORE.get(key) }",
    body: "`STORE` grows without a limit; memory use climbs with every distinct path.",
};
const LOCK: F = F {
    title: "Cache lock held while the page renders",
    location: "src/cache.rs:3",
    severity: "suggestion",
    category: "enhancement",
    quote: "pub static STORE: Lock<Pages> = Lock::new();",
    body: "`STORE` is locked for the whole render, so renders wait on each other.",
};

/// A repository with two changes, branches `login` and `cache`, off `main`.
fn repo() -> Repo {
    let repo = Repo::new();
    repo.write("src/lib.rs", "pub fn a() {}\n");
    repo.commit("initial");
    repo.git(&["branch", "-M", "main"]);
    repo.git(&["checkout", "-q", "-b", "login"]);
    repo.write(
        "src/auth.rs",
        "pub fn login(_pw: &str) -> bool { true }\n\npub fn token() -> u32 { 4 }\n",
    );
    repo.commit("Add login");
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["checkout", "-q", "-b", "cache"]);
    repo.write(
        "src/cache.rs",
        "pub fn get(key: &str) -> Option<String> { STORE.get(key) }\n\
         pub fn key(path: &str) -> String { path.to_string() }\n\
         pub static STORE: Lock<Pages> = Lock::new();\n",
    );
    repo.commit("Add cache");
    repo
}

/// Runs both agents on the checked-out branch and returns the report's JSON.
fn round(agents: &Agents, repo: &Repo, alpha: &[&F], beta: &[&F]) -> Value {
    agents.set_review("alpha", &review(alpha));
    agents.set_review("beta", &review(beta));
    let ran = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "alpha,beta", "--quiet"]));
    assert_eq!(ran.code, Some(0), "{}\n{}", ran.stdout, ran.stderr);
    json_report(&ran)
}

fn id_of(report: &Value, title: &str) -> String {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["title"] == title)
        .unwrap_or_else(|| panic!("no finding {title:?}: {report:#}"))["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn resolve(agents: &Agents, repo: &Repo, report: &Value, args: &[String]) {
    let id = report["meta"]["id"].as_str().unwrap();
    let mut cmd = agents.cmd(repo.path());
    cmd.args(["resolve", id]).args(args);
    let ran = run(&mut cmd);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
}

/// The store of the module's story: `(agents, repo)`, with six reports and their decisions.
fn story() -> (Agents, Repo) {
    let repo = repo();
    let agents = Agents::new();
    agents.reviewing("alpha", "None.\n");
    agents.reviewing("beta", "None.\n");

    // login, round 1: both raise the login; alpha the token too. Login fixed, token skipped.
    repo.git(&["checkout", "-q", "login"]);
    let r1 = round(&agents, &repo, &[&LOGIN, &TOKEN], &[&LOGIN]);
    repo.write(
        "src/auth.rs",
        "const SECRET: &str = \"s3cret\";\npub fn login(pw: &str) -> bool { pw == SECRET }\n\n\
         pub fn token() -> u32 { 4 }\n",
    );
    repo.commit("Check the password");
    resolve(
        &agents,
        &repo,
        &r1,
        &[
            "--fixed".into(),
            id_of(&r1, LOGIN.title),
            "--skipped".into(),
            format!(
                "{}=sessions move to the session service",
                id_of(&r1, TOKEN.title)
            ),
        ],
    );
    // Round 2: alpha raises the token again (declined, set aside) and the secret; beta the
    // secret. The secret is fixed.
    let r2 = round(&agents, &repo, &[&TOKEN, &SECRET], &[&SECRET]);
    repo.write(
        "src/auth.rs",
        "pub fn read_secret() -> String { std::env::var(\"SECRET\").unwrap_or_default() }\n\
         \npub fn login(pw: &str) -> bool { pw == read_secret() }\n\npub fn token() -> u32 { 4 }\n",
    );
    repo.commit("Read the secret from the environment");
    resolve(
        &agents,
        &repo,
        &r2,
        &["--fixed".into(), id_of(&r2, SECRET.title)],
    );
    // Round 3: only beta, the rate limit: answered with a comment.
    let r3 = round(&agents, &repo, &[], &[&RATE]);
    resolve(
        &agents,
        &repo,
        &r3,
        &["--commented".into(), id_of(&r3, RATE.title)],
    );

    // cache, round 1: alpha the expiry (a test is written), beta the key (no decision yet).
    repo.git(&["checkout", "-q", "cache"]);
    let c1 = round(&agents, &repo, &[&EXPIRY], &[&KEY]);
    resolve(
        &agents,
        &repo,
        &c1,
        &["--test-written".into(), id_of(&c1, EXPIRY.title)],
    );
    // Round 2: beta raises the key again; now it is skipped.
    let c2 = round(&agents, &repo, &[], &[&KEY]);
    resolve(
        &agents,
        &repo,
        &c2,
        &[
            "--skipped".into(),
            format!("{}=paths are per user already", id_of(&c2, KEY.title)),
        ],
    );
    // Round 3: alpha the size (documented), beta the lock (no decision).
    let c3 = round(&agents, &repo, &[&SIZE], &[&LOCK]);
    resolve(
        &agents,
        &repo,
        &c3,
        &["--documented".into(), id_of(&c3, SIZE.title)],
    );
    (agents, repo)
}

fn stats_json(agents: &Agents, repo: &Repo) -> Value {
    let ran = run(agents
        .cmd(repo.path())
        .args(["stats", "--format", "json", "--agreement"]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    serde_json::from_str(&ran.stdout).unwrap()
}

/// The row of `agent` (and `key` = `value`, when given) in `list`.
fn row<'a>(list: &'a Value, agent: &str, key: Option<(&str, &str)>) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|r| r["agent"] == agent && key.is_none_or(|(k, v)| r[k] == v))
        .unwrap_or_else(|| panic!("no row {agent} {key:?}: {list:#}"))
}

/// `(findings, kept, kept_only_it, acted_on, declined, undecided)`.
fn counts(r: &Value) -> [u64; 6] {
    [
        "findings",
        "kept",
        "kept_only_it",
        "acted_on",
        "declined",
        "undecided",
    ]
    .map(|k| r[k].as_u64().unwrap_or_else(|| panic!("{k}: {r:#}")))
}

#[test]
fn stats_over_three_rounds_of_two_changes_count_by_hand() {
    let (agents, repo) = story();
    let s = stats_json(&agents, &repo);
    assert_eq!(s["reports"], 6);
    assert_eq!(s["changes"], 2);

    // Each finding once, in the round that first raised it, with its fate and where from:
    // login: LOGIN [alpha, beta] fixed, TOKEN [alpha] skipped (alpha's round-2 repeat was set
    // aside), SECRET [alpha, beta] fixed, RATE [beta] commented;
    // cache: EXPIRY [alpha] test written, KEY [beta] skipped in round 2 (raised again there),
    // SIZE [alpha] documented, LOCK [beta] no decision.
    let fates: Vec<(String, String, String)> = s["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["title"].as_str().unwrap().to_string(),
                f["agents"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap())
                    .collect::<Vec<_>>()
                    .join("+"),
                f["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = [
        (LOGIN.title, "alpha+beta", "acted_on"),
        (TOKEN.title, "alpha", "declined"),
        (SECRET.title, "alpha+beta", "acted_on"),
        (RATE.title, "beta", "declined"),
        (EXPIRY.title, "alpha", "acted_on"),
        (KEY.title, "beta", "declined"),
        (SIZE.title, "alpha", "acted_on"),
        (LOCK.title, "beta", "unknown"),
    ];
    let mut sorted_fates = fates.clone();
    sorted_fates.sort();
    let mut sorted_expected: Vec<(String, String, String)> = expected
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    sorted_expected.sort();
    assert_eq!(sorted_fates, sorted_expected);
    let key = s["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["title"] == KEY.title)
        .unwrap();
    assert_eq!(key["round"], 1);
    assert_eq!(key["provenance"]["kind"], "resolution");
    assert_eq!(key["provenance"]["round"], 2);
    assert_eq!(key["provenance"]["action"], "Skipped");
    assert_eq!(key["raised_again"].as_array().unwrap().len(), 1);

    // alpha: LOGIN, TOKEN, SECRET, EXPIRY, SIZE = 5 findings, all kept; alone on TOKEN,
    // EXPIRY, SIZE = 3; acted on LOGIN, SECRET, EXPIRY, SIZE = 4 (80%), declined TOKEN = 1.
    let alpha = row(&s["agents"], "alpha", None);
    assert_eq!(counts(alpha), [5, 5, 3, 4, 1, 0]);
    assert_eq!(alpha["reviews"], 6);
    assert_eq!(alpha["acted_on_rate"], 0.8);
    assert_eq!(alpha["declined_rate"], 0.2);
    assert_eq!(
        (alpha["grounded"].clone(), alpha["checked"].clone()),
        (5.into(), 5.into())
    );
    // beta: LOGIN, SECRET, RATE, KEY, LOCK = 5; alone on RATE, KEY, LOCK = 3; acted on LOGIN,
    // SECRET = 2 (40%); declined RATE, KEY = 2 (40%); LOCK undecided.
    let beta = row(&s["agents"], "beta", None);
    assert_eq!(counts(beta), [5, 5, 3, 2, 2, 1]);
    assert_eq!(beta["acted_on_rate"], 0.4);
    // Stand-in agents report no cost; their time is measured.
    assert!(alpha.get("cost_per_review").is_none(), "{alpha:#}");
    let per_review = alpha["seconds_per_review"].as_f64().unwrap();
    let per_acted = alpha["seconds_per_acted_on"].as_f64().unwrap();
    assert!(per_review > 0.0);
    // Six reviews' time over four acted-on findings.
    assert!((per_acted - per_review * 6.0 / 4.0).abs() < 1e-9);

    // By category: alpha regression LOGIN, SECRET (acted 2); gap EXPIRY (acted 1); enhancement
    // TOKEN (declined), SIZE (acted).
    let cat = |agent, c| counts(row(&s["by_category"], agent, Some(("category", c))));
    assert_eq!(cat("alpha", "regression"), [2, 2, 0, 2, 0, 0]);
    assert_eq!(cat("alpha", "gap"), [1, 1, 1, 1, 0, 0]);
    assert_eq!(cat("alpha", "enhancement"), [2, 2, 2, 1, 1, 0]);
    assert_eq!(cat("beta", "regression"), [3, 3, 1, 2, 1, 0]);
    assert_eq!(cat("beta", "enhancement"), [2, 2, 2, 0, 1, 1]);
    // By severity: beta important LOGIN, SECRET, KEY; suggestion RATE, LOCK.
    let sev = |agent, v| counts(row(&s["by_severity"], agent, Some(("severity", v))));
    assert_eq!(sev("beta", "important"), [3, 3, 1, 2, 1, 0]);
    assert_eq!(sev("beta", "suggestion"), [2, 2, 2, 0, 1, 1]);
    assert_eq!(sev("alpha", "suggestion"), [2, 2, 2, 1, 1, 0]);

    // The records learnt from the decisions (descriptive: no run is weighed with them). Decided
    // findings and who reviewed their rounds (wrote a finding there): alpha looked at every acted-on one (4) and at TOKEN and
    // KEY among the declined (not RATE: it wrote nothing in that round); beta at all 4 acted on
    // and all 3 declined.
    let records = &s["reliability"]["rows"];
    let all = |agent| row(records, agent, None).clone();
    let (a, b) = (all("alpha"), all("beta"));
    let four = |r: &Value| {
        ["acted_on", "declined", "acted_on_seen", "declined_seen"].map(|k| r[k].as_u64().unwrap())
    };
    assert_eq!(four(&a), [4, 1, 4, 2]);
    assert_eq!(four(&b), [2, 2, 4, 3]);
    // Pool: raised 6 of 8 acted on seen, 3 of 5 declined seen, shrunk toward 0.4 and 0.15 with
    // ten findings of weight; each agent shrunk toward the pool.
    let pool_real = (6.0 + 10.0 * 0.4) / 18.0;
    let pool_spurious = (3.0 + 10.0 * 0.15) / 15.0;
    let close = |v: &Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-9;
    assert!(close(&a["pool_raise_real"], pool_real), "{a:#}");
    assert!(close(&a["pool_raise_spurious"], pool_spurious), "{a:#}");
    assert!(close(&a["p_raise_real"], (4.0 + 10.0 * pool_real) / 14.0));
    assert!(close(
        &a["p_raise_spurious"],
        (1.0 + 10.0 * pool_spurious) / 12.0
    ));
    assert!(close(&b["p_raise_real"], (2.0 + 10.0 * pool_real) / 14.0));
    assert!(close(
        &b["p_raise_spurious"],
        (2.0 + 10.0 * pool_spurious) / 13.0
    ));
    // The agreement-only estimate is beside it, on the same agents.
    assert_eq!(s["agreement"]["reliability"]["method"], "agreement");
    assert_eq!(
        s["agreement"]["reliability"]["rows"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // The terminal table says the same.
    let ran = run(agents.cmd(repo.path()).arg("stats"));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let line = |name: &str| {
        ran.stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} line:\n{}", ran.stdout))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(
        line("Alpha").starts_with("Alpha 6 5 5 3 100% (5/5) 4 (80%) 1 (20%) 0 -"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains("6 reports of 2 changes"),
        "{}",
        ran.stdout
    );

    // The page: written to the store, linked from the index, the counts in its table.
    let ran = run(agents.cmd(repo.path()).args(["stats", "--format", "html"]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let page_path = ran.stdout.trim();
    assert!(page_path.ends_with("stats.html"), "{}", ran.stdout);
    let page = std::fs::read_to_string(page_path).unwrap();
    assert!(page.contains("<svg") && page.contains("class=\"bar-acted\""));
    assert!(page.contains("<td>4 (80%)</td>"), "{page}");
    assert_eq!(page.matches("<script").count(), 0);
    let index =
        std::fs::read_to_string(std::path::Path::new(page_path).with_file_name("index.html"))
            .unwrap();
    assert!(index.contains("href=\"stats.html\""), "{index}");
}

#[test]
fn stats_reads_the_published_branch_and_counts_a_report_once() {
    let repo = repo();
    let agents = Agents::new();
    agents.reviewing("alpha", "None.\n");
    agents.reviewing("beta", "None.\n");
    repo.git(&["checkout", "-q", "login"]);
    let r1 = round(&agents, &repo, &[&LOGIN, &TOKEN], &[&LOGIN]);
    resolve(
        &agents,
        &repo,
        &r1,
        &["--fixed".into(), id_of(&r1, LOGIN.title)],
    );
    let ran = run(agents.cmd(repo.path()).args(["publish"]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    // The store is gone (another clone, a CI runner): the branch still has the report.
    std::fs::remove_dir_all(repo.store()).unwrap();
    let read = |args: &[&str]| -> Value {
        let ran = run(agents
            .cmd(repo.path())
            .args(["stats", "--format", "json"])
            .args(args));
        assert_eq!(ran.code, Some(0), "{}", ran.stderr);
        serde_json::from_str(&ran.stdout).unwrap()
    };
    assert_eq!(read(&[])["reports"], 0);
    let s = read(&["--branch"]);
    assert_eq!(s["reports"], 1);
    assert_eq!(counts(row(&s["agents"], "alpha", None)), [2, 2, 1, 1, 0, 1]);
    // A branch that is not there is an error that says how to make it.
    let ran = run(agents.cmd(repo.path()).args(["stats", "--branch", "pages"]));
    assert_eq!(ran.code, Some(2));
    assert!(ran.stderr.contains("no branch `pages`"), "{}", ran.stderr);
}
