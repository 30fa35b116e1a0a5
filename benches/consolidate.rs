//! Consolidation on realistic generated reviews: speed, memory, candidate pairs and accuracy.
//!
//! Run: `cargo bench --bench consolidate` (release build). It prints:
//!
//! 1. **Scaling**, 10 agents x 500 / 1,000 / 2,000 findings: the `deep-review consolidate`
//!    command on the generated Markdown reviews (wall time, CPU time of every thread, user +
//!    system, and peak RSS of the process), consolidation alone in process (wall and process CPU
//!    time), the least of 3 runs each, the candidate pairs the blocking step yields, and
//!    T(2N)/T(N). Both times are printed: the work is spread over the cores, so wall time is what
//!    a user waits; on a shared machine it grows with other people's load, and CPU time less.
//! 2. **Accuracy**, 10 x 5,000: the share of planted duplicate pairs (two agents' findings of one
//!    defect) that end in one merged finding, and the pairs of unrelated findings that do.
//! 3. **Hostile**: every finding of every agent on the same line of the same file, all about
//!    different defects: no two may merge.
//! 4. **A fifth round** against four earlier reports (`BENCH_PART=rounds`).
//! 5. **A flood**: one agent's 200 MB review of short findings, through the command
//!    (`BENCH_PART=flood`): it reads 20 MB and 5,000 findings, and says so.
//!
//! The data ([`generator`]): a vocabulary of 50,000 made-up words drawn with Zipf's law (s = 1), so a
//! few words are in most findings and most words are rare; identifiers (camelCase, built from the
//! vocabulary) that recur across 2 to 64 findings of different defects, plus a few (`err`, `ctx`,
//! `config`) that are everywhere; files holding about 20 defects each, some defects on the lines
//! of another. A defect has core words, identifiers, lines and code; each agent that reports it
//! (one agent for half the defects, up to all ten for a few) writes its own title and body from
//! the core words and common filler, cites lines a few lines off, a bare file name one time in
//! three, and quotes part of the code two times in three.

use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "../tests/integration/support/bench_gen.rs"]
mod bench_gen;

use deep_review::consolidate::cluster;
use deep_review::consolidate::similarity::{Corpus, FindingProfile};
use deep_review::consolidate::{ConsolidateOptions, consolidate};
use deep_review::parse::parse_review;
use deep_review::types::Review;

const AGENTS: usize = 10;

/// The allocator of the `deep-review` binary, so consolidation in process costs what it costs there.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let bin = env!("CARGO_BIN_EXE_deep-review");
    // BENCH_HOSTILE_DIR=dir: write the hostile reviews there and stop (for profiling);
    // BENCH_REALISTIC_DIR=dir: the realistic 10 x 1,000 reviews of the scaling part.
    let written = std::env::var_os("BENCH_HOSTILE_DIR")
        .map(|d| (d, 13, generator::Shape::OneLine))
        .or_else(|| {
            std::env::var_os("BENCH_REALISTIC_DIR").map(|d| (d, 7, generator::Shape::Realistic))
        });
    if let Some((dir, seed, shape)) = written {
        let data = generator::generate(AGENTS, 1000, seed, shape);
        for (a, text) in data.texts.iter().enumerate() {
            std::fs::write(Path::new(&dir).join(format!("agent{a}.md")), text).expect("write");
        }
        return;
    }
    // BENCH_SIZES=500,1000: only the scaling part, at those sizes (for profiling).
    if let Ok(sizes) = std::env::var("BENCH_SIZES") {
        let sizes: Vec<usize> = sizes
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect();
        scaling(bin, &sizes);
        return;
    }
    // BENCH_PART=hostile|accuracy|rounds|flood|shared: only that part, at full size (for tuning).
    match std::env::var("BENCH_PART").as_deref() {
        Ok("shared") => return shared_generator(bin),
        Ok("hostile") => {
            let g = Generated::new(1000, 13, generator::Shape::OneLine);
            hostile(1000, median_command(bin, &g, 1));
            return;
        }
        Ok("accuracy") => return accuracy(5000),
        Ok("rounds") => return fifth_round(1000),
        Ok("flood") => return flood(),
        _ => {}
    }
    // BENCH_QUICK=1: small sizes, to try the bench itself in a debug build.
    let (sizes, accurate, crowd): (&[usize], usize, usize) =
        if std::env::var_os("BENCH_QUICK").is_some() {
            (&[100, 200], 300, 200)
        } else {
            (&[500, 1000, 2000], 5000, 1000)
        };
    // The commands run first, while this process is small: a child's peak RSS counts the
    // memory of the process it was spawned from, up to its exec.
    let hostile_command = {
        let g = Generated::new(crowd, 13, generator::Shape::OneLine);
        median_command(bin, &g, 1)
    };
    shared_generator(bin);
    scaling(bin, sizes);
    accuracy(accurate);
    hostile(crowd, hostile_command);
    fifth_round(crowd);
    flood();
}

/// The command on the shared generator's reviews (`gen_reviews.py synth --agents 10 --findings
/// N --zipf 1 --vocab 50000 --planted`), 10 x 1,000 and 10 x 2,000, what users send: CPU time
/// of every thread, wall time and peak RSS of the whole command (read, parse, consolidate,
/// render JSON), each beside its floor (the same process reading and parsing the reviews
/// and rendering nothing: `consolidate --raw` of the reviews with every finding cut, the
/// cost no consolidation can avoid is reading and parsing them, measured in process), runs
/// alternating between the sizes, and CPU(10 x 2,000) / CPU(10 x 1,000).
fn shared_generator(bin: &str) {
    println!(
        "== consolidate on the shared generator's reviews (Zipf vocabulary of 50,000, planted duplicates) =="
    );
    let Some(scripts) = bench_gen::generators() else {
        println!("skipped: ../shared/bench-gen is absent (the shared generators)\n");
        return;
    };
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let sizes = [1000usize, 2000];
    let inputs: Vec<Vec<(String, std::path::PathBuf)>> = sizes
        .iter()
        .map(|n| {
            bench_gen::reviews(
                &scripts,
                &dir.path().join(format!("n{n}")),
                &[
                    "synth",
                    "--agents",
                    "10",
                    "--findings",
                    &n.to_string(),
                    "--zipf",
                    "1",
                    "--vocab",
                    "50000",
                    "--planted",
                ],
            )
        })
        .collect();
    let mut command: Vec<Vec<(Timed, u64)>> = vec![Vec::new(); sizes.len()];
    let mut parse: Vec<Vec<Duration>> = vec![Vec::new(); sizes.len()];
    for _ in 0..runs {
        for (k, files) in inputs.iter().enumerate() {
            let mut cmd = Command::new(bin);
            cmd.arg("consolidate");
            for (name, path) in files {
                cmd.arg("--raw").arg(format!("{name}={}", path.display()));
            }
            let out = dir.path().join("report.json");
            cmd.args(["--format", "json", "--out"]).arg(&out);
            let log = dir.path().join("stderr.txt");
            cmd.stderr(std::fs::File::create(&log).expect("a log file"));
            command[k].push(wait_measured(cmd, &log));
            // The floor: reading and parsing the same files, in this process.
            let t0 = process_cpu();
            let reviews: Vec<Review> = files
                .iter()
                .map(|(name, path)| {
                    deep_review::parse::read_review_file(name, path).expect("a review")
                })
                .collect();
            parse[k].push(process_cpu() - t0);
            drop(reviews);
        }
    }
    let secs = |d: Duration| d.as_secs_f64();
    let spread = |mut v: Vec<f64>| -> (f64, f64, f64) {
        v.sort_by(f64::total_cmp);
        (v[0], v[v.len() / 2], v[v.len() - 1])
    };
    let mut cpu_median = Vec::new();
    for (k, n) in sizes.iter().enumerate() {
        let cpu = spread(command[k].iter().map(|(t, _)| secs(t.cpu)).collect());
        let wall = spread(command[k].iter().map(|(t, _)| secs(t.wall)).collect());
        let rss = spread(command[k].iter().map(|(_, r)| *r as f64 / 1e6).collect());
        let floor = spread(parse[k].iter().map(|d| secs(*d)).collect());
        cpu_median.push(cpu.1);
        println!(
            "10 x {n}: command CPU {:.2}-{:.2} s (median {:.2}), wall {:.2}-{:.2} s, peak RSS {:.0}-{:.0} MB; \
             floor (reading and parsing the reviews) CPU {:.2}-{:.2} s (median {:.2}); {runs} runs",
            cpu.0, cpu.2, cpu.1, wall.0, wall.2, rss.0, rss.2, floor.0, floor.2, floor.1
        );
    }
    println!(
        "CPU(10 x 2,000) / CPU(10 x 1,000) = {:.2} (medians)\n",
        cpu_median[1] / cpu_median[0]
    );
}

/// One agent's flood: a 200 MB review of about 1.6 million short findings whose ids repeat
/// every 2,000 (an agent in a loop), given to `consolidate --raw`. The command must read no more
/// than a run keeps (20 MB) and no more than 5,000 findings, and say so.
fn flood() {
    println!("== flood: `consolidate --raw` of one agent's 200 MB review ==");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("flood.md");
    {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&file).expect("flood file"));
        let mut written = 0;
        let mut i = 0usize;
        writeln!(out, "## Findings\n\n### Important Issues\n").expect("write");
        while written < 200 * 1024 * 1024 {
            let finding = format!(
                "**I{}. Title number {i} about `fooBar{i}`** — `src/a{}.rs:{}`\n\nBody text explaining the defect {i} in some words.\n\n",
                i % 2000 + 1,
                i % 50,
                i % 900 + 1
            );
            out.write_all(finding.as_bytes()).expect("write");
            written += finding.len();
            i += 1;
        }
        out.flush().expect("flush");
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_deep-review"));
    cmd.arg("consolidate")
        .arg("--raw")
        .arg(format!("looping={}", file.display()))
        .args(["--format", "json", "--out"])
        .arg(dir.path().join("report.json"));
    let log = dir.path().join("stderr.txt");
    cmd.stderr(std::fs::File::create(&log).expect("a log file"));
    let (time, rss) = wait_measured(cmd, &log);
    let stderr = std::fs::read_to_string(&log).unwrap_or_default();
    println!(
        "command {:.3}s wall, {:.3}s CPU, {:.0} MB; cut at 20 MB: {}; stopped after 5,000 findings: {}; {} lines on stderr\n",
        time.wall.as_secs_f64(),
        time.cpu.as_secs_f64(),
        rss as f64 / 1e6,
        stderr.contains("longer than 20 MB"),
        stderr.contains("more than 5000 findings"),
        stderr.lines().count()
    );
}

/// Generated reviews of `AGENTS` agents with `n` findings each, written to a temporary directory.
struct Generated {
    data: generator::Data,
    dir: tempfile::TempDir,
}

impl Generated {
    fn new(n: usize, seed: u64, shape: generator::Shape) -> Self {
        let data = generator::generate(AGENTS, n, seed, shape);
        let dir = tempfile::tempdir().expect("a temporary directory");
        for (a, text) in data.texts.iter().enumerate() {
            std::fs::write(dir.path().join(format!("agent{a}.md")), text).expect("write review");
        }
        Generated { data, dir }
    }

    fn bytes(&self) -> usize {
        self.data.texts.iter().map(String::len).sum()
    }

    fn reviews(&self) -> Vec<Review> {
        let reviews: Vec<Review> = self
            .data
            .texts
            .iter()
            .enumerate()
            .map(|(a, t)| parse_review(&format!("agent{a}"), t))
            .collect();
        for (a, r) in reviews.iter().enumerate() {
            assert_eq!(
                r.findings.len(),
                self.data.defect_of[a].len(),
                "agent{a}: the parser must read every generated finding"
            );
        }
        reviews
    }
}

fn scaling(bin: &str, sizes: &[usize]) {
    println!("== consolidate, {AGENTS} agents x N findings (realistic vocabulary) ==");
    println!(
        "{:>6} {:>7} {:>9} {:>9} {:>8} {:>9} {:>9} {:>11} {:>11} {:>7}",
        "N",
        "input",
        "cmd wall",
        "cmd CPU",
        "cmd RSS",
        "in wall",
        "in CPU",
        "candidates",
        "true links",
        "merged"
    );
    // The commands first, while this process holds nothing but one size's reviews.
    let commands: Vec<(Timed, u64)> = sizes
        .iter()
        .map(|&n| median_command(bin, &Generated::new(n, 7, generator::Shape::Realistic), 3))
        .collect();
    let mut cmd_times = Vec::new();
    let mut in_times = Vec::new();
    for (&n, &(cmd, rss)) in sizes.iter().zip(&commands) {
        let g = Generated::new(n, 7, generator::Shape::Realistic);
        let reviews = g.reviews();
        let (t, report) = median_time(3, || consolidate(&reviews, &ConsolidateOptions::default()));
        let stats = candidate_pairs(&reviews);
        breakdown(&reviews);
        let merged_findings = report.findings.len();
        println!(
            "{n:>6} {:>6.1}M {:>8.3}s {:>8.3}s {:>6.0}MB {:>8.3}s {:>8.3}s {:>11} {:>11} {:>7}",
            g.bytes() as f64 / 1e6,
            cmd.wall.as_secs_f64(),
            cmd.cpu.as_secs_f64(),
            rss as f64 / 1e6,
            t.wall.as_secs_f64(),
            t.cpu.as_secs_f64(),
            stats.pairs,
            g.data.planted_pairs(),
            AGENTS * n - merged_findings,
        );
        println!(
            "       ({} common keys paired through a second one, {} groups compared in a window)",
            stats.common_keys, stats.windowed_groups
        );
        cmd_times.push((n, cmd));
        in_times.push((n, t));
    }
    for (w, v) in cmd_times.windows(2).zip(in_times.windows(2)) {
        let (a, b, c, d) = (w[0], w[1], v[0], v[1]);
        if b.0 == 2 * a.0 {
            println!(
                "T({})/T({}): command {:.2} wall, {:.2} CPU; consolidate alone {:.2} wall, {:.2} CPU",
                b.0,
                a.0,
                b.1.wall.as_secs_f64() / a.1.wall.as_secs_f64(),
                b.1.cpu.as_secs_f64() / a.1.cpu.as_secs_f64(),
                d.1.wall.as_secs_f64() / c.1.wall.as_secs_f64(),
                d.1.cpu.as_secs_f64() / c.1.cpu.as_secs_f64()
            );
        }
    }
    println!(
        "(candidates: cross-agent pairs the blocking step scores; true links: planted duplicate pairs; merged: findings folded into another)\n"
    );
}

fn accuracy(n: usize) {
    println!("== accuracy, {AGENTS} x {n} findings ==");
    let g = Generated::new(n, 11, generator::Shape::Realistic);
    let reviews = g.reviews();
    let started = process_cpu();
    let report = consolidate(&reviews, &ConsolidateOptions::default());
    let elapsed = process_cpu() - started;
    let (planted, merged, unrelated) = pair_outcomes(&g.data, &report);
    println!(
        "planted duplicate pairs merged: {merged} of {planted} ({:.1}%); unrelated pairs merged: {unrelated}; consolidate {:.2}s CPU, {} candidate pairs",
        100.0 * merged as f64 / planted.max(1) as f64,
        elapsed.as_secs_f64(),
        candidate_pairs(&reviews).pairs
    );
    println!(
        "target: >= 90% merged, 0 unrelated: {}\n",
        if merged * 10 >= planted * 9 && unrelated == 0 {
            "met"
        } else {
            "NOT met"
        }
    );
}

fn hostile(n: usize, (time, rss): (Timed, u64)) {
    println!("== hostile: {AGENTS} x {n} findings of different defects, all on one line ==");
    let g = Generated::new(n, 13, generator::Shape::OneLine);
    let reviews = g.reviews();
    let report = consolidate(&reviews, &ConsolidateOptions::default());
    let (_, _, unrelated) = pair_outcomes(&g.data, &report);
    println!(
        "unrelated pairs merged: {unrelated} (target 0); command {:.3}s wall, {:.3}s CPU, {:.0} MB; {} candidate pairs\n",
        time.wall.as_secs_f64(),
        time.cpu.as_secs_f64(),
        rss as f64 / 1e6,
        candidate_pairs(&reviews).pairs
    );
}

/// Where consolidation's time goes, in CPU time: profiles, corpus, blocking, scoring.
fn breakdown(reviews: &[Review]) {
    let t0 = process_cpu();
    let mut profiles = Vec::new();
    let mut agents = Vec::new();
    for (a, r) in reviews.iter().enumerate() {
        for f in &r.findings {
            profiles.push(FindingProfile::of(f));
            agents.push(a);
        }
    }
    let t1 = process_cpu();
    let corpus = Corpus::new(profiles, agents);
    let t2 = process_cpu();
    let pairs = cluster::candidate_pairs(&corpus);
    let t3 = process_cpu();
    let kept = pairs
        .iter()
        .filter(|&&(a, b)| {
            corpus
                .score_if_at_least(a, b, cluster::MERGE_THRESHOLD)
                .is_some()
        })
        .count();
    let t4 = process_cpu();
    let _ = cluster::cluster(&corpus);
    let t5 = process_cpu();
    println!(
        "       (profiles {:.3}s, corpus {:.3}s, blocking {:.3}s, scoring {:.3}s ({kept} pairs at the threshold), clustering in all {:.3}s)",
        (t1 - t0).as_secs_f64(),
        (t2 - t1).as_secs_f64(),
        (t3 - t2).as_secs_f64(),
        (t4 - t3).as_secs_f64(),
        (t5 - t4).as_secs_f64(),
    );
}

/// Cross-agent pairs the blocking step hands to scoring, and how it found them.
fn candidate_pairs(reviews: &[Review]) -> cluster::CandidateStats {
    let mut profiles = Vec::new();
    let mut agents = Vec::new();
    for (a, r) in reviews.iter().enumerate() {
        for f in &r.findings {
            profiles.push(FindingProfile::of(f));
            agents.push(a);
        }
    }
    let corpus = Corpus::new(profiles, agents);
    cluster::candidate_pairs_with_stats(&corpus).1
}

/// (planted duplicate pairs, of which merged, unrelated pairs merged).
fn pair_outcomes(
    data: &generator::Data,
    report: &deep_review::types::Report,
) -> (usize, usize, usize) {
    let mut merged = 0;
    let mut unrelated = 0;
    for f in &report.findings {
        let defects: Vec<usize> = f
            .sources
            .iter()
            .map(|s| {
                let agent: usize = s.agent.trim_start_matches("agent").parse().unwrap();
                let index = data.index_of[agent][&s.id];
                data.defect_of[agent][index]
            })
            .collect();
        for i in 0..defects.len() {
            for j in i + 1..defects.len() {
                if defects[i] == defects[j] {
                    merged += 1;
                } else {
                    unrelated += 1;
                }
            }
        }
    }
    (data.planted_pairs(), merged, unrelated)
}

/// CPU time of this thread: what the work cost, whatever else the machine runs.
/// CPU time of the whole process, every thread's: consolidation spreads its work over a thread
/// pool.
fn process_cpu() -> Duration {
    // SAFETY: timespec is plain data that clock_gettime fills.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Wall-clock and CPU time of a measured step: the least of each over the runs (the run least
/// disturbed by the rest of a shared machine). Consolidation runs on every core, so wall time
/// is what a user waits and CPU time what the machine pays.
#[derive(Debug, Clone, Copy)]
struct Timed {
    wall: Duration,
    cpu: Duration,
}

impl Timed {
    fn least(runs: &[Timed]) -> Timed {
        Timed {
            wall: runs.iter().map(|t| t.wall).min().expect("at least one run"),
            cpu: runs.iter().map(|t| t.cpu).min().expect("at least one run"),
        }
    }
}

/// `runs` calls of `f`: the least wall and CPU times, and the last result.
fn median_time<T>(runs: usize, mut f: impl FnMut() -> T) -> (Timed, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..runs {
        let (wall, cpu) = (Instant::now(), process_cpu());
        let out = f();
        times.push(Timed {
            wall: wall.elapsed(),
            cpu: process_cpu() - cpu,
        });
        last = Some(out);
    }
    (Timed::least(&times), last.expect("at least one run"))
}

/// The `consolidate` command on the generated files: the least wall and CPU times and the peak
/// RSS of the process (bytes), over `runs` runs.
fn median_command(bin: &str, g: &Generated, runs: usize) -> (Timed, u64) {
    let mut times = Vec::new();
    let mut peak = 0;
    for _ in 0..runs {
        let (t, rss) = run_command(bin, g.dir.path());
        times.push(t);
        peak = peak.max(rss);
    }
    (Timed::least(&times), peak)
}

fn run_command(bin: &str, dir: &Path) -> (Timed, u64) {
    let mut cmd = Command::new(bin);
    cmd.arg("consolidate");
    for a in 0..AGENTS {
        cmd.arg("--raw").arg(format!(
            "agent{a}={}",
            dir.join(format!("agent{a}.md")).display()
        ));
    }
    cmd.args(["--format", "json", "--out"])
        .arg(dir.join("report.json"));
    let log = dir.join("stderr.txt");
    cmd.stderr(std::fs::File::create(&log).expect("a log file"));
    wait_measured(cmd, &log)
}

/// Runs `cmd` and waits for it: its wall and CPU times and peak RSS (bytes). It must succeed;
/// its stderr goes to `log`, shown if it does not.
fn wait_measured(mut cmd: Command, log: &Path) -> (Timed, u64) {
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
        "deep-review consolidate failed (status {status}): {}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
    std::mem::forget(child);
    let _ = std::io::stdout().flush();
    let cpu = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    // CPU time is user + system; ru_maxrss is in kilobytes on Linux.
    (
        Timed {
            wall,
            cpu: cpu(usage.ru_utime) + cpu(usage.ru_stime),
        },
        usage.ru_maxrss as u64 * 1024,
    )
}

mod generator {
    //! The generator. Deterministic for a seed, so runs compare.

    use std::collections::HashMap;
    use std::fmt::Write as _;

    const VOCABULARY: usize = 50_000;
    /// Words a defect is about: the words its reporters share.
    const CORE_WORDS: usize = 8;
    /// Defects per file.
    const DEFECTS_PER_FILE: usize = 20;
    const FILE_LINES: u32 = 2_000;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Shape {
        /// As described in the bench's documentation.
        Realistic,
        /// Every finding cites `src/hot.rs:10-12`, and every defect has one reporter.
        OneLine,
    }

    pub struct Data {
        /// One Markdown review per agent.
        pub texts: Vec<String>,
        /// `defect_of[agent][k]`: the defect of the agent's k-th finding.
        pub defect_of: Vec<Vec<usize>>,
        /// `index_of[agent][id]`: the position of the finding with that id.
        pub index_of: Vec<HashMap<String, usize>>,
        reporters: Vec<usize>,
    }

    impl Data {
        /// Pairs of findings of different agents that name one defect.
        pub fn planted_pairs(&self) -> usize {
            self.reporters.iter().map(|&k| k * (k - 1) / 2).sum()
        }
    }

    struct Defect {
        file: usize,
        start: u32,
        span: u32,
        core: Vec<usize>,
        identifiers: Vec<usize>,
        code: Vec<String>,
    }

    /// Zipf's law over the vocabulary, sampled by inverting its cumulative distribution.
    struct Zipf(Vec<f64>);

    impl Zipf {
        fn new(n: usize, s: f64) -> Self {
            let mut cdf = Vec::with_capacity(n);
            let mut total = 0.0;
            for k in 1..=n {
                total += 1.0 / (k as f64).powf(s);
                cdf.push(total);
            }
            for c in &mut cdf {
                *c /= total;
            }
            Zipf(cdf)
        }

        fn sample(&self, rng: &mut fastrand::Rng) -> usize {
            let u = rng.f64();
            self.0.partition_point(|&c| c < u).min(self.0.len() - 1)
        }
    }

    /// The made-up word of rank `k`: syllables, so that it tokenizes as one word.
    fn word(k: usize) -> String {
        const ONSETS: &[&str] = &[
            "b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "tr",
        ];
        const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ou"];
        let mut w = String::new();
        let mut x = k + 1;
        while x > 0 || w.len() < 4 {
            w.push_str(ONSETS[x % ONSETS.len()]);
            x /= ONSETS.len();
            w.push_str(VOWELS[x % VOWELS.len()]);
            x /= VOWELS.len();
        }
        w.push('x');
        w
    }

    fn capitalized(w: &str) -> String {
        let mut c = w.chars();
        c.next()
            .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
            .unwrap_or_default()
    }

    /// Identifiers: camelCase of two or three words. Each is handed out to defects until the
    /// findings naming it reach its quota, drawn between 2 and 64.
    struct Identifiers {
        names: Vec<String>,
        quota: Vec<usize>,
        used: Vec<usize>,
        open: Vec<usize>,
    }

    impl Identifiers {
        fn new() -> Self {
            Identifiers {
                names: Vec::new(),
                quota: Vec::new(),
                used: Vec::new(),
                open: Vec::new(),
            }
        }

        /// An identifier for a defect reported `findings` times.
        fn take(&mut self, rng: &mut fastrand::Rng, zipf: &Zipf, findings: usize) -> usize {
            let fits: Vec<usize> = self
                .open
                .iter()
                .copied()
                .filter(|&i| self.used[i] + findings <= self.quota[i])
                .collect();
            let id = if !fits.is_empty() && rng.f64() < 0.7 {
                fits[rng.usize(..fits.len())]
            } else {
                let parts = 2 + rng.usize(..2);
                let mut name = word(zipf.sample(rng));
                for _ in 1..parts {
                    name.push_str(&capitalized(&word(zipf.sample(rng))));
                }
                self.names.push(name);
                // Log-uniform between 2 and 64 findings.
                self.quota
                    .push((2.0 * 32f64.powf(rng.f64())).round() as usize);
                self.used.push(0);
                self.open.push(self.names.len() - 1);
                self.names.len() - 1
            };
            self.used[id] += findings;
            if self.used[id] >= self.quota[id] {
                self.open.retain(|&i| i != id);
            }
            id
        }
    }

    /// How many agents report a defect: one for half of them, two or three for a third, up to
    /// all for the rest.
    fn reporters(rng: &mut fastrand::Rng, agents: usize) -> usize {
        let u = rng.f64();
        if u < 0.5 {
            1
        } else if u < 0.83 {
            2 + rng.usize(..2)
        } else {
            4 + rng.usize(..=agents - 4)
        }
    }

    pub fn generate(agents: usize, per_agent: usize, seed: u64, shape: Shape) -> Data {
        let mut rng = fastrand::Rng::with_seed(seed);
        let zipf = Zipf::new(VOCABULARY, 1.0);
        let mut ids = Identifiers::new();
        const COMMON: &[&str] = &["err", "ctx", "config"];

        // Defects, each with the set of agents that report it, until every agent has its share.
        let mut defects: Vec<Defect> = Vec::new();
        let mut by_agent: Vec<Vec<usize>> = vec![Vec::new(); agents];
        let mut reporters_of: Vec<usize> = Vec::new();
        loop {
            let open: Vec<usize> = (0..agents)
                .filter(|&a| by_agent[a].len() < per_agent)
                .collect();
            if open.is_empty() {
                break;
            }
            let k = match shape {
                Shape::Realistic => reporters(&mut rng, agents).min(open.len()),
                Shape::OneLine => 1,
            };
            let mut chosen = open.clone();
            rng.shuffle(&mut chosen);
            chosen.truncate(k);
            let d = defects.len();
            let file = d / DEFECTS_PER_FILE;
            // One defect in ten sits on the lines of an earlier defect of its file.
            let (start, span) = if shape == Shape::OneLine {
                (10, 2)
            } else if !d.is_multiple_of(DEFECTS_PER_FILE) && rng.f64() < 0.1 {
                let other = &defects[d - 1 - rng.usize(..d % DEFECTS_PER_FILE)];
                (other.start, other.span)
            } else {
                (1 + rng.u32(..FILE_LINES), rng.u32(..10))
            };
            let core: Vec<usize> = (0..CORE_WORDS).map(|_| zipf.sample(&mut rng)).collect();
            let identifiers: Vec<usize> = (0..1 + rng.usize(..2))
                .map(|_| ids.take(&mut rng, &zipf, k))
                .collect();
            let code: Vec<String> = (0..5)
                .map(|i| {
                    let id = &ids.names[identifiers[i % identifiers.len()]];
                    format!(
                        "let {} = {id}.{}({}, {});",
                        word(zipf.sample(&mut rng)),
                        word(core[i % CORE_WORDS]),
                        word(zipf.sample(&mut rng)),
                        rng.u32(..1000)
                    )
                })
                .collect();
            defects.push(Defect {
                file,
                start,
                span,
                core,
                identifiers,
                code,
            });
            reporters_of.push(k);
            for a in chosen {
                by_agent[a].push(d);
            }
        }

        let mut texts = Vec::with_capacity(agents);
        let mut index_of = Vec::with_capacity(agents);
        for (a, list) in by_agent.iter_mut().enumerate() {
            rng.shuffle(list);
            let mut out = String::from(
                "### Executive Summary\n\nGenerated review.\n\n### Findings\n\n#### Important Issues\n\n",
            );
            let mut index = HashMap::new();
            for (j, &d) in list.iter().enumerate() {
                let defect = &defects[d];
                let pick = |rng: &mut fastrand::Rng, core_share: f64| {
                    if rng.f64() < core_share {
                        word(defect.core[rng.usize(..CORE_WORDS)])
                    } else {
                        word(zipf.sample(rng))
                    }
                };
                let ident = |rng: &mut fastrand::Rng| {
                    ids.names[defect.identifiers[rng.usize(..defect.identifiers.len())]].clone()
                };
                let mut title: Vec<String> = (0..3 + rng.usize(..3))
                    .map(|_| pick(&mut rng, 0.7))
                    .collect();
                title.insert(rng.usize(..=title.len()), format!("`{}`", ident(&mut rng)));
                let mut body = String::new();
                for w in 0..25 + rng.usize(..35) {
                    if w > 0 {
                        body.push(' ');
                    }
                    let r = rng.f64();
                    if r < 0.06 {
                        let _ = write!(body, "`{}`", ident(&mut rng));
                    } else if r < 0.08 {
                        let _ = write!(body, "`{}`", COMMON[rng.usize(..COMMON.len())]);
                    } else {
                        body.push_str(&pick(&mut rng, 0.35));
                    }
                }
                let dir = word(defect.file % 97);
                let path = if shape == Shape::OneLine {
                    "src/hot.rs".to_string()
                } else if rng.f64() < 0.33 {
                    format!("{}_{}.rs", word(defect.file), defect.file)
                } else {
                    format!("src/{dir}/{}_{}.rs", word(defect.file), defect.file)
                };
                let (start, end) = if shape == Shape::OneLine {
                    (defect.start, defect.start + defect.span)
                } else {
                    let start = (defect.start as i64 + rng.i64(-3..=3)).max(1) as u32;
                    (start, start + defect.span + rng.u32(..3))
                };
                let id = format!("I{}", j + 1);
                let _ = write!(
                    out,
                    "{id}. **{}** — `{path}:{start}-{end}` (important, regression)\n\n",
                    title.join(" ")
                );
                if rng.f64() < 0.67 {
                    let first = rng.usize(..defect.code.len());
                    let lines = (1 + rng.usize(..3)).min(defect.code.len() - first);
                    let _ = write!(
                        out,
                        "```rust\n{}\n```\n\n",
                        defect.code[first..first + lines].join("\n")
                    );
                }
                let _ = write!(out, "{body}.\n\nFix: {}.\n\n", pick(&mut rng, 0.5));
                index.insert(id, j);
            }
            out.push_str("### Coverage Summary\n\n- `src/lib.rs` — Reviewed\n");
            texts.push(out);
            index_of.push(index);
            let _ = a;
        }
        Data {
            texts,
            defect_of: by_agent,
            index_of,
            reporters: reporters_of,
        }
    }
}

/// The same change in its fifth round: four earlier reports of the generated reviews, each with
/// a Resolution that declines every third finding and fixes every third, so matching has a
/// decision to look up for most findings; its consolidation time against a first round's.
fn fifth_round(n: usize) {
    use deep_review::rounds::history::{assemble, from_report};
    use deep_review::types::{Action, Resolution, ResolutionItem};
    println!("== a fifth round, {AGENTS} agents x {n} findings, four earlier reports ==");
    let g = Generated::new(n, 7, generator::Shape::Realistic);
    let reviews = g.reviews();
    let (first, earlier) = median_time(3, || consolidate(&reviews, &ConsolidateOptions::default()));
    let reads = (1..=4)
        .map(|round| {
            let mut report = earlier.clone();
            report.meta.round = Some(round);
            report.meta.id = format!("r{round}");
            report.resolution = Some(Resolution {
                items: report
                    .findings
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| i % 3 != 2)
                    .map(|(i, f)| ResolutionItem {
                        id: f.id.clone(),
                        title: f.title.clone(),
                        action: if i % 3 == 0 {
                            Action::Skipped
                        } else {
                            Action::Fixed
                        },
                        reason: "generated".into(),
                    })
                    .collect(),
                ..Resolution::default()
            });
            from_report(&report)
        })
        .collect();
    let opts = ConsolidateOptions {
        history: assemble(None, reads, Vec::new()),
        ..ConsolidateOptions::default()
    };
    let earlier_findings = opts.history.findings().count();
    let (fifth, report) = median_time(3, || consolidate(&reviews, &opts));
    println!(
        "first round {:.3}s wall, {:.3}s CPU; fifth round {:.3}s wall, {:.3}s CPU, against {earlier_findings} earlier findings ({} declined, {} resolved, {} persisting)",
        first.wall.as_secs_f64(),
        first.cpu.as_secs_f64(),
        fifth.wall.as_secs_f64(),
        fifth.cpu.as_secs_f64(),
        report.prior_rounds.declined.len(),
        report.prior_rounds.resolved.len(),
        report.prior_rounds.persisting.len(),
    );
}
