//! What a new user tripped on (issue 20, item 7): every `--flag` a command's help or error
//! messages recommend is one that command accepts; `publish` publishes a report again when its
//! Resolution changed; `--dry-run` says when the run would stop for lack of agents; "X is not
//! installed" only for agents that would run; `man` names no page that does not exist; `list`
//! keeps its columns aligned for long ids; "an important".

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use assert_cmd::Command;

use crate::support::repo::Repo;
use crate::support::standin::{Agents, repo, review, run};

const COMMANDS: &[&str] = &[
    "run",
    "consolidate",
    "list",
    "show",
    "resolve",
    "publish",
    "post",
    "agents",
    "trust",
    "schema",
    "stats",
    "bench",
    "completions",
    "man",
];

fn deep_review(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("deep-review").unwrap();
    cmd.current_dir(dir)
        .env_remove("CI")
        .env_remove("GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .env_remove("GITLAB_TOKEN");
    cmd
}

/// The long flags each command accepts, read from its `--help`.
fn accepted() -> BTreeMap<String, BTreeSet<String>> {
    let flag = regex::Regex::new(r"(?m)^\s+(?:-[A-Za-z], )?(--[a-z][a-z0-9-]*)").unwrap();
    COMMANDS
        .iter()
        .map(|c| {
            let out = deep_review(Path::new("/"))
                .args([c, "--help"])
                .output()
                .unwrap();
            let help = String::from_utf8_lossy(&out.stdout).into_owned();
            let flags = flag
                .captures_iter(&help)
                .map(|m| m[1].to_string())
                .collect();
            (c.to_string(), flags)
        })
        .collect()
}

/// The flags `text` recommends, each with the command it belongs to: `command` unless the flag
/// is inside a backticked `deep-review X ...` (or `X ...` for a command X). Flags of other
/// programs in backticks (`git diff --stat`, `npm install -g`) are not deep-review's.
fn mentioned(text: &str, command: &str) -> Vec<(String, String)> {
    let flag = regex::Regex::new(r"--[a-z][a-z0-9-]+").unwrap();
    let mut out = Vec::new();
    for (i, part) in text.split('`').enumerate() {
        let quoted = i % 2 == 1;
        let owner = if quoted {
            let words: Vec<&str> = part.split_whitespace().collect();
            match words.as_slice() {
                ["deep-review", sub, ..] if COMMANDS.contains(sub) => sub.to_string(),
                [sub, ..] if COMMANDS.contains(sub) => sub.to_string(),
                [first, ..] if !first.starts_with("--") => continue, // another program
                _ => command.to_string(),
            }
        } else {
            command.to_string()
        };
        for m in flag.find_iter(part) {
            out.push((owner.clone(), m.as_str().to_string()));
        }
    }
    out
}

fn check(accepted: &BTreeMap<String, BTreeSet<String>>, command: &str, what: &str, text: &str) {
    for (owner, flag) in mentioned(text, command) {
        assert!(
            accepted[&owner].contains(&flag),
            "{what} recommends `{flag}`, which `deep-review {owner}` does not accept:\n{text}"
        );
    }
}

#[test]
fn every_flag_a_command_recommends_is_one_it_accepts() {
    let accepted = accepted();
    for c in COMMANDS {
        let out = deep_review(Path::new("/"))
            .args([c, "--help"])
            .output()
            .unwrap();
        check(
            &accepted,
            c,
            &format!("`{c} --help`"),
            &String::from_utf8_lossy(&out.stdout),
        );
    }

    // Errors where they happen to new users: outside a repository, in one with no store, in
    // one with a report of a branch, with every agent disabled.
    let outside = tempfile::tempdir().unwrap();
    let fresh = repo();
    let reviewed = repo();
    let agents = Agents::new();
    agents.reviewing("alpha", &review("Login accepts any password", None));
    let first = run(agents
        .cmd(reviewed.path())
        .args(["run", "--agents", "alpha", "--quiet"]));
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let manifest = env!("CARGO_MANIFEST_DIR");
    let cases: Vec<(&Path, Vec<&str>)> = vec![
        (outside.path(), vec!["list"]),
        (outside.path(), vec!["show"]),
        (outside.path(), vec!["post", "latest"]),
        (outside.path(), vec!["resolve", "latest", "--fixed", "I1"]),
        (outside.path(), vec!["publish"]),
        (outside.path(), vec!["run"]),
        (outside.path(), vec!["run", "--resume", "latest"]),
        (outside.path(), vec!["consolidate", "--bundle", "latest"]),
        (outside.path(), vec!["trust"]),
        (outside.path(), vec!["stats"]),
        (fresh.path(), vec!["stats", "--branch"]),
        (fresh.path(), vec!["show", "latest"]),
        (fresh.path(), vec!["post", "latest"]),
        (fresh.path(), vec!["resolve", "latest", "--fixed", "I1"]),
        (fresh.path(), vec!["run", "--resume", "latest"]),
        (fresh.path(), vec!["consolidate", "--bundle", "latest"]),
        (fresh.path(), vec!["run", "--agents", "nope", "--dry-run"]),
        (fresh.path(), vec!["run", "--agents", ",", "--dry-run"]),
        (
            fresh.path(),
            vec!["run", "--synthesize", "nope", "--dry-run"],
        ),
        (fresh.path(), vec!["run", "--uncommitted", "--dry-run"]),
        (fresh.path(), vec!["run", "--base", "nope", "--dry-run"]),
        (fresh.path(), vec!["run", "main..nope", "--dry-run"]),
        (fresh.path(), vec!["run", "--post", "--agents", "alpha"]),
        (reviewed.path(), vec!["show", "nope"]),
        (reviewed.path(), vec!["post", "latest"]),
        (reviewed.path(), vec!["resolve", "latest"]),
        (
            reviewed.path(),
            vec!["resolve", "latest", "--skipped", "I1"],
        ),
        (reviewed.path(), vec!["resolve", "latest", "--fixed", "Z9"]),
        (
            reviewed.path(),
            vec!["resolve", "latest", "--commit", "nope", "--fixed", "I1"],
        ),
        (
            Path::new(manifest),
            vec!["consolidate", "--raw", "a=missing.md"],
        ),
        (
            Path::new(manifest),
            vec!["consolidate", "--from-report", "Cargo.toml"],
        ),
        (
            Path::new(manifest),
            vec![
                "consolidate",
                "--raw",
                "a=Cargo.toml",
                "--raw",
                "a=Cargo.toml",
            ],
        ),
        (
            Path::new(manifest),
            vec![
                "consolidate",
                "--raw",
                "claude=examples/reviews/claude.md",
                "--reviewer",
                "nope=X",
            ],
        ),
        (
            Path::new(manifest),
            vec![
                "consolidate",
                "--raw",
                "claude=examples/reviews/claude.md",
                "--repo",
                "/",
            ],
        ),
        (
            Path::new(manifest),
            vec!["consolidate", "--raw", "a=Cargo.toml", "--prior", "nope.md"],
        ),
    ];
    for (dir, args) in &cases {
        let ran = run(agents.cmd(dir).args(args));
        assert_ne!(
            ran.code,
            Some(0),
            "{args:?} was meant to fail: {}",
            ran.stdout
        );
        check(&accepted, args[0], &format!("{args:?}"), &ran.stderr);
    }

    // Every agent disabled: `run` may recommend `--agents`, `agents` has no such flag.
    let xdg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(xdg.path().join("deep-review")).unwrap();
    std::fs::write(
        xdg.path().join("deep-review/config.toml"),
        "[agents.claude]\nenabled = false\n[agents.codex]\nenabled = false\n\
         [agents.gemini]\nenabled = false\n",
    )
    .unwrap();
    for args in [&["run", "--dry-run"][..], &["agents"]] {
        let ran = run(deep_review(fresh.path())
            .env("XDG_CONFIG_HOME", xdg.path())
            .args(args));
        assert!(ran.stderr.contains("disabled"), "{args:?}: {}", ran.stderr);
        check(&accepted, args[0], &format!("{args:?}"), &ran.stderr);
    }
}

#[test]
fn publish_publishes_a_report_again_when_its_resolution_changed() {
    let repo = repo();
    let agents = Agents::new();
    agents.reviewing("alpha", &review("Login accepts any password", None));
    let ran = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "alpha", "--quiet"]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let published = run(agents.cmd(repo.path()).args(["publish"]));
    assert!(
        published.stderr.contains("1 new report on branch reviews"),
        "{}",
        published.stderr
    );
    let again = run(agents.cmd(repo.path()).args(["publish"]));
    assert!(
        again.stderr.contains("0 new reports on branch reviews"),
        "{}",
        again.stderr
    );

    let resolved = run(agents
        .cmd(repo.path())
        .args(["resolve", "latest", "--fixed", "I1"]));
    assert_eq!(resolved.code, Some(0), "{}", resolved.stderr);
    let updated = run(agents.cmd(repo.path()).args(["publish"]));
    assert_eq!(updated.code, Some(0), "{}", updated.stderr);
    assert!(updated.stderr.contains("1 updated"), "{}", updated.stderr);
    let log = repo.git(&["log", "--format=%s", "reviews"]);
    assert_eq!(log.lines().count(), 2, "{log}");
    assert!(log.lines().next().unwrap().ends_with("(updated)"), "{log}");
    let id = log
        .lines()
        .last()
        .unwrap()
        .trim_start_matches("Review: ")
        .to_string();
    let md = repo.git(&["show", &format!("reviews:{id}.md")]);
    assert!(md.contains("## Resolution"), "{md}");
    let same = run(agents.cmd(repo.path()).args(["publish"]));
    assert!(
        same.stderr.contains("0 new reports on branch reviews"),
        "{}",
        same.stderr
    );
}

/// `deep-review ARGS` with only the system's directories on PATH: no agent CLI is installed.
fn without_agent_clis(agents: &Agents, repo: &Repo, args: &[&str]) -> crate::support::standin::Ran {
    run(agents
        .cmd(repo.path())
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .args(args))
}

#[test]
fn dry_run_says_when_the_run_would_stop_and_only_agents_that_would_run_are_warned_about() {
    let repo = repo();
    let agents = Agents::new();
    let dry = without_agent_clis(&agents, &repo, &["run", "--dry-run"]);
    assert_eq!(dry.code, Some(0), "{}", dry.stderr);
    assert!(
        dry.stdout.contains("Stop:    the run would stop here")
            && dry.stdout.contains("no agent CLI is installed"),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stderr.contains("a run would stop here"),
        "{}",
        dry.stderr
    );
    let ran = without_agent_clis(&agents, &repo, &["run"]);
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);

    // A custom agent configured, the registry's CLIs not installed: a default run reviews
    // with it and warns about none of the CLIs nobody asked for.
    agents.reviewing("alpha", &review("Login accepts any password", None));
    let ran = without_agent_clis(&agents, &repo, &["run", "--quiet"]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(!ran.stderr.contains("not installed"), "{}", ran.stderr);
    // Named with --agents, a missing CLI would run (and fail): that one is warned about.
    let dry = without_agent_clis(
        &agents,
        &repo,
        &["run", "--agents", "alpha,codex", "--dry-run"],
    );
    assert!(
        dry.stderr.contains("Codex is not installed") && !dry.stderr.contains("Claude"),
        "{}",
        dry.stderr
    );
    assert!(dry.stdout.contains("a run would fail it"), "{}", dry.stdout);
    assert!(!dry.stdout.contains("Stop:"), "{}", dry.stdout);
}

#[test]
fn man_names_no_page_that_does_not_exist() {
    let out = deep_review(Path::new("/")).arg("man").output().unwrap();
    assert!(out.status.success());
    let page = String::from_utf8_lossy(&out.stdout);
    let other = regex::Regex::new(r"[a-z\\-]+\([0-9]\)").unwrap();
    assert!(other.find(&page).is_none(), "{:?}", other.find(&page));
    for c in COMMANDS {
        assert!(page.contains(&format!(".SS \"deep\\-review {c}\"")), "{c}");
    }
    assert!(
        page.contains("\\-\\-store"),
        "the options of each command are there"
    );
}

#[test]
fn list_keeps_its_columns_aligned_for_long_ids() {
    let repo = repo();
    let agents = Agents::new();
    agents.reviewing("alpha", &review("Login accepts any password", None));
    for branch in ["a", "a-rather-long-branch-name-for-a-feature-x"] {
        repo.git(&["checkout", "-q", "-B", branch, "login"]);
        let ran = run(agents
            .cmd(repo.path())
            .args(["run", "--agents", "alpha", "--quiet"]));
        assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    }
    let listed = run(agents.cmd(repo.path()).arg("list"));
    let lines: Vec<&str> = listed.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", listed.stdout);
    let column = |line: &str, text: &str| line.find(text).unwrap();
    let year = |line: &str| line.find(" 20").unwrap();
    assert_eq!(year(lines[0]), year(lines[1]), "{}", listed.stdout);
    assert_eq!(
        column(lines[0], "Merge with fixes"),
        column(lines[1], "Merge with fixes"),
        "{}",
        listed.stdout
    );
}

#[test]
fn an_important_finding_reads_an_important() {
    let out = deep_review(Path::new(env!("CARGO_MANIFEST_DIR")))
        .args([
            "consolidate",
            "--raw",
            "claude=examples/reviews/claude.md",
            "--raw",
            "codex=examples/reviews/codex.md",
            "--fail-on",
            "important",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("an important or more severe finding stands"),
        "{stderr}"
    );
}
