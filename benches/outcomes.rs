//! Outcomes over a store of generated reports: what `deep-review stats` costs, and what a run
//! pays to learn its agents' records before it starts (both read every report of the store).
//!
//! Run: `cargo bench --bench outcomes` (release build). For stores of 300 / 1,000 / 3,000 reports
//! it prints, the least of 3 runs each:
//!
//! 1. **the floor**: reading and parsing every JSON report of the store, nothing else (in process);
//! 2. **records**: what `run` does at plan time (in process): the reports read, every finding's
//!    fate, the records estimated from outcomes, and from agreement alone (Dawid-Skene);
//! 3. **`deep-review stats --format json`** and **`stats --format html`** as commands: wall, CPU
//!    and peak RSS.
//!
//! The store ([`generate`]): changes of 1 to 4 rounds; three agents (a fourth in one report of
//! five), each report 8 to 25 merged findings (60% raised by one agent, 30% by two, 10% by three),
//! of which four in five are shown and most grounded; a later round raises a third of the last
//! round's findings again (`persisting`, with `prior`) and lists the rest as resolved or
//! declined; three in five findings have a decision (Fixed, Skipped, Commented, Test written,
//! Documentation updated, or a word the tool does not know); every report carries its agents'
//! raw reviews in the appendix (about 20 KB each, as real reports do) and their cost and time.

use std::process::Command;
use std::time::{Duration, Instant};

use deep_review::outcomes::{self, load};
use deep_review::store::Store;
use deep_review::types::{
    Action, AgentRetro, AppendixEntry, Location, MergedFinding, PriorItem, PriorRef, PriorRounds,
    ReliabilityMethod, Report, ReportMeta, Resolution, ResolutionItem, RoundStatus, RunStatus,
    Severity, SeverityCounts, SourceRef, Tier, Verification, VerificationStatus,
};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let bin = env!("CARGO_BIN_EXE_deep-review");
    // BENCH_REPORTS=100,300: other store sizes.
    let sizes: Vec<usize> = std::env::var("BENCH_REPORTS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![300, 1_000, 3_000]);
    for reports in sizes {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = Store::new(dir.path());
        let started = Instant::now();
        let (bytes, findings) = generate(&store, reports, 7);
        println!(
            "\nstore of {reports} reports, {findings} findings, {:.1} MB of JSON (generated in {:.1} s)",
            bytes as f64 / 1e6,
            started.elapsed().as_secs_f64()
        );
        let floor = least(3, || {
            let mut n = 0;
            for e in store.list().expect("list") {
                let text = std::fs::read(store.report_path(&e.id, "json")).expect("read");
                let r: Report = serde_json::from_slice(&text).expect("a report");
                n += r.findings.len();
            }
            n
        });
        println!(
            "  floor: read and parse every report      {:>7.3} s",
            floor.as_secs_f64()
        );
        let records = least(3, || {
            let loaded = load::from_store(&store, &|_| false);
            let t = load::from_reports(&loaded.reports, ReliabilityMethod::Outcomes, "bench");
            t.rows.len()
        });
        println!(
            "  records from outcomes (as `run` does)   {:>7.3} s",
            records.as_secs_f64()
        );
        let loaded = load::from_store(&store, &|_| false);
        let fates = least(3, || outcomes::of_reports(&loaded.reports).len());
        let agreement = least(3, || {
            load::from_reports(&loaded.reports, ReliabilityMethod::Agreement, "bench")
                .rows
                .len()
        });
        println!(
            "    of which fates {:.3} s; agreement (Dawid-Skene) {:.3} s",
            fates.as_secs_f64(),
            agreement.as_secs_f64()
        );
        for format in ["json", "html"] {
            let mut best = (Duration::MAX, Duration::MAX, 0);
            for _ in 0..3 {
                let mut cmd = Command::new(bin);
                cmd.args(["stats", "--format", format, "--store"])
                    .arg(dir.path())
                    .args(["--out"])
                    .arg(dir.path().join(format!("stats-out.{format}")));
                let (wall, cpu, rss) = measured(cmd);
                best = (best.0.min(wall), best.1.min(cpu), best.2.max(rss));
            }
            println!(
                "  `deep-review stats --format {format}`     wall {:.3} s, CPU {:.3} s, peak {:.0} MB",
                best.0.as_secs_f64(),
                best.1.as_secs_f64(),
                best.2 as f64 / 1e6
            );
        }
    }
}

/// The least time of `runs` runs of `f`.
fn least<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    (0..runs)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(f());
            started.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// Runs `cmd` to its end: wall time, CPU time (user + system) and peak RSS in bytes.
fn measured(mut cmd: Command) -> (Duration, Duration, u64) {
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let started = Instant::now();
    let child = cmd.spawn().expect("run deep-review");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child, which nothing else waits for.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = started.elapsed();
    assert_eq!(rc, pid, "wait4 on deep-review");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "deep-review stats failed (status {status})"
    );
    // Reaped by wait4 above: dropping it would not wait again, forgetting it says so.
    std::mem::forget(child);
    let t = |tv: libc::timeval| Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000);
    (
        wall,
        t(usage.ru_utime) + t(usage.ru_stime),
        usage.ru_maxrss as u64 * 1024,
    )
}

const AGENTS: [&str; 4] = ["claude", "codex", "gemini", "local"];
const CATEGORIES: [&str; 4] = ["regression", "gap", "enhancement", "security"];

/// Writes `reports` generated reports into `store`; returns the bytes of JSON and findings.
fn generate(store: &Store, reports: usize, seed: u64) -> (usize, usize) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let raw = raw_review(&mut rng);
    let (mut bytes, mut findings, mut written) = (0, 0, 0);
    let mut change = 0;
    while written < reports {
        change += 1;
        let rounds = rng.usize(1..=4).min(reports - written);
        let mut last: Option<Report> = None;
        for round in 1..=rounds as u32 {
            let r = report(&mut rng, change, round, last.as_ref(), &raw, written);
            let text = serde_json::to_string(&r).expect("JSON");
            bytes += text.len();
            findings += r.findings.len();
            store
                .write_report(&r.meta.id, "json", &text)
                .expect("write");
            written += 1;
            last = Some(r);
        }
    }
    (bytes, findings)
}

/// A raw review of about 20 KB.
fn raw_review(rng: &mut fastrand::Rng) -> String {
    let mut text = String::from("**Verdict**: Merge with fixes\n\n## Findings\n\n");
    while text.len() < 20_000 {
        text.push_str(&format!(
            "1. **The handler {} drops the error** — `src/m{}.rs:{}` (important, regression)\n\n\
             ```go\nif err := h.send(ctx); err != nil {{ return nil }}\n```\n\n\
             The error of `send` is ignored, so a failed write looks like success.\n\n",
            rng.u32(..),
            rng.u32(..100),
            rng.u32(1..500)
        ));
    }
    text
}

fn report(
    rng: &mut fastrand::Rng,
    change: usize,
    round: u32,
    last: Option<&Report>,
    raw: &str,
    n: usize,
) -> Report {
    let agents: Vec<&str> = if rng.usize(..5) == 0 {
        AGENTS.to_vec()
    } else {
        AGENTS[..3].to_vec()
    };
    let id = format!(
        "2026{:02}{:02}-{:02}{:02}{:02}-change-{change}",
        1 + n / 2_000 % 12,
        1 + n / 60 % 28,
        n / 3_600 % 24,
        n / 60 % 60,
        n % 60
    );
    let mut findings: Vec<MergedFinding> = Vec::new();
    let mut prior_rounds = PriorRounds::default();
    if let Some(last) = last {
        prior_rounds.since_round = Some(round - 1);
        for f in &last.findings {
            let item = || PriorItem {
                round: round - 1,
                id: f.id.clone(),
                title: f.title.clone(),
                reason: String::new(),
                action: None,
                fingerprint: None,
                now: None,
                raised_again: Vec::new(),
            };
            match rng.usize(..3) {
                0 => {
                    let mut again = f.clone();
                    again.round_status = RoundStatus::Persisting;
                    again.prior = Some(PriorRef {
                        round: round - 1,
                        id: f.id.clone(),
                    });
                    findings.push(again);
                }
                1 => prior_rounds.declined.push(item()),
                _ => prior_rounds.resolved.push(item()),
            }
        }
    }
    for _ in 0..rng.usize(8..=25) {
        findings.push(finding(rng, &agents));
    }
    for (i, f) in findings.iter_mut().enumerate() {
        f.id = format!("{}{}", f.severity.id_prefix(), i + 1);
    }
    let decided: Vec<&MergedFinding> = findings.iter().filter(|_| rng.usize(..5) < 3).collect();
    let items = decided
        .into_iter()
        .map(|f| ResolutionItem {
            id: f.id.clone(),
            title: f.title.clone(),
            action: match rng.usize(..20) {
                0..=9 => Action::Fixed,
                10..=13 => Action::Skipped,
                14..=15 => Action::Commented,
                16..=17 => Action::TestWritten,
                18 => Action::Documented,
                _ => Action::Other("Deferred".into()),
            },
            reason: "because".into(),
        })
        .collect();
    Report {
        round,
        meta: ReportMeta {
            id,
            round: Some(round),
            branch: Some(format!("change-{change}")),
            repo: Some("acme/app".into()),
            ..ReportMeta::default()
        },
        findings,
        agents: agents.iter().map(|a| retro(rng, a)).collect(),
        appendix: agents
            .iter()
            .map(|a| AppendixEntry {
                agent: a.to_string(),
                display: a.to_string(),
                text: raw.to_string(),
            })
            .collect(),
        resolution: Some(Resolution {
            items,
            ..Resolution::default()
        }),
        prior_rounds,
        ..Report::default()
    }
}

fn finding(rng: &mut fastrand::Rng, agents: &[&str]) -> MergedFinding {
    let k = match rng.usize(..10) {
        0..=5 => 1,
        6..=8 => 2,
        _ => 3,
    };
    let mut raised: Vec<String> = Vec::new();
    while raised.len() < k {
        let a = agents[rng.usize(..agents.len())].to_string();
        if !raised.contains(&a) {
            raised.push(a);
        }
    }
    let severity = Severity::ALL[rng.usize(..3)];
    MergedFinding {
        id: String::new(),
        title: format!("The cache {} drops the lock before the insert", rng.u32(..)),
        body: "Two workers can both miss and both insert; under load this loses writes.".into(),
        severity,
        category: Some(CATEGORIES[rng.usize(..CATEGORIES.len())].into()),
        locations: vec![Location::new(
            format!("src/m{}.rs", rng.u32(..300)),
            Some(10),
            Some(24),
        )],
        code: None,
        fix: None,
        fix_diff: None,
        sources: raised
            .iter()
            .map(|a| SourceRef {
                agent: a.clone(),
                id: format!("I{}", rng.u32(1..20)),
                severity: Some(severity),
                noted_in: None,
            })
            .collect(),
        agents: raised,
        calibration: None,
        confidence: Some(0.7),
        confidence_reason: None,
        tier: if rng.usize(..5) == 0 {
            Tier::LowConfidence
        } else {
            Tier::Shown
        },
        verification: Some(Verification {
            status: if rng.usize(..7) == 0 {
                VerificationStatus::Ungrounded
            } else {
                VerificationStatus::Grounded
            },
            note: None,
            ..Verification::unchecked("")
        }),
        fingerprint: format!("{:016x}", rng.u64(..)),
        round_status: RoundStatus::New,
        prior: None,
    }
}

fn retro(rng: &mut fastrand::Rng, name: &str) -> AgentRetro {
    AgentRetro {
        name: name.into(),
        display: name.into(),
        counts: SeverityCounts {
            critical: rng.usize(..2),
            important: rng.usize(1..6),
            suggestion: rng.usize(..6),
        },
        design_observations: 0,
        unique_insights: 0,
        false_positives: 0,
        files_reviewed: None,
        coverage_misses: Vec::new(),
        calibrations: Vec::new(),
        status: Some(RunStatus::Ok),
        duration_s: Some(60.0 + rng.f64() * 600.0),
        tool_calls: None,
        tokens: None,
        cost_usd: Some(rng.f64() * 2.0),
        cost_basis: None,
        error: None,
        synthesis_note: None,
        network: None,
        worktree_changes: Vec::new(),
        sandbox: None,
        output_cut_bytes: None,
    }
}
