//! The parse stage on hostile and very large input: every case must stay linear (issue 10:
//! each under 2 s and 200 MB in a release build).
//!
//! Run: `cargo bench --bench parse` (all cases) or `cargo bench --bench parse -- json` (the cases
//! whose name contains `json`). Each case is generated here, parsed once, and reported with its
//! input size, the wall time and the peak of memory allocated while parsing (a counting global
//! allocator; the input itself is not counted). The check after each parse is what the result
//! must hold (every finding kept, ids unique), so a fast wrong answer is caught too.

use std::alloc::{GlobalAlloc, Layout};

use mimalloc::MiMalloc as System;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use deep_review::parse::{
    MAX_FINDINGS, parse_review, parse_review_owned, parse_review_owned_limited,
};
use deep_review::report::markdown_read::parse_report;
use deep_review::types::{Review, Severity};

/// The `deep-review` binary's allocator (mimalloc), counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = IN_USE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let grow = new_size - layout.size();
                let now = IN_USE.fetch_add(grow, Ordering::Relaxed) + grow;
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                IN_USE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// What one run cost.
struct Cost {
    wall: Duration,
    /// CPU time of the thread (user + system): the machine is shared, so wall time varies with
    /// the load while this does not.
    cpu: Duration,
    /// Peak bytes allocated above what was in use before the run.
    peak: usize,
    /// Bytes still allocated when it returned: the result itself.
    kept: usize,
}

/// The calling thread's CPU time, by `CLOCK_THREAD_CPUTIME_ID` (Linux and macOS alike;
/// `RUSAGE_THREAD` is Linux's alone).
fn thread_cpu() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes a full `timespec` into the pointer it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Runs `f` once and returns its result with what it cost.
fn measure<T>(f: impl FnOnce() -> T) -> (T, Cost) {
    let before = IN_USE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let cpu = thread_cpu();
    let t = Instant::now();
    let out = f();
    let wall = t.elapsed();
    let cpu = thread_cpu().saturating_sub(cpu);
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
    let kept = IN_USE.load(Ordering::Relaxed).saturating_sub(before);
    (
        out,
        Cost {
            wall,
            cpu,
            peak,
            kept,
        },
    )
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn report(name: &str, input: usize, cost: &Cost, what: &str) {
    println!(
        "{name:<26} input {:>6.2} MB  wall {:>7.3} s  cpu {:>7.3} s  peak {:>7.1} MB  \
         result {:>6.1} MB  {what}",
        mb(input),
        cost.wall.as_secs_f64(),
        cost.cpu.as_secs_f64(),
        mb(cost.peak),
        mb(cost.kept)
    );
}

/// Checks that ids are unique and returns how many findings there are.
fn unique_ids(r: &Review) -> usize {
    let ids: HashSet<&str> = r.findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids.len(), r.findings.len(), "finding ids must be unique");
    r.findings.len()
}

/// A JSON review of `n` findings that all carry the id `C1`.
fn json_repeated_ids(n: usize) -> String {
    let mut s = String::from("{\"agent\":\"x\",\"findings\":[");
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        s.push_str("{\"id\":\"C1\",\"title\":\"t\"}");
    }
    s.push_str("]}");
    s
}

/// A Markdown review of `n` findings that all carry the id `S1`.
fn markdown_repeated_ids(n: usize) -> String {
    let mut s = String::from("## Suggestions\n\n");
    for _ in 0..n {
        s.push_str("S1. **Same id** — `a.rs:1` (suggestion, gap)\n\nBody.\n\n");
    }
    s
}

/// The same sections, `n` times over: every finding is `I1` of its own Important Issues.
fn repeated_sections(n: usize) -> String {
    let mut s = String::new();
    for k in 0..n {
        s.push_str(&format!(
            "## Executive Summary\n\nPart {k}.\n\n## Important Issues\n\n\
             - **Leak {k}** — `src/a{k}.rs:3` (important, gap)\n\n  It leaks.\n\n\
             ## Suggestions\n\nNone.\n\n## Coverage Summary\n\n- `src/a{k}.rs` — Finding 1\n\n"
        ));
    }
    s
}

/// A realistic review grown to `bytes`: findings with code, prose, fix and diff.
fn large_review(bytes: usize) -> (String, usize) {
    let mut s = String::from(
        "## Executive Summary\n\nA long review.\n\n## Findings\n\n### Important Issues\n\n",
    );
    let mut n = 0;
    while s.len() < bytes {
        n += 1;
        s.push_str(&format!(
            "{n}. **Finding number {n}** — `src/mod{n}.rs:{n}-{}` (important, gap)\n\n\
             ```rust\nfn f{n}() {{ let x = {n}; }}\n```\n\n\
             The value `x` is never used in `f{n}`; see [mod{n}.rs#L{n}](src/mod{n}.rs#L{n}) \
             and `src/other.rs:{n}`.\n\n\
             Fix: remove it.\n\n```diff\n-    let x = {n};\n```\n\n",
            n + 3
        ));
    }
    s.push_str("## Coverage Summary\n\n- `src/lib.rs` — Reviewed\n");
    (s, n)
}

/// `n` code fences that are never closed, each followed by a heading.
fn unclosed_fences(n: usize) -> String {
    let mut s = String::from("## Findings\n\n");
    for k in 0..n {
        s.push_str(&format!(
            "1. **F{k}** — `a.rs:{k}` (important, gap)\n\n```x\ncode\n\n## Suggestions\n\n"
        ));
    }
    s
}

/// One line of `bytes` holding a finding title followed by location spans.
fn long_line(bytes: usize) -> String {
    let mut s = String::from("## Findings\n\n1. **Long** — ");
    let mut k = 0;
    while s.len() < bytes {
        k += 1;
        s.push_str(&format!("`src/a{k}.rs:{k}`, "));
    }
    s.push_str("(important, gap)\n");
    s
}

/// `n` HTML comments and `<pre>` blocks that are never closed.
fn open_html(n: usize) -> String {
    let mut s = String::from("## Important Issues\n\n");
    for k in 0..n {
        s.push_str(&format!(
            "{}. **F{k}** — `a.rs:{k}` (important, gap)\n\n<!-- note {k}\n\nBody.\n\n<pre>\nx\n\n",
            k + 1
        ));
    }
    s
}

/// A paragraph of `bytes` of unmatched emphasis and link brackets, the delimiters a Markdown
/// parser has to pair up.
fn delimiter_soup(bytes: usize) -> String {
    let mut s = String::from("## Findings\n\n1. **Soup** — `a.rs:1` (important, gap)\n\n");
    while s.len() < bytes {
        s.push_str("*a **b _c [d](e [f] ![g `h\n");
    }
    s
}

/// `n` findings written as headings, each with a short body.
fn many_headings(n: usize) -> String {
    let mut s = String::from("## Findings\n\n");
    for k in 0..n {
        s.push_str(&format!(
            "### Finding {k} — `src/a{k}.rs:{k}` (important, gap)\n\nBody {k}.\n\n"
        ));
    }
    s
}

/// One finding whose body names `n` locations, one `Location:` line each, in `n` paragraphs.
fn location_fields(n: usize) -> String {
    let mut s = String::from("## Important Issues\n\n1. **Everywhere** (important, gap)\n\n");
    for k in 0..n {
        s.push_str(&format!("Location: `src/a{k}.rs:{k}`\n\n"));
    }
    s
}

/// A report whose appendix holds `n` reviewer headings of `n` reviewers, each review holding a
/// `## Resolution` line and a heading naming another reviewer.
fn report_many_reviewers(n: usize) -> String {
    let names: Vec<String> = (0..n).map(|k| format!("Agent{k} Model {k}")).collect();
    let mut s = format!(
        "# Deep Review: x\n\n| | |\n|---|---|\n| **Reviewers** | {} |\n\n\
         ## Executive Summary\n\nx\n\n## Appendix: Original Reviews\n\n",
        names.join(", ")
    );
    for (k, name) in names.iter().enumerate() {
        s.push_str(&format!(
            "### {name}\n\n## Important Issues\n\n1. **F{k}** — `a.rs:{k}` (important, gap)\n\n\
             Body.\n\n## Resolution\n\nnot the end\n\n### {}\n\nstill {name}\n\n---\n\n",
            names[(k + 1) % n]
        ));
    }
    s.push_str("## Resolution\n\nDone.\n");
    s
}

/// What a case parses: one raw review, or a whole report.
enum Input {
    Review(String),
    Report(String),
}

/// Parses one case and prints its figures; `check` asserts what the result must hold and says
/// what it found.
fn run(name: &str, input: Input, check: impl Fn(&Review) -> String) {
    match input {
        Input::Review(text) => {
            // The reader in full, past the flood cap (`MAX_FINDINGS`): these cases measure
            // how its work grows with the input, not the cap.
            let len = text.len();
            let (r, cost) = measure(|| parse_review_owned_limited("x", text, usize::MAX));
            let what = check(&r);
            report(name, len, &cost, &what);
        }
        Input::Report(text) => {
            let (src, cost) = measure(|| parse_report(&text, "r.md"));
            let src = src.expect("the report reads");
            let findings: usize = src.reviews.iter().map(|r| r.findings.len()).sum();
            let what = format!("{} reviews, {findings} findings", src.reviews.len());
            report(name, text.len(), &cost, &what);
        }
    }
}

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f));
    println!("parse stage on hostile input (release build; one run per case)");

    let all_kept = |n: usize| {
        move |r: &Review| {
            let kept = unique_ids(r);
            assert_eq!(kept, n, "every finding is kept");
            format!("{kept} findings, ids unique")
        }
    };
    for n in [8_000, 16_000] {
        let name = format!("json_repeated_ids_{n}");
        if wanted(&name) {
            run(&name, Input::Review(json_repeated_ids(n)), all_kept(n));
        }
        let name = format!("markdown_repeated_ids_{n}");
        if wanted(&name) {
            run(&name, Input::Review(markdown_repeated_ids(n)), all_kept(n));
        }
    }
    let n = 10_000;
    let name = format!("repeated_sections_{n}");
    if wanted(&name) {
        run(&name, Input::Review(repeated_sections(n)), |r| {
            assert_eq!(r.coverage.len(), n);
            all_kept(n)(r)
        });
    }
    if wanted("pulldown_50mb") {
        let (text, _) = large_review(50 * 1024 * 1024);
        let (n, cost) = measure(|| {
            pulldown_cmark::Parser::new_ext(&text, pulldown_cmark::Options::ENABLE_TABLES)
                .into_offset_iter()
                .count()
        });
        report("pulldown_50mb", text.len(), &cost, &format!("{n} events"));
        // The same text in parts of about 1 MB, cut at blank lines.
        let (n, cost) = measure(|| {
            let mut n = 0;
            let mut rest = text.as_str();
            while !rest.is_empty() {
                let cut = rest
                    .get(1024 * 1024..)
                    .and_then(|t| t.find("\n\n"))
                    .map(|i| 1024 * 1024 + i + 2)
                    .unwrap_or(rest.len());
                n += pulldown_cmark::Parser::new_ext(
                    &rest[..cut],
                    pulldown_cmark::Options::ENABLE_TABLES,
                )
                .into_offset_iter()
                .count();
                rest = &rest[cut..];
            }
            n
        });
        report(
            "pulldown_50mb_in_parts",
            text.len(),
            &cost,
            &format!("{n} events"),
        );
    }
    if wanted("pulldown_soup_1mb") {
        let text = delimiter_soup(1024 * 1024);
        let (n, cost) = measure(|| {
            pulldown_cmark::Parser::new_ext(&text, pulldown_cmark::Options::ENABLE_TABLES)
                .into_offset_iter()
                .count()
        });
        report(
            "pulldown_soup_1mb",
            text.len(),
            &cost,
            &format!("{n} events"),
        );
        let (r, cost) = measure(|| parse_review("x", &text));
        report(
            "review_soup_1mb",
            text.len(),
            &cost,
            &format!("{}", r.findings.len()),
        );
    }
    if wanted("review_50mb") {
        let (text, n) = large_review(50 * 1024 * 1024);
        // As `read_review_file` reads a file: the review keeps the text it was given.
        let len = text.len();
        let (r, cost) = measure(|| parse_review_owned_limited("x", text, usize::MAX));
        let what = all_kept(n)(&r);
        report("review_50mb", len, &cost, &what);
        drop(r);
        // As `run` and `consolidate` read it: the first MAX_FINDINGS findings, then a warning.
        let (text, _) = large_review(50 * 1024 * 1024);
        let len = text.len();
        let (r, cost) = measure(|| parse_review_owned("x", text));
        assert_eq!(r.findings.len(), MAX_FINDINGS, "the cap holds");
        report(
            "review_50mb_capped",
            len,
            &cost,
            &format!("{} findings read, then a warning", r.findings.len()),
        );
    }
    let name = format!("unclosed_fences_{n}");
    if wanted(&name) {
        run(&name, Input::Review(unclosed_fences(n)), |r| {
            format!("{} findings, {} warnings", unique_ids(r), r.warnings.len())
        });
    }
    if wanted("long_line_5mb") {
        run(
            "long_line_5mb",
            Input::Review(long_line(5 * 1024 * 1024)),
            |r| {
                let locs = r.findings.first().map(|f| f.locations.len()).unwrap_or(0);
                format!("{locs} locations")
            },
        );
    }
    let name = format!("open_html_{n}");
    if wanted(&name) {
        run(&name, Input::Review(open_html(n)), |r| {
            format!("{} findings", unique_ids(r))
        });
    }
    if wanted("delimiter_soup_5mb") {
        run(
            "delimiter_soup_5mb",
            Input::Review(delimiter_soup(5 * 1024 * 1024)),
            |r| format!("{} findings", unique_ids(r)),
        );
    }
    let n = 100_000;
    let name = format!("headings_{n}");
    if wanted(&name) {
        run(&name, Input::Review(many_headings(n)), all_kept(n));
    }
    let name = format!("location_fields_{n}");
    if wanted(&name) {
        run(&name, Input::Review(location_fields(n)), |r| {
            let locs = r.findings.first().map(|f| f.locations.len()).unwrap_or(0);
            assert_eq!(
                locs,
                deep_review::parse::MAX_LOCATIONS,
                "the first places are kept"
            );
            format!("{n} locations read, {locs} kept")
        });
    }
    // Issue 20: a title line of 40,000 backticked locations (91 s, quadratic, through
    // consolidation), and lines of 160,000 `(` before a severity note (quadratic in the note
    // search).
    let name = "title_locations_40000";
    if wanted(name) {
        let locs: Vec<String> = (0..40_000)
            .map(|i| format!("`src/f{}.rs:{}`", i % 97, i + 1))
            .collect();
        let text = format!(
            "## Findings\n\n### Important Issues\n\n1. **Title** — {} (important, gap)\n\nBody.\n",
            locs.join(", ")
        );
        run(name, Input::Review(text), |r| {
            let f = &r.findings[0];
            assert_eq!(f.locations.len(), deep_review::parse::MAX_LOCATIONS);
            format!("{} locations kept", f.locations.len())
        });
    }
    let name = "open_parens_160000";
    if wanted(name) {
        let text = format!(
            "## Findings\n\n### Suggestions\n\n1. **Title** — {} `a.go:3` (important, gap)\n\nBody {}\n",
            "(a ".repeat(160_000),
            "(important ".repeat(160_000)
        );
        run(name, Input::Review(text), |r| {
            assert_eq!(r.findings[0].severity, Some(Severity::Important));
            "severity read after them".into()
        });
    }
    for unit in ["> ", "- ", "1. "] {
        let name = format!("deep_nesting_{}", unit.trim());
        if wanted(&name) {
            let text = format!("{}x\n", unit.repeat(100_000));
            run(&name, Input::Review(text), |_| "100,000 levels".into());
        }
    }
    let n = 2_000;
    let name = format!("report_reviewers_{n}");
    if wanted(&name) {
        run(&name, Input::Report(report_many_reviewers(n)), |_| {
            String::new()
        });
    }
}
