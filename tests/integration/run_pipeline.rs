//! `deep-review run` end to end with real processes: shell scripts stand in for agents (custom
//! agents in config run as generic agents: brief on stdin, review on stdout), on a real
//! repository. The tests with the real CLIs and a fake model server live elsewhere.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::standin::repo;
use assert_cmd::Command;

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A review in the brief's layout, with one important finding on `src/auth.rs:1`.
fn review(title: &str, extra_suggestion: bool) -> String {
    let suggestion = if extra_suggestion {
        "1. **Name the module after its job** — `src/lib.rs:2` (suggestion, enhancement)\n\n\
         `auth` could be `session`.\n\nFix: rename it.\n"
    } else {
        "None.\n"
    };
    format!(
        "**Verdict**: Merge with fixes\n\n## Executive Summary\n\nAdds a login function.\n\n\
         ## Findings\n\n### Critical Issues\n\nNone.\n\n### Important Issues\n\n\
         1. **{title}** — `src/auth.rs:1` (important, regression)\n\n\
         ```rust\npub fn login(_pw: &str) -> bool {{ true }}\n```\n\n\
         `login` returns true for every password, so anyone can log in.\n\n\
         Fix: compare the password with the stored hash.\n\n### Suggestions\n\n{suggestion}\n\
         ## Design Observations\n\nNone.\n\n## Testing Assessment\n\nNo tests.\n\n\
         ## Documentation Assessment\n\nNone.\n\n## Acknowledged Limitations\n\nNone.\n\n\
         ## Coverage Summary\n\n| File | Status |\n|------|--------|\n\
         | `src/auth.rs` | Important 1 |\n| `src/lib.rs` | Reviewed, no issues |\n"
    )
}

#[test]
fn agents_run_and_the_report_is_written() {
    let repo = repo();
    let tools = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    std::fs::write(
        tools.path().join("alpha.md"),
        review("Login accepts any password", true),
    )
    .unwrap();
    std::fs::write(
        tools.path().join("beta.md"),
        review("login() accepts every password", false),
    )
    .unwrap();
    // Each stand-in checks that the brief came on stdin and that it runs in a checkout of head.
    let body = |name: &str| {
        format!(
            "brief=$(cat)\ncase \"$brief\" in *'## Coverage Summary'*) ;; *) echo 'no brief' >&2; exit 3;; esac\n\
             test -f src/auth.rs || {{ echo 'not in a worktree of head' >&2; exit 4; }}\n\
             cat {}",
            tools.path().join(format!("{name}.md")).display()
        )
    };
    let alpha = script(tools.path(), "alpha.sh", &body("alpha"));
    let beta = script(tools.path(), "beta.sh", &body("beta"));
    let gamma = script(
        tools.path(),
        "gamma.sh",
        "cat >/dev/null\necho 'gamma: not logged in' >&2\nexit 1",
    );
    std::fs::create_dir_all(xdg.path().join("deep-review")).unwrap();
    std::fs::write(
        xdg.path().join("deep-review/config.toml"),
        format!(
            "[agents.alpha]\ncommand = \"{}\"\ndisplay = \"Alpha\"\n\
             [agents.beta]\ncommand = \"{}\"\ndisplay = \"Beta\"\n\
             [agents.gamma]\ncommand = \"{}\"\ndisplay = \"Gamma\"\n",
            alpha.display(),
            beta.display(),
            gamma.display()
        ),
    )
    .unwrap();
    // A dirty checkout: the run reviews commits and leaves this alone.
    repo.write("src/lib.rs", "uncommitted\n");
    let status_before = repo.git(&["status", "--porcelain", "-uall"]);

    let out = Command::cargo_bin("deep-review")
        .unwrap()
        .current_dir(repo.path())
        .env("XDG_CONFIG_HOME", xdg.path())
        .args([
            "run",
            "--agents",
            "alpha,beta,gamma",
            "--quiet",
            "--format",
            "json",
            "--store",
        ])
        .arg(out_dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}: {stderr}",
        out.status.code()
    );

    let printed: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(PathBuf::from)
        .collect();
    assert_eq!(
        printed.len(),
        3,
        "the .md, .json and .html paths: {printed:?}"
    );
    assert!(
        out_dir.path().join("index.html").is_file(),
        "the store's index"
    );
    let md_path = &printed[0];
    assert!(md_path.starts_with(out_dir.path()), "{md_path:?}");
    let name = md_path.file_name().unwrap().to_string_lossy().to_string();
    assert!(name.ends_with("-login.md"), "{name}");
    let id = name.trim_end_matches(".md").to_string();
    assert_eq!(id.len(), "YYYYMMDD-HHMMSS-login".len(), "{id}");

    let md = std::fs::read_to_string(md_path).unwrap();
    assert!(md.contains(&format!("# Deep Review: {id}")), "{md}");
    assert!(md.contains("`src/auth.rs:1`"), "{md}");
    assert!(md.contains("Alpha") && md.contains("Beta"), "{md}");
    assert!(md.contains("Gamma"), "the failed agent is named: {md}");
    assert!(
        md.contains("Wire auth") && md.contains("Add login"),
        "commits in the table: {md}"
    );

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&printed[1]).unwrap()).unwrap();
    assert_eq!(json["meta"]["round"], 1);
    assert_eq!(json["meta"]["branch"], "login");
    assert_eq!(json["meta"]["author"], "Test Author");
    assert!(json["meta"]["wall_clock_s"].as_f64().unwrap() > 0.0);
    let important: Vec<&serde_json::Value> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "important")
        .collect();
    assert_eq!(
        important.len(),
        1,
        "both agents' finding merged into one: {json:#}"
    );
    let agents: Vec<&str> = important[0]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(agents, ["alpha", "beta"]);

    let bundle = out_dir.path().join("runs").join(&id);
    let brief = std::fs::read_to_string(bundle.join("brief.md")).unwrap();
    assert!(brief.contains("- `src/auth.rs` (+1 −0, added)"));
    let target: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("target.json")).unwrap())
            .unwrap();
    assert_eq!(target["head"], repo.git(&["rev-parse", "HEAD"]));
    assert!(
        bundle.join("alpha").is_dir() && bundle.join("gamma").is_dir(),
        "per-agent files"
    );

    assert_eq!(repo.git(&["status", "--porcelain", "-uall"]), status_before);
    assert_eq!(
        std::fs::read_to_string(repo.file("src/lib.rs")).unwrap(),
        "uncommitted\n"
    );
    let worktrees = repo.git(&["worktree", "list"]);
    assert_eq!(
        worktrees.lines().count(),
        1,
        "worktrees removed: {worktrees}"
    );
}

#[test]
fn no_agent_producing_a_review_exits_3_with_a_report() {
    let repo = repo();
    let tools = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let broken = script(
        tools.path(),
        "broken.sh",
        "cat >/dev/null\necho 'no credentials' >&2\nexit 1",
    );
    std::fs::create_dir_all(xdg.path().join("deep-review")).unwrap();
    std::fs::write(
        xdg.path().join("deep-review/config.toml"),
        format!("[agents.broken]\ncommand = \"{}\"\n", broken.display()),
    )
    .unwrap();
    let out = Command::cargo_bin("deep-review")
        .unwrap()
        .current_dir(repo.path())
        .env("XDG_CONFIG_HOME", xdg.path())
        .args(["run", "--agents", "broken", "--quiet", "--store"])
        .arg(out_dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let md_path = PathBuf::from(stdout.lines().next().unwrap_or_default());
    let md = std::fs::read_to_string(&md_path).unwrap();
    // The agent has no display name in config: it is "Broken" everywhere in the report.
    assert!(md.contains("**Broken** failed: exited with code 1"), "{md}");
    assert!(md.contains("| **Reviewers** | Broken |"), "{md}");
    assert!(!md.contains("broken"), "one name per agent: {md}");
}

#[test]
fn ctrl_c_stops_the_agents_and_exits_130() {
    let repo = repo();
    let tools = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let marker = crate::support::procs::marker("slow");
    let slow = script(
        tools.path(),
        "slow.sh",
        &format!(
            "cat >/dev/null\n{}",
            crate::support::procs::child_with(&marker)
        ),
    );
    std::fs::create_dir_all(xdg.path().join("deep-review")).unwrap();
    crate::support::standin::open_to_agents(tools.path());
    std::fs::write(
        xdg.path().join("deep-review/config.toml"),
        // It records its pid beside itself: the user's config lets it write there.
        format!(
            "[agents.slow]\ncommand = \"{}\"\nsandbox_write = [\"{}\"]\n",
            slow.display(),
            tools.path().display()
        ),
    )
    .unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("deep-review"))
        .current_dir(repo.path())
        .env("XDG_CONFIG_HOME", xdg.path())
        .args(["run", "--agents", "slow", "--quiet", "--store"])
        .arg(out_dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();

    // Wait until the agent runs, then press Ctrl-C.
    assert!(
        crate::support::procs::wait_present(&marker, std::time::Duration::from_secs(30)),
        "the agent never started"
    );
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("deep-review did not stop after Ctrl-C");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "no report path printed");
    // The agent's processes are gone, its worktree removed, the bundle kept.
    assert!(
        crate::support::procs::wait_gone(&marker, std::time::Duration::from_secs(5)),
        "the agent's process survived"
    );
    assert_eq!(repo.git(&["worktree", "list"]).lines().count(), 1);
    let runs: Vec<_> = std::fs::read_dir(out_dir.path().join("runs"))
        .unwrap()
        .collect();
    assert_eq!(runs.len(), 1);
    let bundle = runs[0].as_ref().unwrap().path();
    assert!(bundle.join("brief.md").is_file());
}

#[test]
fn with_no_agent_installed_run_says_what_to_install() {
    let repo = repo();
    let xdg = tempfile::tempdir().unwrap();
    // A PATH with git and nothing else, so installed agent CLIs cannot be found.
    let only_git = tempfile::tempdir().unwrap();
    let git = std::process::Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    let git = String::from_utf8_lossy(&git.stdout).trim().to_string();
    std::os::unix::fs::symlink(&git, only_git.path().join("git")).unwrap();
    let out = Command::cargo_bin("deep-review")
        .unwrap()
        .current_dir(repo.path())
        .env("XDG_CONFIG_HOME", xdg.path())
        .env("PATH", only_git.path())
        .args(["run", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no agent CLI is installed")
            && stderr.contains("npm install -g @anthropic-ai/claude-code"),
        "{stderr}"
    );
    assert!(!repo.store().exists(), "nothing is written");
}

#[test]
fn when_every_agent_fails_the_verdict_is_no_review() {
    let repo = repo();
    let tools = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let broken = script(
        tools.path(),
        "broken.sh",
        // Partial text on stdout, then a failure: shown, but it judges nothing.
        "cat >/dev/null\necho '## Executive Summary'\necho 'Looks fine so far'\necho 'not logged in' >&2\nexit 3",
    );
    std::fs::create_dir_all(xdg.path().join("deep-review")).unwrap();
    std::fs::write(
        xdg.path().join("deep-review/config.toml"),
        format!(
            "[agents.alpha]\ncommand = \"{}\"\ndisplay = \"Alpha\"\n",
            broken.display()
        ),
    )
    .unwrap();
    let out = Command::cargo_bin("deep-review")
        .unwrap()
        .current_dir(repo.path())
        .env("XDG_CONFIG_HOME", xdg.path())
        .args(["run", "--agents", "alpha", "--quiet", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "no review: exit 3");
    let json_path = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.ends_with(".json"))
        .map(PathBuf::from)
        .expect("the report is still written");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json_path).unwrap()).unwrap();
    assert_eq!(report["verdict"], "No review");
    assert!(
        report["summary"]
            .as_str()
            .unwrap()
            .contains("**Alpha** failed"),
        "{}",
        report["summary"]
    );
}

/// A `deep-review run` in `repo` with `agent` (a script) as its only agent, started in the
/// background.
fn spawn_run(repo: &Path, agent: &Path, extra: &[&str], store: &Path) -> std::process::Child {
    let xdg = store.join("xdg");
    std::fs::create_dir_all(xdg.join("deep-review")).unwrap();
    std::fs::write(
        xdg.join("deep-review/config.toml"),
        format!("[agents.slow]\ncommand = \"{}\"\n", agent.display()),
    )
    .unwrap();
    std::process::Command::new(assert_cmd::cargo::cargo_bin("deep-review"))
        .current_dir(repo)
        .env("XDG_CONFIG_HOME", &xdg)
        .args(["run", "--agents", "slow", "--quiet", "--store"])
        .arg(store.join("store"))
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits up to `within` for `child` to exit; kills it and fails the test otherwise.
fn exit_within(mut child: std::process::Child, within: std::time::Duration) -> (i32, String) {
    let deadline = std::time::Instant::now() + within;
    loop {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            return (
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            );
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "deep-review did not stop: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A stage that is not the agents' (here the brief's template, a FIFO no one writes to, so
/// reading it blocks) stops at a signal with exit 130, and at the run's deadline with exit 124.
/// Before, only the agents' stage listened: a signal later was swallowed and the run went on.
#[test]
fn a_signal_or_the_deadline_stops_the_run_outside_the_agents_stage() {
    let repo = repo();
    let tmp = tempfile::tempdir().unwrap();
    let agent = script(
        tmp.path(),
        "agent.sh",
        "cat >/dev/null\necho '**Verdict**: Merge'",
    );
    let fifo = tmp.path().join("template.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let template = fifo.to_str().unwrap();

    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        let child = spawn_run(
            repo.path(),
            &agent,
            &["--brief-template", template],
            tmp.path(),
        );
        // The run is blocked reading the template: give it time to get there.
        std::thread::sleep(std::time::Duration::from_millis(700));
        // SAFETY: kill(2) on the child we started.
        unsafe { libc::kill(child.id() as i32, signal) };
        let (code, stderr) = exit_within(child, std::time::Duration::from_secs(20));
        assert_eq!(code, 130, "signal {signal}: {stderr}");
        assert!(stderr.contains("stopped"), "{stderr}");
    }

    let child = spawn_run(
        repo.path(),
        &agent,
        &["--brief-template", template, "--timeout", "2s"],
        tmp.path(),
    );
    let (code, stderr) = exit_within(child, std::time::Duration::from_secs(30));
    assert_eq!(code, 124, "{stderr}");
    assert!(stderr.contains("deadline (--timeout 2s)"), "{stderr}");
}

/// The run's deadline shortens an agent's own timeout: an agent that would take 60 s is stopped
/// a little before the run's 3 s, and the run still writes its report.
#[test]
fn the_run_deadline_stops_agents_in_time_to_write_the_report() {
    let repo = repo();
    let tmp = tempfile::tempdir().unwrap();
    let agent = script(tmp.path(), "agent.sh", "cat >/dev/null\nexec sleep 60");
    let started = std::time::Instant::now();
    let child = spawn_run(repo.path(), &agent, &["--timeout", "3s"], tmp.path());
    let (code, stderr) = exit_within(child, std::time::Duration::from_secs(30));
    assert_eq!(code, 3, "no review: {stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(stderr.contains("timed out after 2"), "{stderr}");
}
