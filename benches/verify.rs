//! Verify 3 agents x 200 findings against a generated repository of 5,000 files.
//!
//! Target: under 1 s per run. Run with `cargo bench --bench verify` (or, on the shared
//! machine where release builds are off limits, `cargo bench --bench verify --profile dev`).
//!
//! The repository is made once with the git CLI (base commit, then a head commit changing 200
//! files); each sample verifies fresh copies of the same 600 findings: quotes at the right
//! lines, quotes at the wrong lines, quotes that are not there, bare file names, findings
//! without quotes, regressions on untouched lines, and identifiers that do and do not exist.

#[path = "../tests/integration/support/repo.rs"]
mod repo_support;

use std::sync::LazyLock;

use deep_review::types::{Category, CodeSnippet, Finding, Location, Review, Severity};
use deep_review::verify::{VerifyContext, verify_reviews};
use repo_support::Repo;

const DIRS: usize = 50;
const FILES_PER_DIR: usize = 100;
const FUNCS_PER_FILE: usize = 10;
const CHANGED: usize = 200;
const AGENTS: [&str; 3] = ["claude", "codex", "gemini"];
const FINDINGS_PER_AGENT: usize = 200;

struct Fixture {
    _repo: Repo,
    ctx: VerifyContext,
    reviews: Vec<Review>,
}

fn file_path(d: usize, f: usize) -> String {
    format!("pkg/mod{d:02}/file{f:03}.go")
}

/// A Go file of `FUNCS_PER_FILE` functions, 8 lines each after a 2-line header.
fn file_text(d: usize, f: usize) -> String {
    let mut s = format!("package mod{d:02}\n\n");
    for k in 0..FUNCS_PER_FILE {
        s.push_str(&format!(
            "func handle_{d}_{f}_{k}(req Request) error {{\n\tif req.ID == {k} {{\n\t\treturn errInvalid\n\t}}\n\tvalue := compute(req, {f})\n\tlog.Printf(\"handled %d\", value)\n\treturn nil\n}}\n"
        ));
    }
    s
}

/// The head version of a changed file: a retry block inserted into its fourth function.
fn changed_text(d: usize, f: usize) -> String {
    let base = file_text(d, f);
    let anchor = format!("func handle_{d}_{f}_3(req Request) error {{\n");
    base.replace(
        &anchor,
        &format!("{anchor}\tfor attempt := 0; attempt < {f}; attempt++ {{\n\t\tretryRequest(req, attempt)\n\t}}\n"),
    )
}

fn make_fixture() -> Fixture {
    let r = Repo::new();
    for d in 0..DIRS {
        for f in 0..FILES_PER_DIR {
            r.write(&file_path(d, f), file_text(d, f));
        }
    }
    let base = r.commit("base");
    // The change: 200 files spread over all directories.
    let changed: Vec<(usize, usize)> = (0..CHANGED)
        .map(|i| (i % DIRS, i / DIRS * 7 % FILES_PER_DIR))
        .collect();
    for &(d, f) in &changed {
        r.write(&file_path(d, f), changed_text(d, f));
    }
    r.commit("head");

    let mut reviews = Vec::new();
    for (a, agent) in AGENTS.iter().enumerate() {
        let mut findings = Vec::new();
        for i in 0..FINDINGS_PER_AGENT {
            let n = a * FINDINGS_PER_AGENT + i;
            let (d, f) = changed[n % CHANGED];
            // Function 3 starts at line 3 + 3*8 = 27; the inserted loop is lines 28-30.
            let mut finding = Finding::new(format!("I{}", i + 1), format!("finding {n}"));
            finding.severity = Some(Severity::Important);
            finding.category = Some(Category::Regression);
            let path = file_path(d, f);
            let (loc, code): (String, Option<String>) = match n % 6 {
                // Quote at the cited lines.
                0 => (
                    format!("{path}:28-30"),
                    Some(format!(
                        "for attempt := 0; attempt < {f}; attempt++ {{\n    retryRequest(req, attempt)\n}}"
                    )),
                ),
                // Lines off by 14.
                1 => (
                    format!("{path}:14-16"),
                    Some(format!(
                        "for attempt := 0; attempt < {f}; attempt++ {{\n    retryRequest(req, attempt)"
                    )),
                ),
                // A quote that is not there.
                2 => (
                    format!("{path}:28"),
                    Some("for attempt := 1; attempt <= max; attempt++ {".to_string()),
                ),
                // Partial path (no `pkg/`), untouched function (pre-existing).
                3 => (
                    format!("mod{d:02}/file{f:03}.go:6-7"),
                    Some(
                        "value := compute(req, ".to_string()
                            + &f.to_string()
                            + ")\nlog.Printf(\"handled %d\", value)",
                    ),
                ),
                // No quote: lines only.
                4 => (format!("{path}:60-62"), None),
                // A file outside the change, with an elided quote.
                _ => (
                    file_path((d + 1) % DIRS, (f + 1) % FILES_PER_DIR) + ":3-10",
                    Some(format!(
                        "func handle_{}_{}_0(req Request) error {{\n    // ...\n    return nil",
                        (d + 1) % DIRS,
                        (f + 1) % FILES_PER_DIR
                    )),
                ),
            };
            finding
                .locations
                .push(loc.parse::<Location>().expect("location"));
            finding.code = code.map(|code| CodeSnippet {
                language: Some("go".into()),
                code,
            });
            finding.explanation = format!(
                "`handle_{d}_{f}_3` calls `retryRequest` and `compute`; `validateAttempt{n}` is never called."
            );
            findings.push(finding);
        }
        reviews.push(Review {
            agent: agent.to_string(),
            findings,
            ..Review::default()
        });
    }
    Fixture {
        ctx: VerifyContext {
            repo: r.path().to_path_buf(),
            head: "HEAD".into(),
            base: Some(base),
        },
        _repo: r,
        reviews,
    }
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(make_fixture);

fn main() {
    // Check the fixture once so the benchmark measures real work, not failures.
    let fx = &*FIXTURE;
    let mut reviews = fx.reviews.clone();
    let outcome = verify_reviews(&fx.ctx, &mut reviews).expect("verify runs");
    assert_eq!(outcome.changed_files.len(), CHANGED);
    eprintln!(
        "verify fixture: 5,000 files, 600 findings: {}",
        outcome.counts
    );
    divan::main();
}

#[divan::bench(sample_count = 10)]
fn verify_3_agents_x_200_findings(bencher: divan::Bencher) {
    let fx = &*FIXTURE;
    bencher
        .with_inputs(|| fx.reviews.clone())
        .bench_local_values(|mut reviews| {
            verify_reviews(&fx.ctx, &mut reviews).expect("verify runs")
        });
}
