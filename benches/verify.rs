//! The verify stage on generated repositories: its cost must follow the findings, not the
//! repository, and stay linear on hostile quotes.
//!
//! Three scenarios, each measured in a child process of this binary (so its peak memory is its
//! own), five samples, the median printed:
//!
//! - **findings**: 600 findings of 3 agents against a 50,000-file repository (500 directories of
//!   100 Go files of 6 functions, 95 lines and 1.75 kB each: 87 MB of text), a change of 200
//!   files. The findings mix quotes at the cited lines, lines off by 14, quotes that are not
//!   there, partial paths, findings without quotes, regressions on untouched lines, files
//!   outside the change with elided quotes, and 10% paths that do not exist (half of them with a
//!   quote that is elsewhere in the tree, half with one that is nowhere). Every finding names
//!   identifiers: common ones (`err`, `fmt.Errorf`, `compute`), ones of its file, and one that
//!   exists nowhere. Target: < 1 s.
//! - **big change**: the same repository, a change of 20,000 files, one regression finding on
//!   lines the change did not touch (so the change's added lines are searched for a call).
//! - **hostile elision**: 8 findings, each quoting `},` / `...` / `x();` (and variants)
//!   against a file of 100,000 repetitive lines. Target: < 2 s, < 200 MB.
//!
//! - **generated**: the shared generator's 50,000-file repository and its 600 findings (some
//!   citing paths that do not exist, some naming names every file has, each naming one that
//!   exists nowhere, so the whole tree is searched), verification as the stage (reading the
//!   blobs from the repository, its object store in process, and reading the files from a
//!   checkout of head made as dispatch makes the agents' one, as `run` does) and as the `consolidate --repo` command, each beside one
//!   `git cat-file --batch` pass over the head tree's blobs (its floor), run alternately;
//!   skipped, saying so, without `../shared`.
//!
//! Run with `nice cargo bench --bench verify` (release). The repositories are written with
//! `git fast-import`, so making them takes seconds. `VERIFY_BENCH_ONLY=findings,hostile` runs
//! some scenarios, `VERIFY_BENCH_SAMPLES=1` fewer samples.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../tests/integration/support/bench_gen.rs"]
mod bench_gen;

use deep_review::target::diff::changed_files;
use deep_review::types::{Category, CodeSnippet, Finding, Location, Review, Severity};
use deep_review::verify::{VerifyContext, verify_reviews_with_changes};

/// The allocator of the `deep-review` binary, so the stage measured in this process's children
/// costs what it costs there.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const DIRS: usize = 500;
const FILES_PER_DIR: usize = 100;
const FUNCS_PER_FILE: usize = 6;
const SMALL_CHANGE: usize = 200;
const BIG_CHANGE: usize = 20_000;
const AGENTS: [&str; 3] = ["claude", "codex", "gemini"];
const FINDINGS_PER_AGENT: usize = 200;
const HOSTILE_LINES: usize = 100_000;
const HOSTILE_FINDINGS: usize = 8;
/// Samples per scenario (`VERIFY_BENCH_SAMPLES` overrides).
const SAMPLES: usize = 5;
/// The fast-import mark of the base commit (above every blob's).
const BASE_MARK: usize = 1_000_000_000;

fn file_path(d: usize, f: usize) -> String {
    format!("pkg/mod{d:03}/file{f:03}.go")
}

/// A Go file of `FUNCS_PER_FILE` functions of 15 lines each (a doc comment, error handling,
/// a log line), after a 7-line header.
fn file_text(d: usize, f: usize) -> String {
    let mut s = format!("package mod{d:03}\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n)\n\n");
    for k in 0..FUNCS_PER_FILE {
        s.push_str(&format!(
            "// handle_{d}_{f}_{k} validates the request and logs the outcome.\n\
             func handle_{d}_{f}_{k}(req Request) error {{\n\
             \tif req.ID == {k} {{\n\
             \t\treturn errInvalid\n\
             \t}}\n\
             \tvalue, err := compute(req, {f})\n\
             \tif err != nil {{\n\
             \t\treturn fmt.Errorf(\"handle: %w\", err)\n\
             \t}}\n\
             \tlog.Printf(\"handled %d\", value)\n\
             \treturn nil\n\
             }}\n\n"
        ));
    }
    s
}

/// The first line of function `k` (1-based): 7 header lines, then 14 lines per function, the
/// doc comment first.
fn func_line(k: usize) -> usize {
    8 + k * 14 + 1
}

/// The head version of a changed file: a retry loop inserted at the top of its fourth function
/// (lines 52-54).
fn changed_text(d: usize, f: usize) -> String {
    let anchor = format!("func handle_{d}_{f}_3(req Request) error {{\n");
    file_text(d, f).replace(
        &anchor,
        &format!(
            "{anchor}\tfor attempt := 0; attempt < {f}; attempt++ {{\n\t\tretryRequest(req, attempt)\n\t}}\n"
        ),
    )
}

/// Files of the change of `n` files, spread over the repository: the `i`-th is file
/// `i * 7919 mod 50,000` (7919 is prime to 50,000, so no file repeats).
fn change(n: usize) -> Vec<(usize, usize)> {
    (0..n)
        .map(|i| {
            let k = i * 7919 % (DIRS * FILES_PER_DIR);
            (k % DIRS, k / DIRS)
        })
        .collect()
}

/// Writes commits with `git fast-import`: `base`, then `small` (200 files changed) and `big`
/// (20,000 files changed), both on top of `base`.
fn make_repo(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import starts");
    let mut w = std::io::BufWriter::new(child.stdin.take().expect("stdin"));
    let mut mark = 0usize;
    let mut blob = |w: &mut dyn Write, text: &str| -> usize {
        mark += 1;
        write!(w, "blob\nmark :{mark}\ndata {}\n{text}\n", text.len()).expect("write");
        mark
    };
    let mut files = Vec::new();
    for d in 0..DIRS {
        for f in 0..FILES_PER_DIR {
            files.push((file_path(d, f), blob(&mut w, &file_text(d, f))));
        }
    }
    let small: Vec<_> = change(SMALL_CHANGE)
        .into_iter()
        .map(|(d, f)| (file_path(d, f), blob(&mut w, &changed_text(d, f))))
        .collect();
    let big: Vec<_> = change(BIG_CHANGE)
        .into_iter()
        .map(|(d, f)| (file_path(d, f), blob(&mut w, &changed_text(d, f))))
        .collect();
    let commit = |w: &mut dyn Write,
                  branch: &str,
                  from: Option<&str>,
                  msg: &str,
                  files: &[(String, usize)]| {
        write!(
            w,
            "commit refs/heads/{branch}\nmark :{}\ncommitter A <a@example.com> 1700000000 +0000\ndata {}\n{msg}\n",
            BASE_MARK + usize::from(from.is_some()) + usize::from(branch == "big"),
            msg.len()
        )
        .expect("write");
        if let Some(from) = from {
            writeln!(w, "from {from}").expect("write");
        }
        for (path, m) in files {
            writeln!(w, "M 100644 :{m} {path}").expect("write");
        }
        writeln!(w).expect("write");
    };
    commit(&mut w, "main", None, "base", &files);
    commit(
        &mut w,
        "small",
        Some(&format!(":{BASE_MARK}")),
        "retry busy requests",
        &small,
    );
    commit(
        &mut w,
        "big",
        Some(&format!(":{BASE_MARK}")),
        "retry every request",
        &big,
    );
    drop(w);
    assert!(child.wait().expect("fast-import ends").success());
}

/// The hostile repository: one file of 100,000 repetitive lines (`{`, `id: N,`, `},`).
fn make_hostile_repo(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    let mut text = String::from("const table = [\n");
    let mut n = 1;
    while n < HOSTILE_LINES - 1 {
        text.push_str("  {\n    id: 1,\n  },\n");
        n += 3;
    }
    text.push_str("];\n");
    std::fs::write(dir.join("table.js"), "const table = [];\n").expect("write");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "base"]);
    std::fs::write(dir.join("table.js"), text).expect("write");
    git(dir, &["commit", "-qam", "table"]);
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "A")
        .env("GIT_AUTHOR_EMAIL", "a@example.com")
        .env("GIT_COMMITTER_NAME", "A")
        .env("GIT_COMMITTER_EMAIL", "a@example.com")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn finding(id: String, title: String, loc: &str, code: Option<String>) -> Finding {
    let mut f = Finding::new(id, title);
    f.severity = Some(Severity::Important);
    f.category = Some(Category::Regression);
    f.locations.push(loc.parse::<Location>().expect("location"));
    f.code = code.map(|code| CodeSnippet {
        language: Some("go".into()),
        code,
    });
    f
}

/// The 600 findings of the `findings` scenario.
fn findings_600() -> Vec<Review> {
    let changed = change(SMALL_CHANGE);
    let mut reviews = Vec::new();
    for (a, agent) in AGENTS.iter().enumerate() {
        let mut findings = Vec::new();
        for i in 0..FINDINGS_PER_AGENT {
            let n = a * FINDINGS_PER_AGENT + i;
            let (d, f) = changed[n % changed.len()];
            let path = file_path(d, f);
            let retry = format!(
                "for attempt := 0; attempt < {f}; attempt++ {{\n    retryRequest(req, attempt)\n}}"
            );
            let (loc, code): (String, Option<String>) = match n % 10 {
                // Quote at the cited lines.
                0 | 7 => (format!("{path}:52-54"), Some(retry)),
                // Lines off by 14.
                1 => (format!("{path}:38-40"), Some(retry)),
                // A quote that is not there.
                2 => (
                    format!("{path}:52"),
                    Some("for attempt := 1; attempt <= max; attempt++ {".to_string()),
                ),
                // Partial path (no `pkg/`), untouched function (pre-existing).
                3 => (
                    format!("mod{d:03}/file{f:03}.go:14-15"),
                    Some(format!("value, err := compute(req, {f})\nif err != nil {{")),
                ),
                // No quote: lines only.
                4 => (format!("{path}:60-62"), None),
                // A file outside the change, with an elided quote.
                5 | 8 => {
                    let (d2, f2) = ((d + 1) % DIRS, (f + 1) % FILES_PER_DIR);
                    (
                        format!(
                            "{}:{}-{}",
                            file_path(d2, f2),
                            func_line(0) + 1,
                            func_line(0) + 10
                        ),
                        Some(format!(
                            "func handle_{d2}_{f2}_0(req Request) error {{\n    // ...\n    return nil"
                        )),
                    )
                }
                // A path that does not exist: its quote is in an unchanged file of the tree...
                6 if n % 20 == 6 => {
                    let (d2, f2) = ((d + 250) % DIRS, (f + 50) % FILES_PER_DIR);
                    (
                        format!("pkg/gone{d2:03}/removed{f2:03}.go:20"),
                        Some(format!("func handle_{d2}_{f2}_4(req Request) error {{")),
                    )
                }
                // ... or nowhere.
                _ => (
                    format!("pkg/gone{d:03}/missing{f:03}.go:20"),
                    Some(format!("return retryWithBackoff(ctx, req, {n})")),
                ),
            };
            let mut finding = finding(format!("I{}", i + 1), format!("finding {n}"), &loc, code);
            finding.explanation = format!(
                "`handle_{d}_{f}_3` calls `retryRequest` and `compute`, then returns `err` \
                 through `fmt.Errorf`; `validateAttempt{n}` is never called."
            );
            findings.push(finding);
        }
        reviews.push(Review {
            agent: agent.to_string(),
            findings,
            ..Review::default()
        });
    }
    reviews
}

/// The one regression finding of the `big change` scenario: untouched lines of a changed file.
fn one_regression() -> Vec<Review> {
    let (d, f) = change(BIG_CHANGE)[4321];
    let mut finding = finding(
        "I1".into(),
        "errors are wrapped twice".into(),
        &format!(
            "{}:{}-{}",
            file_path(d, f),
            func_line(1) + 5,
            func_line(1) + 7
        ),
        Some(format!(
            "value, err := compute(req, {f})\nif err != nil {{\n    return fmt.Errorf(\"handle: %w\", err)"
        )),
    );
    finding.explanation = format!("`handle_{d}_{f}_1` wraps `err` again.");
    vec![Review {
        agent: "claude".into(),
        findings: vec![finding],
        ..Review::default()
    }]
}

/// The hostile findings: elided quotes whose anchor line (`},`, `{`) is on every third line.
fn hostile_findings() -> Vec<Review> {
    let quotes = [
        "},\n...\nx();",
        "{\n    id: 1,\n...\nx();",
        "},\n// ...\n},\n...\nnever_there();",
        "id: 1,\n...\n},\n...\n];\n...\nx();",
    ];
    let findings = (0..HOSTILE_FINDINGS)
        .map(|i| {
            finding(
                format!("I{}", i + 1),
                "the table is wrong".into(),
                &format!("table.js:{}", 1000 + i * 7000),
                Some(quotes[i % quotes.len()].to_string()),
            )
        })
        .collect();
    vec![Review {
        agent: "claude".into(),
        findings,
        ..Review::default()
    }]
}

/// The shared generator's reviews of the generated repository (written beside it).
fn generated_reviews(repo: &Path) -> Vec<Review> {
    let dir = repo.with_file_name("generated-reviews");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the generated reviews")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let name = p.file_stem().and_then(|s| s.to_str()).expect("a name");
            deep_review::parse::read_review_file(name, p).expect("a review")
        })
        .collect()
}

/// The floor of a search of the whole tree: one `git cat-file --batch` pass over every blob of
/// `rev`'s tree, its output thrown away. Wall and CPU time (git's).
fn cat_file_floor(repo: &Path, rev: &str) -> (Duration, Duration) {
    let oids = repo.with_file_name("head-blobs.txt");
    if !oids.exists() {
        let listing = git(repo, &["ls-tree", "-r", rev]);
        let list: String = listing
            .lines()
            .filter_map(|l| l.split_whitespace().nth(2).filter(|_| l.contains(" blob ")))
            .map(|o| format!("{o}\n"))
            .collect();
        std::fs::write(&oids, list).expect("write the blob list");
    }
    let start = Instant::now();
    let child = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["cat-file", "--batch"])
        .stdin(std::fs::File::open(&oids).expect("the blob list"))
        .stdout(Stdio::null())
        .spawn()
        .expect("git cat-file starts");
    let (cpu, _) = wait_with_usage(child);
    (start.elapsed(), cpu)
}

/// Waits for `child`: its CPU time (user + system, with its own children) and peak RSS.
#[allow(
    clippy::zombie_processes,
    reason = "reaped with wait4, which also gives its rusage"
)]
fn wait_with_usage(child: std::process::Child) -> (Duration, u64) {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child failed"
    );
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (
        Duration::from_secs_f64(seconds(usage.ru_utime) + seconds(usage.ru_stime)),
        usage.ru_maxrss as u64 * 1024,
    )
}

/// The shared generator's 50,000-file repository (`gen_repo.py`, branch `feat` changing 1,000
/// files) and its reviews (`gen_reviews.py repo`: 3 agents x 200 findings, 10% citing a path
/// that does not exist, 5% naming `fmt.Errorf` / `context.Context`): verification, as the
/// stage and as the `consolidate --repo` command, each beside one `git cat-file --batch` pass
/// over the head tree (the least a search of the whole tree reads), run alternately so both
/// see the same load.
fn generated(dir: &Path) {
    let Some(scripts) = bench_gen::generators() else {
        println!("generated      skipped: ../shared/bench-gen is absent (the shared generators)\n");
        return;
    };
    let repo = dir.join("generated");
    let reviews = dir.join("generated-reviews");
    if !repo.join(".git").exists() && !repo.join("HEAD").exists() {
        let start = Instant::now();
        bench_gen::repo(
            &scripts,
            &repo,
            &[
                "--files",
                "50000",
                "--lines",
                "60",
                "--branch",
                "feat:1000:8",
            ],
        );
        bench_gen::reviews(
            &scripts,
            &reviews,
            &[
                "repo",
                "--repo",
                repo.to_str().expect("path"),
                "--rev",
                "feat",
                "--base",
                "main",
                "--agents",
                "3",
                "--findings",
                "200",
                "--missing",
                "0.1",
                "--common",
                "0.05",
            ],
        );
        eprintln!(
            "generated repository and reviews in {:.1} s",
            start.elapsed().as_secs_f64()
        );
    }
    let samples = std::env::var("VERIFY_BENCH_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SAMPLES)
        .max(1);
    let raws: Vec<String> = std::fs::read_dir(&reviews)
        .expect("reviews")
        .filter_map(|e| {
            let p = e.ok()?.path();
            let name = p.file_stem()?.to_str()?.to_string();
            (p.extension()? == "md").then(|| format!("{name}={}", p.display()))
        })
        .collect();
    let bin = env!("CARGO_BIN_EXE_deep-review");
    let checkout = head_checkout(&repo, "feat");
    let (mut stage, mut command, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    let mut alone: Vec<(Duration, Duration)> = Vec::new();
    let mut from_checkout: Vec<(Duration, Duration, String)> = Vec::new();
    for _ in 0..samples {
        floor.push(cat_file_floor(&repo, "feat"));
        let s = sample("generated", &repo);
        stage.push((s.took, s.cpu, s.counts));
        alone.push((s.took - s.listed, s.stage_cpu));
        let s = sample("generated-checkout", &repo);
        from_checkout.push((s.took - s.listed, s.stage_cpu, s.counts));
        let start = Instant::now();
        let mut cmd = Command::new(bin);
        cmd.args(["consolidate", "--format", "json", "--repo"])
            .arg(&repo)
            .args(["--head", "feat", "--base", "main"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for r in &raws {
            cmd.arg("--raw").arg(r);
        }
        let (cpu, rss) = wait_with_usage(cmd.spawn().expect("deep-review starts"));
        command.push((start.elapsed(), cpu, rss));
    }
    let range = |v: &mut Vec<f64>| -> (f64, f64, f64) {
        v.sort_by(f64::total_cmp);
        (v[0], v[v.len() / 2], v[v.len() - 1])
    };
    let mut fw: Vec<f64> = floor.iter().map(|f| f.0.as_secs_f64()).collect();
    let mut fc: Vec<f64> = floor.iter().map(|f| f.1.as_secs_f64()).collect();
    let (fw, fc) = (range(&mut fw), range(&mut fc));
    // A figure beside the floor, and what it measures (`note`, on a line of its own).
    let show = |name: &str, note: &str, wall: &mut Vec<f64>, cpu: &mut Vec<f64>| {
        let (w, c) = (range(wall), range(cpu));
        println!(
            "{name:<14} wall {:.2}-{:.2} s (median {:.2}), CPU {:.2}-{:.2} s (median {:.2}) with git\n\
             {:<14} ratio to the floor (medians): wall {:.2}, CPU {:.2}",
            w.0,
            w.2,
            w.1,
            c.0,
            c.2,
            c.1,
            "",
            w.1 / fw.1,
            c.1 / fc.1
        );
        if !note.is_empty() {
            println!("{:<14} ({note})", "");
        }
    };
    println!(
        "generated      the shared generator's repository: 50,000 files, change of 1,000; 600 findings (10% missing paths, 5% common names); {samples} runs each, alternating\n\
         floor          one `git cat-file --batch` pass over the head tree's blobs: wall {:.2}-{:.2} s (median {:.2}), CPU {:.2}-{:.2} s (median {:.2})",
        fw.0, fw.2, fw.1, fc.0, fc.2, fc.1
    );
    let mut sw: Vec<f64> = stage.iter().map(|s| s.0.as_secs_f64()).collect();
    let mut sc: Vec<f64> = stage.iter().map(|s| s.1.as_secs_f64()).collect();
    let mut aw: Vec<f64> = alone.iter().map(|s| s.0.as_secs_f64()).collect();
    let mut ac: Vec<f64> = alone.iter().map(|s| s.1.as_secs_f64()).collect();
    show(
        "verify (repo)",
        "the stage given the changed files, as `run` gives them, reading the blobs from the repository: its object store in process",
        &mut aw,
        &mut ac,
    );
    let mut kw: Vec<f64> = from_checkout.iter().map(|s| s.0.as_secs_f64()).collect();
    let mut kc: Vec<f64> = from_checkout.iter().map(|s| s.1.as_secs_f64()).collect();
    show(
        "from checkout",
        "the same, reading the files from the agents' checkout of head as `run` does, each hashed to its blob id",
        &mut kw,
        &mut kc,
    );
    if from_checkout.last().map(|s| &s.2) != stage.last().map(|s| &s.2) {
        println!(
            "{:<14} DIFFERENT RESULTS from the checkout: {}",
            "",
            from_checkout.last().map_or("", |s| s.2.as_str())
        );
    }
    show(
        "verify stage",
        "listing the change's 1,000 files with `git diff` included",
        &mut sw,
        &mut sc,
    );
    let mut cw: Vec<f64> = command.iter().map(|s| s.0.as_secs_f64()).collect();
    let mut cc: Vec<f64> = command.iter().map(|s| s.1.as_secs_f64()).collect();
    show("command", "", &mut cw, &mut cc);
    let rss = command.iter().map(|s| s.2).max().unwrap_or(0);
    println!(
        "{:<14} `consolidate --repo` peak RSS {:.0} MB; {}\n",
        "",
        rss as f64 / 1e6,
        stage.last().map_or("", |s| s.2.as_str())
    );
    drop(checkout);
}

/// A checkout of `rev` beside `repo`, made as dispatch makes the agents' shared one (a
/// repository borrowing `repo`'s objects, the commit checked out with `reset --hard`), for
/// verification to read files from as `run` does. Removed when dropped.
fn head_checkout(repo: &Path, rev: &str) -> deep_review::dispatch::worktree::Worktree {
    let path = repo.with_file_name("generated-checkout");
    if path.exists() {
        std::fs::remove_dir_all(&path).expect("remove an old checkout");
    }
    let sha = git(repo, &["rev-parse", rev]);
    let start = Instant::now();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let checkout = runtime
        .block_on(deep_review::dispatch::worktree::Worktree::borrowing(
            repo,
            &sha,
            &path,
            &tokio_util::sync::CancellationToken::new(),
        ))
        .expect("the checkout of head");
    eprintln!(
        "checkout of {rev} made in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    checkout
}

/// Runs one scenario in this process (the child) and prints `seconds counts`.
fn child(scenario: &str, repo: &Path) {
    let (head, base, mut reviews) = match scenario {
        "generated" | "generated-checkout" => ("feat", "main", generated_reviews(repo)),
        "findings" => ("small", "main", findings_600()),
        "big-change" => ("big", "main", one_regression()),
        "hostile" => ("HEAD", "HEAD~1", hostile_findings()),
        other => panic!("unknown scenario {other}"),
    };
    // `run` reads files from the agents' checkout of head (made by `generated`, beside it).
    let checkout =
        (scenario == "generated-checkout").then(|| repo.with_file_name("generated-checkout"));
    let ctx = VerifyContext {
        repo: repo.to_path_buf(),
        head: head.into(),
        base: Some(base.into()),
        checkout,
    };
    // The change's files as the target stage lists them (`run` passes them in; `consolidate
    // --repo` lists them inside `verify_reviews`), then the verify stage.
    let start = Instant::now();
    let changed = changed_files(repo, base, head).expect("the change lists");
    let listed = start.elapsed();
    let listing_cpu = cpu_with_children();
    let outcome = verify_reviews_with_changes(&ctx, changed, &mut reviews).expect("verify runs");
    let took = start.elapsed();
    let missing = reviews
        .iter()
        .flat_map(|r| &r.findings)
        .filter_map(|f| f.verification.as_ref())
        .filter(|v| !v.symbols_missing.is_empty())
        .count();
    // The CPU time of the stage alone (this process and its git children after the change
    // was listed) is what `run` pays: the target stage lists the change there.
    println!(
        "{:.6}\t{:.6}\t{:.6}\t{}\t{}; {} changed files; {missing} with missing symbols",
        took.as_secs_f64(),
        listed.as_secs_f64(),
        (cpu_with_children() - listing_cpu).as_secs_f64(),
        own_peak_rss(),
        outcome.counts,
        outcome.changed_files.len()
    );
}

/// CPU time (user + system) of this process and of the children it waited for.
fn cpu_with_children() -> Duration {
    let of = |who| {
        // SAFETY: rusage is plain data that getrusage fills.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut u) };
        let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        s(u.ru_utime) + s(u.ru_stime)
    };
    Duration::from_secs_f64(of(libc::RUSAGE_SELF) + of(libc::RUSAGE_CHILDREN))
}

/// This process's own peak resident memory in bytes (`VmHWM`), without its git children.
fn own_peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// Runs the scenario in a child process: its time (measured inside) and its peak RSS.
#[allow(
    clippy::zombie_processes,
    reason = "reaped with wait4, which also gives its rusage"
)]
fn sample(scenario: &str, repo: &Path) -> Sample {
    let exe = std::env::current_exe().expect("own path");
    let child = Command::new(exe)
        .args(["--verify-child", scenario])
        .arg(repo)
        .stdout(Stdio::piped())
        .spawn()
        .expect("child starts");
    let pid = child.id() as libc::pid_t;
    let mut stdout = child.stdout.expect("stdout");
    let mut out = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut out).expect("child output");
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child failed: {out}"
    );
    let mut fields = out.trim().splitn(5, '\t');
    let mut secs = || -> Duration {
        Duration::from_secs_f64(fields.next().and_then(|s| s.parse().ok()).expect("seconds"))
    };
    let (took, listed, stage_cpu) = (secs(), secs(), secs());
    let own_rss = fields
        .next()
        .and_then(|s| s.parse().ok())
        .expect("peak RSS");
    let counts = fields.next().expect("counts").to_string();
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Sample {
        took,
        listed,
        stage_cpu,
        cpu: Duration::from_secs_f64(seconds(usage.ru_utime) + seconds(usage.ru_stime)),
        own_rss,
        max_rss: usage.ru_maxrss as u64 * 1024,
        counts,
    }
}

/// One run of a scenario.
struct Sample {
    /// Listing the change's files and verifying.
    took: Duration,
    /// Of which listing the change's files (the target stage's `git diff`).
    listed: Duration,
    /// CPU time of verification alone, with its git processes (after the listing).
    stage_cpu: Duration,
    /// CPU time of the whole child and its git processes (user + system): less sensitive than
    /// wall time to what else the machine runs.
    cpu: Duration,
    /// The verifying process's peak resident memory.
    own_rss: u64,
    /// The largest peak of the process and the git processes it ran (what `wait4` reports).
    max_rss: u64,
    counts: String,
}

fn measure(name: &str, what: &str, scenario: &str, repo: &Path) {
    let only = std::env::var("VERIFY_BENCH_ONLY").unwrap_or_default();
    if !only.is_empty() && !only.split(',').any(|s| s == scenario) {
        return;
    }
    let samples = std::env::var("VERIFY_BENCH_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SAMPLES)
        .max(1);
    let mut runs: Vec<Sample> = (0..samples).map(|_| sample(scenario, repo)).collect();
    runs.sort_by_key(|r| r.took);
    let median = &runs[samples / 2];
    let max_rss = runs.iter().map(|r| r.max_rss).max().unwrap_or(0);
    let own_rss = runs.iter().map(|r| r.own_rss).max().unwrap_or(0);
    let all: Vec<String> = runs
        .iter()
        .map(|r| format!("{:.0}", r.took.as_secs_f64() * 1000.0))
        .collect();
    println!(
        "{name:<14} {what}\n{:<14} median {:.0} ms, of which {:.0} ms listing the change's files \
         (samples {} ms), CPU {:.0} ms with git\n{:<14} peak RSS {:.0} MB (with its git processes {:.0} MB)\n{:<14} {}\n",
        "",
        median.took.as_secs_f64() * 1000.0,
        median.listed.as_secs_f64() * 1000.0,
        all.join(" / "),
        median.cpu.as_secs_f64() * 1000.0,
        "",
        own_rss as f64 / 1e6,
        max_rss as f64 / 1e6,
        "",
        median.counts
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--verify-child") {
        child(&args[at + 1], &PathBuf::from(&args[at + 2]));
        return;
    }
    // `VERIFY_BENCH_DIR` keeps the repositories there (made once, reused), for profiling a
    // scenario with `verify --verify-child <scenario> <dir>/big`.
    let temp = tempfile::tempdir().expect("temp dir");
    let dir = std::env::var_os("VERIFY_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| temp.path().to_path_buf());
    let repo = dir.join("big");
    let hostile = dir.join("hostile");
    let start = Instant::now();
    let only = std::env::var("VERIFY_BENCH_ONLY").unwrap_or_default();
    let wanted = |s: &str| only.is_empty() || only.split(',').any(|o| o == s);
    if (wanted("findings") || wanted("big-change")) && !repo.join(".git").exists() {
        std::fs::create_dir_all(&repo).expect("mkdir");
        make_repo(&repo);
    }
    if wanted("hostile") && !hostile.join(".git").exists() {
        std::fs::create_dir_all(&hostile).expect("mkdir");
        make_hostile_repo(&hostile);
    }
    eprintln!(
        "repositories made in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    if wanted("generated") {
        generated(&dir);
    }
    measure(
        "findings",
        "600 findings (60 with paths that do not exist), 50,000 files (87 MB), change of 200 files",
        "findings",
        &repo,
    );
    measure(
        "big change",
        "1 regression finding on untouched lines, change of 20,000 files (diff included)",
        "big-change",
        &repo,
    );
    measure(
        "hostile",
        "8 elided quotes against a file of 100,000 repetitive lines",
        "hostile",
        &hostile,
    );
}
