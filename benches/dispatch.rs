//! Dispatch overhead: three stand-in agents that each take the same time (a script that sleeps,
//! as a model that waits would), run at once. What matters is the whole run's wall clock over
//! the slowest agent's own duration: worktrees, process start, output reading and cleanup are
//! the only cost dispatch adds, and the target is a ratio of at most 1.05.
//!
//! `cargo bench --bench dispatch` (debug profile is fine: the cost is processes and git, not
//! code). `DEEP_REVIEW_BENCH_AGENT_SECS` sets how long each agent takes (default 2).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use deep_review::dispatch::{AgentSpec, ProgressMode, dispatch_blocking};

fn main() {
    divan::main();
}

struct Setup {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    bundle: PathBuf,
    agents: Vec<AgentSpec>,
}

fn setup(agent_secs: f64) -> Setup {
    let tmp = tempfile::tempdir().expect("temp dir");
    let repo = tmp.path().join("repo");
    std::fs::create_dir(&repo).expect("repo dir");
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    // A few hundred files, so the worktree checkout costs what a small project's does.
    for i in 0..300 {
        std::fs::write(
            repo.join(format!("f{i}.rs")),
            format!("fn f{i}() {{}}\n").repeat(40),
        )
        .expect("write file");
    }
    git(&["add", "."]);
    git(&[
        "-c",
        "user.name=b",
        "-c",
        "user.email=b@e",
        "commit",
        "-qm",
        "one",
    ]);

    // What each CLI prints for a one-line review (see src/dispatch/output.rs).
    let streams = [
        (
            "claude",
            r#"{"type":"result","subtype":"success","is_error":false,"result":"Summary: ok","duration_ms":1}"#,
        ),
        (
            "codex",
            r#"{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"Summary: ok"}}"#,
        ),
        (
            "gemini",
            r#"{"type":"message","role":"assistant","content":"Summary: ok","delta":true}"#,
        ),
    ];
    let mut agents = Vec::new();
    for (name, stream) in streams {
        let script = tmp.path().join(format!("agent-{name}"));
        std::fs::write(
            &script,
            format!("#!/bin/sh\ncat > /dev/null\nsleep {agent_secs}\necho '{stream}'\n"),
        )
        .expect("write script");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .expect("chmod script");
        agents.push(AgentSpec {
            timeout: Duration::from_secs(600),
            ..AgentSpec::new(name, script.to_string_lossy())
        });
    }
    let bundle = tmp.path().join("bundle");
    Setup {
        _tmp: tmp,
        repo,
        bundle,
        agents,
    }
}

fn run_once(s: &Setup, n: usize) -> f64 {
    let bundle = s.bundle.join(n.to_string());
    let brief = "Review this change.\n".repeat(5_000);
    let outcome = dispatch_blocking(
        &s.repo,
        "HEAD",
        &brief,
        &s.agents,
        Path::new(&bundle),
        ProgressMode::Silent,
        Default::default(),
    )
    .expect("runtime");
    for r in &outcome.reviews {
        assert!(r.error.is_none(), "{}: {:?}", r.agent, r.error);
    }
    let slowest = outcome
        .reviews
        .iter()
        .map(|r| r.duration_s)
        .fold(0.0_f64, f64::max);
    let ratio = outcome.wall_clock_s / slowest;
    // Where the overhead goes, from the bundle's meta.json.
    let worst = |key: &str| {
        ["claude", "codex", "gemini"]
            .iter()
            .filter_map(|a| std::fs::read_to_string(bundle.join(a).join("meta.json")).ok())
            .filter_map(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .filter_map(|m| m[key].as_f64())
            .fold(0.0_f64, f64::max)
    };
    eprintln!(
        "dispatch: wall clock {:.3}s / slowest agent {:.3}s = {:.3} (worktree setup <= {:.3}s, cleanup <= {:.3}s)",
        outcome.wall_clock_s,
        slowest,
        ratio,
        worst("worktree_setup_s"),
        worst("worktree_cleanup_s")
    );
    ratio
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn three_agents_at_once(bencher: divan::Bencher) {
    let secs = std::env::var("DEEP_REVIEW_BENCH_AGENT_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2.0);
    let s = setup(secs);
    let mut n = 0;
    bencher.bench_local(|| {
        n += 1;
        run_once(&s, n)
    });
}
