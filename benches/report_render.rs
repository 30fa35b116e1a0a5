//! Rendering a report as HTML (Markdown bodies, syntect-highlighted code) and as SARIF, for
//! generated reports of N findings, each with a 15-line quote, a 9-line fix diff and a
//! three-paragraph body, and an appendix of three 40 KB raw reviews.
//! Run: `cargo bench --profile dev --bench report_render` (the dev profile optimizes syntect
//! and the regex crates, as tests run them) or `cargo bench --bench report_render`.

use deep_review::report::{html, sarif};
use deep_review::types::{
    AppendixEntry, CodeSnippet, Location, MergedFinding, Report, ReportMeta, Severity, SourceRef,
    Tier, Verdict,
};

fn main() {
    divan::main();
}

fn code(i: usize) -> String {
    (0..15)
        .map(|l| {
            format!(
                "    let value_{i}_{l} = registry.lookup(\"key-{l}\").map(|v| v * {l}).unwrap_or(0); // step {l}"
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn finding(i: usize) -> MergedFinding {
    let severity = Severity::ALL[i % 3];
    MergedFinding {
        id: format!("{}{}", severity.id_prefix(), i + 1),
        title: format!("The `cache_{i}` lookup drops the lock before the `insert` in module {i}"),
        body: format!(
            "The lookup at `src/m{i}.rs:{}` releases the **lock** and then inserts, so two workers \
             can both miss and both insert.\n\nUnder load this loses writes; see [the issue](https://example.org/{i}).\n\n\
             A test with two threads shows it: `cargo test cache_{i}`.",
            10 + i
        ),
        severity,
        category: Some("regression".into()),
        locations: vec![Location::new(format!("src/m{i}.rs"), Some(10), Some(24))],
        code: Some(CodeSnippet {
            language: Some("rust".into()),
            code: code(i),
        }),
        fix: Some("Hold the lock across the lookup and the insert.".into()),
        fix_diff: Some(format!(
            "@@ -10,4 +10,5 @@\n-    let v = map.get(k);\n+    let guard = lock.lock();\n+    let v = guard.get(k);\n     if v.is_none() {{\n-        map.insert(k, {i});\n+        guard.insert(k, {i});\n     }}\n"
        )),
        agents: vec!["claude".into(), "codex".into()],
        sources: vec![
            SourceRef {
                agent: "claude".into(),
                id: format!("I{i}"),
                severity: Some(severity),
                noted_in: None,
            },
            SourceRef {
                agent: "codex".into(),
                id: format!("S{i}"),
                severity: Some(Severity::Suggestion),
                noted_in: None,
            },
        ],
        calibration: None,
        confidence: Some(0.8),
        confidence_reason: None,
        tier: if i % 7 == 6 {
            Tier::LowConfidence
        } else {
            Tier::Shown
        },
        verification: None,
        fingerprint: format!("{i:016x}"),
        round_status: Default::default(),
        prior: None,
    }
}

fn report(n: usize) -> Report {
    let review = (0..400)
        .map(|i| format!("{i}. **Finding {i}** — `src/m{i}.rs:{i}` (important, gap)\n\n```rust\nlet x_{i} = y();\n```\n\nBecause reasons, line {i}.\n"))
        .collect::<String>();
    Report {
        meta: ReportMeta {
            id: "20261202-120000-bench".into(),
            repo_url: Some("https://github.com/o/n".into()),
            head: Some("8543b4f05341ea138f67f998d51068e11e0bc8c3".into()),
            ..Default::default()
        },
        verdict: Verdict::MergeWithFixes,
        verdict_rationale: "generated".into(),
        summary: "Generated report.".into(),
        findings: (0..n).map(finding).collect(),
        appendix: ["claude", "codex", "gemini"]
            .iter()
            .map(|a| AppendixEntry {
                agent: a.to_string(),
                display: a.to_string(),
                text: review.clone(),
            })
            .collect(),
        ..Report::default()
    }
}

#[divan::bench(args = [25, 100, 400], sample_count = 5)]
fn render_html(bencher: divan::Bencher, n: usize) {
    let r = report(n);
    // The grammars load once per process, at the first page: not part of each render.
    divan::black_box(html::render(&report(1)));
    bencher.bench(|| divan::black_box(html::render(&r)).len());
}

#[divan::bench(args = [25, 100, 400], sample_count = 5)]
fn render_sarif(bencher: divan::Bencher, n: usize) {
    let r = report(n);
    bencher.bench(|| divan::black_box(sarif::render(&r)).len());
}
