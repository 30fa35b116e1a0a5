//! Wall clock of a whole `deep-review run` over its slowest agent (issue 3's acceptance).
//!
//! Three agents (the real Claude Code, Codex CLI and Gemini CLI) whose fake model waits 5 s before
//! answering. The reference system takes 2.1 times its slowest agent because a model writes the
//! consolidation; deep-review consolidates in code, so the run should take the slowest agent's
//! time and little more: target ratio ≤ 1.05.
//!
//! Figures printed per round and as the median:
//! - `run`: the `deep-review run` process, start to exit, measured here;
//! - `slowest agent`: the largest per-agent `duration_s` in the run's JSON report;
//! - `ratio = run / slowest agent`;
//! - `direct`: the three CLIs run directly and at once against the same 5 s model, the slowest
//!   of them: what an agent costs with no deep-review around it (`run / direct` is printed too).
//!
//! `cargo bench --bench run_wall_clock --profile dev` (the release profile is too costly to build
//! on the shared machine and the figure is dominated by the agents, not by our code).
//! `RUN_WALL_CLOCK_ROUNDS` (default 3) and `RUN_WALL_CLOCK_DELAY_S` (default 5) change the setup.
//! It needs the CLIs (scripts/install-agent-clis.sh) and says so when they are missing.

#[path = "../tests/integration/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use support::agents::{CLIS, require_all, run_with_stdin};
use support::run::{RunFixture, agent_entries, script_three};

fn env_number(key: &str, default: u64) -> u64 {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// One `deep-review run`: (wall clock seen from outside, slowest agent's `duration_s`, the run's
/// own `wall_clock_s`), or why it could not be measured.
fn one_run(delay: Duration) -> Result<(f64, f64, Option<f64>), String> {
    let fx = RunFixture::new();
    script_three(&fx, |_, s| s.delay(delay));
    let out = fx.run(
        &["run", "main..feature", "--format", "json"],
        Duration::from_secs(600),
    );
    if out.timed_out || !out.status.success() {
        return Err(format!(
            "deep-review run failed (exit {:?}): {}",
            out.status,
            out.stderr.trim()
        ));
    }
    let wall = out.elapsed.as_secs_f64();
    let json_path = fx
        .reports("json")
        .into_iter()
        .next()
        .ok_or("the run wrote no <store>/<id>.json")?;
    let text = std::fs::read_to_string(&json_path).map_err(|e| e.to_string())?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let slowest = agent_entries(&json)
        .into_iter()
        .filter_map(|e| e.get("duration_s").and_then(serde_json::Value::as_f64))
        .fold(None, |m: Option<f64>, d| Some(m.map_or(d, |m| m.max(d))))
        .ok_or("the JSON report has no per-agent duration_s")?;
    let own = find_number(&json, "wall_clock_s");
    Ok((wall, slowest, own))
}

/// The first number under `key` at any depth (`meta.wall_clock_s` in the JSON report).
fn find_number(value: &serde_json::Value, key: &str) -> Option<f64> {
    match value {
        serde_json::Value::Object(map) => map
            .get(key)
            .and_then(serde_json::Value::as_f64)
            .or_else(|| map.values().find_map(|v| find_number(v, key))),
        serde_json::Value::Array(items) => items.iter().find_map(|v| find_number(v, key)),
        _ => None,
    }
}

/// The three CLIs run directly and at once against a model that waits `delay`: the slowest.
fn direct(delay: Duration) -> f64 {
    let fx = RunFixture::new();
    script_three(&fx, |_, s| s.delay(delay));
    let threads: Vec<_> = CLIS
        .iter()
        .map(|(_, api)| {
            let cmd = fx.home.command(*api, fx.path());
            std::thread::spawn(move || {
                let started = Instant::now();
                let ran = run_with_stdin(cmd, "Review the branch.", Duration::from_secs(300));
                (started.elapsed().as_secs_f64(), ran.status.success())
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| {
            let (secs, ok) = t.join().expect("a CLI thread");
            assert!(ok, "a CLI failed against the fake model");
            secs
        })
        .fold(0.0, f64::max)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this too: keep that quick.
    if !std::env::args().any(|a| a == "--bench") {
        println!("run_wall_clock: not run under `cargo test` (use `cargo bench`)");
        return;
    }
    require_all("run_wall_clock");
    let rounds = env_number("RUN_WALL_CLOCK_ROUNDS", 3).max(1);
    let delay = Duration::from_secs(env_number("RUN_WALL_CLOCK_DELAY_S", 5));
    println!(
        "run_wall_clock: 3 agents, fake model waits {:.0} s, {rounds} round(s)",
        delay.as_secs_f64()
    );

    let mut directs = Vec::new();
    let mut walls = Vec::new();
    let mut ratios = Vec::new();
    for round in 1..=rounds {
        let d = direct(delay);
        directs.push(d);
        match one_run(delay) {
            Ok((wall, slowest, own)) => {
                let ratio = wall / slowest;
                println!(
                    "round {round}: run {wall:.2} s (its own wall_clock_s: {}), slowest agent \
                     {slowest:.2} s, ratio {ratio:.3}; CLIs direct {d:.2} s, run/direct {:.3}",
                    own.map_or("absent".into(), |o| format!("{o:.2} s")),
                    wall / d
                );
                walls.push(wall);
                ratios.push(ratio);
            }
            Err(why) => {
                println!(
                    "round {round}: CLIs direct {d:.2} s; `deep-review run` not measured: {why}"
                );
            }
        }
    }
    let direct_median = median(&mut directs);
    if ratios.is_empty() {
        println!(
            "median: CLIs direct {direct_median:.2} s; no `deep-review run` figure (see above)"
        );
        return;
    }
    let wall_median = median(&mut walls);
    let ratio_median = median(&mut ratios);
    println!(
        "median: run {wall_median:.2} s, ratio run/slowest agent {ratio_median:.3} (target ≤ 1.05), \
         run/direct {:.3}",
        wall_median / direct_median
    );
}
