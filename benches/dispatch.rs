//! What dispatch adds around the agents, on the shape the issue measured: ten stand-in agents
//! (scripts that wait, as an agent waiting on its model does) on a generated real repository of
//! 20,000 files. Measured: the whole dispatch's wall clock, the slowest agent's own duration,
//! and the difference (checkouts, process start, output reading, cleanup); and when the last
//! agent started (setup). Both ways of checking out:
//!
//! - **bwrap+landlock** (the default where bubblewrap works): one shared read-only checkout,
//!   each agent in its own namespaces with its throwaway home and network proxy;
//! - **landlock only**: the same checkout, no namespaces;
//! - **per-agent worktrees** (no sandbox): ten checkouts made in parallel.
//!
//! `cargo bench --bench dispatch` (debug is fine with `--profile dev`: the cost is processes and
//! git, not code). `DEEP_REVIEW_BENCH_AGENT_SECS` (default 5), `..._AGENTS` (10), `..._FILES`
//! (20000), `..._ROUNDS` (3).

#[path = "../tests/integration/brief_fixtures.rs"]
mod fixtures;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use deep_review::dispatch::events::{EventKind, Recorder};
use deep_review::dispatch::sandbox::{self, Mode};
use deep_review::dispatch::{AgentSpec, DispatchOptions, ProgressMode, dispatch_blocking};
use fixtures::{Commit, import};

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    // `cargo test --benches` runs this too: keep that quick.
    if !std::env::args().any(|a| a == "--bench") {
        println!("dispatch: not run under `cargo test` (use `cargo bench --bench dispatch`)");
        return;
    }
    let secs = env_number("DEEP_REVIEW_BENCH_AGENT_SECS", 5);
    let n_agents = env_number("DEEP_REVIEW_BENCH_AGENTS", 10) as usize;
    let n_files = env_number("DEEP_REVIEW_BENCH_FILES", 20_000) as usize;
    let rounds = env_number("DEEP_REVIEW_BENCH_ROUNDS", 3).max(1) as usize;

    let tmp = tempfile::tempdir().expect("temp dir");
    let repo = tmp.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let ok = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["init", "-q", "-b", "main"])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let mut commit = Commit::new("a big repository");
    for i in 0..n_files {
        commit = commit.write(
            format!("src/m{}/f{i}.rs", i % 200),
            format!("pub fn f{i}() -> u32 {{ {i} }}\n").repeat(30),
        );
    }
    import(&repo, "main", None, [commit]);

    let mut agents = Vec::new();
    for a in 0..n_agents {
        let script = tmp.path().join(format!("agent-{a}"));
        std::fs::write(
            &script,
            format!("#!/bin/sh\ncat > /dev/null\nsleep {secs}\necho 'Summary: ok'\n"),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        agents.push(AgentSpec {
            timeout: Duration::from_secs(600),
            ..AgentSpec::new(&format!("agent{a}"), script.to_string_lossy())
        });
    }
    println!(
        "dispatch: {n_agents} agents waiting {secs} s each, repository of {n_files} files, \
         median of {rounds} (Landlock available: {})",
        sandbox::available()
    );
    // `DEEP_REVIEW_BENCH_MODES=bwrap,landlock` leaves out the slow per-agent worktrees.
    let modes = std::env::var("DEEP_REVIEW_BENCH_MODES")
        .unwrap_or_else(|_| "bwrap,landlock,worktrees".into());
    for (key, label, sandboxed) in [
        ("bwrap", "bwrap+landlock, shared checkout", Mode::Auto),
        (
            "landlock",
            "landlock only, shared checkout",
            Mode::LandlockOnly,
        ),
        ("worktrees", "no sandbox, per-agent worktrees", Mode::Off),
    ] {
        if !modes.split(',').any(|m| m.trim() == key) {
            continue;
        }
        let mut results = Vec::new();
        for round in 0..rounds {
            results.push(run_once(
                &repo,
                &agents,
                &tmp.path().join(format!("{label}-{round}")),
                sandboxed,
            ));
        }
        results.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (wall, slowest, setup) = results[results.len() / 2];
        println!(
            "  {label}: wall {wall:.2} s, slowest agent {slowest:.2} s, wall - slowest {:.2} s, \
             ratio {:.3}, last agent started after {setup:.2} s",
            wall - slowest,
            wall / slowest
        );
    }
}

/// One dispatch: (wall clock, slowest agent, when the last agent started), in seconds.
fn run_once(repo: &Path, agents: &[AgentSpec], bundle: &Path, sandboxed: Mode) -> (f64, f64, f64) {
    let recorder = Arc::new(Recorder::default());
    let options = DispatchOptions {
        sandbox: sandboxed,
        sandbox_helper: Some(env!("CARGO_BIN_EXE_deep-review").into()),
        sinks: vec![recorder.clone()],
        ..DispatchOptions::default()
    };
    let brief = "Review this change.\n".repeat(5_000);
    let outcome = dispatch_blocking(
        repo,
        "HEAD",
        &brief,
        agents,
        bundle,
        ProgressMode::Silent,
        options,
    )
    .expect("runtime");
    for r in &outcome.reviews {
        assert!(r.error.is_none(), "{}: {:?}", r.agent, r.error);
    }
    let slowest = outcome
        .reviews
        .iter()
        .map(|r| r.duration_s)
        .fold(0.0, f64::max);
    let setup = recorder
        .events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Started { .. }))
        .map(|e| e.at_s)
        .fold(0.0, f64::max);
    (outcome.wall_clock_s, slowest, setup)
}
