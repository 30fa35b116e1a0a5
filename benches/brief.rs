//! The brief and the packed prompt on changes far bigger than a prompt: both must stay within
//! their budget and take under a second.
//!
//! - **brief**: a generated real repository (written with `git fast-import`): `feat` has 16,000
//!   commits, the last adding 20,000 files of every kind (source, tests, docs, generated, lock,
//!   vendored). `target::resolve` runs once (its time is printed); `brief::build` is measured
//!   with no budget (the size users got before) and with budgets of 100,000 and 32,000 tokens.
//! - **pack**: 2,000 Go files of 227 lines; the change edits one line in every function, 25 per
//!   file: 50,000 lines added and 50,000 removed. `brief::pack` into 100,000 tokens is measured,
//!   time and peak memory (the process's peak resident set, reset before the measurement
//!   through `/proc/self/clear_refs`).
//!
//! Run with `cargo bench --bench brief` (release). Figures are medians of 5 runs.

#[path = "../tests/integration/brief_fixtures.rs"]
mod fixtures;
#[path = "../tests/integration/support/repo.rs"]
mod repo_support;

use std::time::{Duration, Instant};

use deep_review::brief::{BriefOptions, PackOptions, build, pack};
use deep_review::target::{TargetSpec, resolve};
use deep_review::types::Target;
use fixtures::{Commit, import, source_file, source_file_changed};
use repo_support::Repo;

const RUNS: usize = 5;

fn main() {
    brief_bench();
    pack_bench();
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn timed<T>(f: impl Fn() -> T) -> (Duration, T) {
    let mut times = Vec::with_capacity(RUNS);
    let mut last = None;
    for _ in 0..RUNS {
        let start = Instant::now();
        let out = f();
        times.push(start.elapsed());
        last = Some(out);
    }
    (median(times), last.expect("at least one run"))
}

fn resolve_feat(repo: &Repo) -> Target {
    resolve(
        repo.path(),
        &TargetSpec {
            target: Some("main..feat".into()),
            ..TargetSpec::default()
        },
    )
    .expect("resolve")
}

/// The path of the `i`-th of 20,000 files: 8,000 source, 4,000 tests, 1,000 docs, 3,000
/// generated, 1,000 lock files, 3,000 vendored.
fn big_path(i: usize) -> String {
    match i {
        0..8_000 => format!("src/mod{:03}/file{i:05}.go", i % 400),
        8_000..12_000 => format!("src/mod{:03}/file{i:05}_test.go", i % 400),
        12_000..13_000 => format!("docs/section{:02}/page{i:05}.md", i % 50),
        13_000..16_000 => format!("api/gen{:02}/types{i:05}.pb.go", i % 60),
        16_000..17_000 => format!("tools/t{i:05}/go.sum"),
        _ => format!("vendor/github.com/org{:02}/lib{i:05}/lib.go", i % 90),
    }
}

fn brief_bench() {
    let start = Instant::now();
    let repo = Repo::new();
    import(
        repo.path(),
        "main",
        None,
        [Commit::new("initial").write("README.md", "hello\n")],
    );
    let commits = (0..15_999)
        .map(|n| {
            Commit::new(format!(
                "Step {n:05}: adjust the progress marker for component {}",
                n % 97
            ))
            .write(format!("progress/c{:02}.txt", n % 97), format!("{n}\n"))
        })
        .chain(std::iter::once({
            let mut last = Commit::new("Add everything else");
            // With the 97 progress files, 20,000 changed files.
            for i in 0..20_000 - 97 {
                last = last.write(big_path(i), format!("package p{i}\n"));
            }
            last
        }));
    import(repo.path(), "feat", Some("main"), commits);
    eprintln!("brief fixture: made in {:.1?}", start.elapsed());

    let start = Instant::now();
    let target = resolve_feat(&repo);
    eprintln!(
        "brief fixture: target::resolve {:.1?}: {} commits, {} changed files",
        start.elapsed(),
        target.commits.len(),
        target.changed_files.len()
    );
    assert_eq!(target.commits.len(), 16_000);
    assert_eq!(target.changed_files.len(), 20_000);

    let (t, full) = timed(|| build(&target, &BriefOptions::default()).expect("brief"));
    println!(
        "brief, no budget:           {:>8.1?}  {:>9} bytes, about {:>7} tokens",
        t, full.bytes, full.estimated_tokens
    );
    for budget in [100_000, 32_000] {
        let opts = BriefOptions {
            budget_tokens: Some(budget),
            ..BriefOptions::default()
        };
        let (t, brief) = timed(|| build(&target, &opts).expect("brief"));
        assert!(
            brief.estimated_tokens <= budget,
            "{} tokens over a budget of {budget}",
            brief.estimated_tokens
        );
        assert!(brief.warning.is_some());
        println!(
            "brief, budget {budget:>7}:    {:>8.1?}  {:>9} bytes, about {:>7} tokens (within budget)",
            t, brief.bytes, brief.estimated_tokens
        );
        for o in &brief.omitted {
            println!("    left out: {o}");
        }
    }
}

fn pack_bench() {
    const FILES: usize = 2_000;
    const FUNCTIONS: usize = 25;
    let start = Instant::now();
    let repo = Repo::new();
    let mut base = Commit::new("initial");
    for i in 0..FILES {
        base = base.write(pack_path(i), source_file(i, FUNCTIONS));
    }
    import(repo.path(), "main", None, [base]);
    let mut change = Commit::new("Check every computation");
    for i in 0..FILES {
        change = change.write(pack_path(i), source_file_changed(i, FUNCTIONS, 1));
    }
    import(repo.path(), "feat", Some("main"), [change]);
    let target = resolve_feat(&repo);
    let (added, removed) = target.line_counts();
    eprintln!(
        "pack fixture: made in {:.1?}: {} files, +{added} -{removed} lines",
        start.elapsed(),
        target.changed_files.len()
    );
    assert_eq!(target.changed_files.len(), FILES);
    assert_eq!(added + removed, 100_000);

    let budget = 100_000;
    let opts = PackOptions {
        context_tokens: budget,
        ..PackOptions::default()
    };
    reset_peak_memory();
    let before = peak_memory_kib();
    let (t, brief) = timed(|| pack(&target, &opts).expect("pack"));
    let peak = peak_memory_kib();
    assert!(brief.estimated_tokens <= budget);
    println!(
        "pack 2,000 files, 100,000 changed lines into {budget} tokens: {:>8.1?}  about {} tokens; \
         peak memory {} MiB (before: {} MiB)",
        t,
        brief.estimated_tokens,
        peak.map_or("?".into(), |k| (k / 1024).to_string()),
        before.map_or("?".into(), |k| (k / 1024).to_string()),
    );
    if let Some(w) = &brief.warning {
        println!("    warning: {w}");
    }
}

fn pack_path(i: usize) -> String {
    format!("pkg/m{:02}/file{i:04}.go", i % 40)
}

/// Resets the kernel's peak-RSS mark of this process (Linux 4.0+), so the next reading is the
/// peak of what follows.
fn reset_peak_memory() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn peak_memory_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
