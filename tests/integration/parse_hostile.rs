//! The parse stage on the project's own examples (tests/fixtures/parse/) and on hostile input:
//! empty files, no headings, a 5 MB review, binary bytes, findings with no body, unbalanced
//! code fences, broken JSON. Nothing may panic; problems are warnings or errors with a line.

use std::path::{Path, PathBuf};

use deep_review::parse::{ParseError, parse_review, parse_review_owned_limited, read_review_file};
use deep_review::report::markdown_read::{parse_report, read_report};
use deep_review::types::{ObservationKind, Review, Severity};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/parse")
        .join(name)
}

fn read(name: &str) -> Review {
    read_review_file("claude", &fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn ids(r: &Review) -> Vec<&str> {
    r.findings.iter().map(|f| f.id.as_str()).collect()
}

fn assert_warnings_have_lines(r: &Review) {
    for w in &r.warnings {
        assert!(w.line.is_some(), "warning without a line: {}", w.message);
    }
}

#[test]
fn contract_layout_is_read_completely() {
    let r = read("contract.md");
    assert_eq!(r.agent, "claude");
    assert_eq!(r.verdict.as_deref(), Some("Approve with requested changes"));
    assert!(r.summary.starts_with("The change adds a retry budget"));
    assert_eq!(ids(&r), ["I1", "I2", "S1", "S2"]);
    let i1 = &r.findings[0];
    assert_eq!(i1.title, "Retry budget never resets after a success");
    assert_eq!(i1.locations[0].to_string(), "src/upload/retry.rs:41-58");
    assert_eq!(i1.severity, Some(Severity::Important));
    assert_eq!(i1.code.as_ref().unwrap().language.as_deref(), Some("rust"));
    assert!(i1.code.as_ref().unwrap().code.contains("BudgetExhausted"));
    assert!(i1.explanation.starts_with("`remaining` only goes down."));
    assert_eq!(
        i1.fix.as_deref(),
        Some("reset `remaining` when a send succeeds.")
    );
    assert!(i1.fix_diff.as_deref().unwrap().contains("+    Ok(r) =>"));
    // Several locations; no code block.
    let i2 = &r.findings[1];
    let locs: Vec<String> = i2.locations.iter().map(|l| l.to_string()).collect();
    assert_eq!(
        locs,
        ["src/upload/config.rs:12", "src/upload/retry.rs:20-24"]
    );
    assert!(i2.code.is_none());
    // No location at all.
    let s2 = &r.findings[3];
    assert!(s2.locations.is_empty());
    assert_eq!(s2.severity, Some(Severity::Suggestion));
    assert_eq!(r.observations.len(), 3);
    assert_eq!(r.observations[0].kind, ObservationKind::Concern);
    assert_eq!(r.observations[0].scopes, ["future"]);
    assert_eq!(r.observations[1].kind, ObservationKind::Strength);
    assert_eq!(r.observations[2].scopes, ["in-scope"]);
    assert_eq!(r.testing.gaps.len(), 2);
    assert!(r.testing.summary.contains("exhaustion after N failures"));
    assert_eq!(r.documentation.len(), 1);
    assert_eq!(r.limitations.len(), 1);
    assert_eq!(r.unresolved_feedback.len(), 1);
    assert_eq!(
        r.commit_structure.as_deref(),
        Some("Two commits, one concept each. No fixups needed.")
    );
    let cov: Vec<(&str, &str)> = r
        .coverage
        .iter()
        .map(|c| (c.path.as_str(), c.status.as_str()))
        .collect();
    assert_eq!(
        cov,
        [
            ("src/upload/retry.rs", "Findings 1, Suggestion 1"),
            ("src/upload/config.rs", "Finding 2"),
            ("docs/config.md", "Reviewed, no issues"),
        ]
    );
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert!(r.unparsed.is_empty());
    assert_eq!(
        r.raw,
        std::fs::read_to_string(fixture("contract.md")).unwrap()
    );
}

#[test]
fn drifting_layout_is_read() {
    let r = read("drift.md");
    assert_eq!(r.verdict.as_deref(), Some("Changes requested"));
    assert!(r.summary.starts_with("The parser gains a streaming mode."));
    // `**S9.**` keeps the reviewer's id even under Critical; `S2.` before the bold; unnumbered
    // findings get the next free id of their section.
    assert_eq!(ids(&r), ["S9", "S2", "S3", "S4"]);
    assert_eq!(r.findings[0].severity, Some(Severity::Critical));
    assert_eq!(
        r.findings[0].title,
        "Unbounded buffer growth on a never-ending line"
    );
    // Severity note at the end of the body, not on the first line.
    let s2 = &r.findings[1];
    assert_eq!(s2.title, "Name the magic number");
    assert_eq!(s2.locations.len(), 2);
    assert_eq!(
        s2.category.as_ref().map(|c| c.as_str()),
        Some("enhancement")
    );
    assert_eq!(s2.fix.as_deref(), Some("add `const CHUNK: usize = 8192;`."));
    // No parenthetical: severity from the section heading.
    let s4 = &r.findings[3];
    assert_eq!(s4.title, "Consider a fuzz target");
    assert_eq!(s4.severity, Some(Severity::Suggestion));
    assert!(s4.locations.is_empty());
    // `**Strengths** — text` and a bullet with `*(pre-existing)*`.
    assert_eq!(r.observations.len(), 2);
    assert_eq!(r.observations[0].kind, ObservationKind::Strength);
    assert!(
        r.observations[0]
            .text
            .starts_with("The streaming mode reuses")
    );
    assert_eq!(r.observations[1].scopes, ["pre-existing"]);
    // Coverage bullets with `:` and with `—`.
    assert_eq!(r.coverage.len(), 3);
    assert_eq!(r.coverage[0].status, "Findings S9, S2");
    assert_eq!(r.coverage[2].path, "README.md");
    // Prose before the first section is kept and named.
    assert_eq!(
        r.unparsed,
        ["I read the whole diff and the two callers before writing this."]
    );
    assert!(r.warnings.iter().any(|w| w.line == Some(1)));
    assert_warnings_have_lines(&r);
}

#[test]
fn findings_as_headings_and_a_finding_with_no_body() {
    let r = read("headings.md");
    assert_eq!(ids(&r), ["C1", "C2", "I1"]);
    assert_eq!(r.findings[0].title, "Cache key ignores the tenant");
    assert_eq!(
        r.findings[0].locations[0].to_string(),
        "src/cache/key.rs:10-18"
    );
    assert!(r.findings[0].explanation.starts_with("Two tenants"));
    assert_eq!(r.findings[1].title, "Eviction races with insert");
    assert!(r.findings[1].explanation.is_empty());
    let w = r
        .warnings
        .iter()
        .find(|w| w.message.contains("C2") && w.message.contains("no body"))
        .expect("a warning for the finding with no body");
    assert_eq!(w.line, Some(11));
    assert_eq!(r.findings[2].severity, Some(Severity::Important));
    assert_eq!(r.coverage.len(), 2);
}

#[test]
fn numbered_finding_with_no_body_at_end_of_file() {
    let r = parse_review(
        "codex",
        "## Important Issues\n\n1. **Lonely title** — `a.rs:3` (important, gap)",
    );
    assert_eq!(ids(&r), ["I1"]);
    assert_eq!(r.findings[0].title, "Lonely title");
    assert!(
        r.warnings
            .iter()
            .any(|w| w.line == Some(3) && w.message.contains("no body"))
    );
}

#[test]
fn no_headings_becomes_the_summary_with_a_warning() {
    let r = read("no_headings.md");
    assert!(r.findings.is_empty());
    assert!(r.summary.starts_with("Looks fine to me overall."));
    assert!(r.summary.contains("rename `tmp`"));
    assert!(
        r.warnings
            .iter()
            .any(|w| w.message.contains("no review sections"))
    );
    assert_warnings_have_lines(&r);
}

#[test]
fn findings_without_any_section_still_count_when_they_carry_a_severity() {
    let r = parse_review(
        "gemini",
        "Two problems.\n\n1. **Leak** — `a.go:3` (critical, regression)\n\nIt leaks.\n\n\
         2. **Typo** — `b.go:9` (suggestion, gap)\n",
    );
    assert_eq!(ids(&r), ["C1", "S2"]);
    assert_eq!(r.findings[0].explanation, "It leaks.");
    assert_eq!(r.summary, "Two problems.");
}

#[test]
fn unbalanced_fence_is_closed_before_the_next_heading() {
    let r = read("unbalanced_fence.md");
    assert_eq!(ids(&r), ["I1", "S1"]);
    assert_eq!(r.findings[1].title, "Prefer `fs::metadata`");
    assert_eq!(r.coverage.len(), 1);
    let w = r
        .warnings
        .iter()
        .find(|w| w.message.contains("never closed"))
        .expect("warning about the fence");
    assert_eq!(w.line, Some(7));
    assert!(w.message.contains("line 13"), "{}", w.message);
    // The review text itself is untouched.
    assert!(!r.raw.contains("```\n### Suggestions"));
}

#[test]
fn unbalanced_fence_variants_never_panic() {
    for text in [
        "```",
        "```rust",
        "## Findings\n\n1. **A** (critical, gap)\n\n~~~\ncode\n",
        "- item\n\n  ```\n  never closed\n## Heading\n",
        "````\n```\n## Suggestions\n1. **x**\n",
        "```\n```\n```\n## Critical Issues\n1. **B** — `a:1`\n```",
    ] {
        let r = parse_review("x", text);
        assert_eq!(r.raw, text);
        assert_warnings_have_lines(&r);
    }
}

#[test]
fn empty_and_blank_files() {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in [("empty.md", ""), ("blank.md", "\n  \n\t\n")] {
        let p = dir.path().join(name);
        std::fs::write(&p, content).unwrap();
        let r = read_review_file("claude", &p).unwrap();
        assert!(r.findings.is_empty());
        assert_eq!(r.raw, content);
        assert_eq!(r.warnings.len(), 1, "{name}");
        assert!(r.warnings[0].message.contains("empty"));
        assert_eq!(r.warnings[0].line, Some(1));
    }
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let e = read_review_file("claude", Path::new("/nonexistent/review.md")).unwrap_err();
    assert!(matches!(e, ParseError::Io { .. }));
    assert!(e.to_string().contains("/nonexistent/review.md"));
}

#[test]
fn five_megabyte_review() {
    let mut text = String::from("# Review\n\n## Findings\n\n### Important Issues\n\n");
    let mut n = 0;
    while text.len() < 5 * 1024 * 1024 {
        n += 1;
        text.push_str(&format!(
            "{n}. **Finding number {n}** — `src/mod{n}.rs:{n}-{}` (important, gap)\n\n\
             ```rust\nfn f{n}() {{ let x = {n}; }}\n```\n\n\
             The value `x` is never used in `f{n}`; this paragraph pads the review to size.\n\n\
             Fix: remove it.\n\n",
            n + 3
        ));
    }
    // Read in full (past the flood cap of 5,000 findings, which `review_floods.rs` tests): the
    // reader itself must take every finding of a large review.
    let r = parse_review_owned_limited("claude", text, usize::MAX);
    assert_eq!(r.findings.len(), n);
    let last = r.findings.last().unwrap();
    assert_eq!(last.id, format!("I{n}"));
    assert_eq!(last.locations[0].path, format!("src/mod{n}.rs"));
    assert_eq!(last.fix.as_deref(), Some("remove it."));
    assert!(
        r.warnings.is_empty(),
        "{:?}",
        &r.warnings[..r.warnings.len().min(3)]
    );

    // One 5 MB line with no structure at all.
    let line = "word `code` **bold** ".repeat(5 * 1024 * 1024 / 21);
    let r = parse_review("claude", &line);
    assert!(r.findings.is_empty());
    assert_eq!(r.summary.len(), line.trim().len());
}

#[test]
fn binary_bytes_are_read_lossily_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("binary.md");
    let mut bytes =
        b"## Critical Issues\n\n1. **Bad** \xff\xfe \x00 \x01 (critical, gap)\n\nline\n".to_vec();
    bytes.extend((0u8..=255).cycle().take(4096));
    std::fs::write(&p, &bytes).unwrap();
    let r = read_review_file("claude", &p).unwrap();
    let w = &r.warnings[0];
    assert!(w.message.contains("not valid UTF-8"), "{}", w.message);
    assert!(w.message.contains("binary.md"), "{}", w.message);
    assert_eq!(w.line, Some(3));
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].severity, Some(Severity::Critical));
}

/// Pseudo-random bytes (a fixed linear congruential sequence) mixed with Markdown markers.
#[test]
fn random_bytes_never_panic() {
    let markers: &[&[u8]] = &[
        b"\n# ",
        b"\n## Findings\n",
        b"\n```",
        b"\n1. **",
        b"** - `",
        b":12-3` (critical, x)",
        b"\n| a | b |\n|---|---|\n",
        b"\n- ",
        b"\n---\n",
        b"\xe2\x80\x94",
        b"\xf0\x9f",
        b"\0",
    ];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    for round in 0..40 {
        let mut bytes = Vec::new();
        for _ in 0..2000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let r = (state >> 33) as usize;
            if r.is_multiple_of(5) {
                bytes.extend_from_slice(markers[r % markers.len()]);
            } else {
                bytes.push((r % 256) as u8);
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        let r = parse_review("fuzz", &text);
        assert_eq!(r.raw, text, "round {round}");
        assert_warnings_have_lines(&r);
        let _ = parse_report(&text, "fuzz.md");
    }
}

#[test]
fn every_prefix_of_the_examples_parses() {
    for name in [
        "contract.md",
        "drift.md",
        "headings.md",
        "unbalanced_fence.md",
        "report.md",
    ] {
        let text = std::fs::read_to_string(fixture(name)).unwrap();
        let mut cut = 0;
        while cut < text.len() {
            if text.is_char_boundary(cut) {
                let r = parse_review("x", &text[..cut]);
                assert_warnings_have_lines(&r);
                let _ = parse_report(&text[..cut], name);
            }
            cut += 7;
        }
    }
}

#[test]
fn json_review_is_read() {
    let r = read("review.json");
    assert_eq!(r.agent, "claude");
    assert_eq!(ids(&r), ["I1", "S1"]);
    assert_eq!(r.findings[0].locations[0].to_string(), "src/serve.rs:30-35");
    assert_eq!(
        r.findings[1].category.as_ref().map(|c| c.as_str()),
        Some("style")
    );
    assert_eq!(r.coverage.len(), 1);
    assert!(r.raw.starts_with('{'));
}

#[test]
fn json_syntax_error_names_file_and_line() {
    let path = fixture("bad_syntax.json");
    let e = read_review_file("claude", &path).unwrap_err();
    match &e {
        ParseError::Invalid { path: p, line, .. } => {
            assert!(p.ends_with("bad_syntax.json"));
            assert_eq!(*line, 8);
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
    let msg = e.to_string();
    assert!(msg.contains("bad_syntax.json:8:"), "{msg}");
    assert!(msg.contains("deep-review schema review"), "{msg}");
    // Through parse_review the same text becomes a warning and is kept.
    let text = std::fs::read_to_string(&path).unwrap();
    let r = parse_review("claude", &text);
    assert!(r.findings.is_empty());
    assert_eq!(r.warnings[0].line, Some(8));
    assert_eq!(r.unparsed, [text]);
}

#[test]
fn json_shape_error_names_the_line() {
    let e = read_review_file("claude", &fixture("bad_shape.json")).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("bad_shape.json:7:"), "{msg}");
    assert!(msg.contains("urgent"), "{msg}");
}

#[test]
fn project_report_is_read_with_its_metadata_and_raw_reviews() {
    let src = read_report(&fixture("report.md")).unwrap();
    let m = &src.meta;
    assert_eq!(m.id, "20261201-101500-pr-42");
    assert_eq!(m.repo.as_deref(), Some("acme/uploader"));
    assert_eq!(m.round, Some(2));
    assert_eq!(m.author.as_deref(), Some("dev"));
    let pr = m.pr.as_ref().unwrap();
    assert_eq!(
        (pr.number, pr.title.as_str()),
        (42, "Add a retry budget | with a pipe")
    );
    assert_eq!(m.commits.len(), 2);
    assert_eq!(m.reviewers[0].effort.as_deref(), Some("high"));
    assert_eq!(m.wall_clock_s, Some(3723.0));
    assert_eq!(
        src.verdict_rationale,
        "the budget must reset after a success"
    );
    assert!(src.warnings.is_empty(), "{:?}", src.warnings);
    let agents: Vec<&str> = src.reviews.iter().map(|r| r.agent.as_str()).collect();
    assert_eq!(agents, ["claude", "codex"]);
    let claude = &src.reviews[0];
    assert_eq!(claude.display_name.as_deref(), Some("Claude Opus 4.7"));
    // A `### Codex GPT 5.5` line inside Claude's code block does not start Codex's review.
    assert!(claude.raw.contains("not an agent heading"));
    assert!(claude.raw.starts_with("# Review of PR #42"));
    assert!(claude.raw.ends_with("— Finding 1"));
    assert_eq!(claude.findings.len(), 1);
    let codex = &src.reviews[1];
    assert_eq!(codex.findings[0].title, "`remaining` is never restored");
    assert!(codex.raw.ends_with("None."));
    assert!(!codex.raw.contains("Resolution"));
}

#[test]
fn report_without_appendix_is_an_error_naming_the_file() {
    let e = parse_report(
        "# Deep Review: x\n\n| | |\n|---|---|\n| **Date** | 2026-01-01 |\n\n## Executive Summary\n\nFine.\n",
        "old/report.md",
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(msg.starts_with("old/report.md:"), "{msg}");
    assert!(msg.contains("holds no raw reviews"), "{msg}");
    // An appendix with no reviewer heading is the same error.
    let e = parse_report(
        "| **Reviewers** | Claude Opus 4.6 |\n\n## Appendix: Original Reviews\n\n### Notes\n\ntext\n",
        "r.md",
    )
    .unwrap_err();
    assert!(e.to_string().contains("holds no raw reviews"));
}

#[test]
fn report_agent_heading_swallowed_by_an_unclosed_fence_is_still_found() {
    let text = "| **Reviewers** | Claude Opus 4.6, Gemini 3.1 Pro |\n\n\
                ## Appendix: Original Reviews\n\n### Claude Opus 4.6\n\n\
                ## Findings\n\n```go\nnever closed\n\n### Gemini 3.1 Pro\n\n\
                ## Suggestions\n\n1. **Tidy** — `a.go:1` (suggestion, gap)\n";
    let src = parse_report(text, "r.md").unwrap();
    let agents: Vec<&str> = src.reviews.iter().map(|r| r.agent.as_str()).collect();
    assert_eq!(agents, ["claude", "gemini"]);
    assert_eq!(src.reviews[1].findings.len(), 1);
    assert!(
        src.warnings
            .iter()
            .any(|w| w.contains("unclosed code fence"))
    );
}

#[test]
fn labelled_fields_tables_and_plain_bullets() {
    let r = read("fields_and_tables.md");
    assert_eq!(r.verdict.as_deref(), Some("Request changes"));
    assert_eq!(ids(&r), ["C1", "I2", "S1", "S2", "S3", "S4"]);
    let f1 = &r.findings[0];
    assert_eq!(f1.title, "Token compared with `==`");
    assert_eq!(f1.severity, Some(Severity::Critical));
    assert_eq!(f1.category.as_ref().map(|c| c.as_str()), Some("security"));
    assert_eq!(f1.locations[0].to_string(), "src/auth/token.rs:77");
    assert_eq!(f1.explanation, "The comparison leaks timing.");
    assert_eq!(f1.fix.as_deref(), Some("use a constant-time comparison."));
    let f2 = &r.findings[1];
    assert_eq!(f2.severity, Some(Severity::Important));
    assert_eq!(f2.locations[0].to_string(), "src/auth/revoke.rs:15-30");
    assert_eq!(f2.explanation, "Revocations leave no trace.");
    // Table rows.
    let s1 = &r.findings[2];
    assert_eq!(s1.title, "Rename `tok` to `token`");
    assert_eq!(s1.locations[0].to_string(), "src/auth/token.rs:12");
    assert_eq!(s1.fix.as_deref(), Some("Rename it"));
    assert_eq!(r.findings[3].severity, Some(Severity::Suggestion));
    assert_eq!(r.findings[3].locations[0].path, "docs/auth.md");
    // Plain bullets keep identifiers in their titles.
    assert_eq!(
        r.findings[4].title,
        "Rename `helper_fn` in `src/auth/util.rs` to say what it does"
    );
    assert_eq!(r.findings[5].title, "Drop the unused `legacy` flag");
    assert!(r.findings.iter().all(|f| f.severity.is_some()));
    assert_eq!(r.coverage.len(), 1);
    assert_eq!(r.coverage[0].path, "src/auth/token.rs");
}

#[test]
fn verdict_forms() {
    for (text, want) in [
        ("**Verdict**: Approve\n\n## Findings\n", "Approve"),
        ("**Verdict: Approve.**\n", "Approve"),
        ("## Verdict\n\nRework needed.\n", "Rework needed"),
        ("## Verdict — Merge\n", "Merge"),
    ] {
        let r = parse_review("x", text);
        assert_eq!(r.verdict.as_deref(), Some(want), "{text:?}");
    }
}

#[test]
fn json_in_a_fence_is_read_and_errors_keep_the_file_line() {
    let body = std::fs::read_to_string(fixture("review.json")).unwrap();
    let text = format!("```json\n{body}```\n");
    let r = parse_review("codex", &text);
    assert_eq!(ids(&r), ["I1", "S1"]);
    assert_eq!(r.raw, text);
    let bad = std::fs::read_to_string(fixture("bad_syntax.json")).unwrap();
    let r = parse_review("codex", &format!("```json\n{bad}```"));
    assert_eq!(r.warnings[0].line, Some(9), "{:?}", r.warnings);
}

/// Random sequences of the tokens reviews are made of: no input may panic, and every warning
/// of a Markdown review names a line.
#[test]
fn token_soup_never_panics() {
    let toks = [
        "\n",
        "\n\n",
        "# ",
        "## ",
        "### ",
        "#### ",
        "Findings",
        "Critical Issues",
        "Important Issues",
        "Suggestions",
        "Design Observations",
        "Concerns",
        "Strengths",
        "Coverage Summary",
        "Testing Assessment",
        "Verdict",
        "**",
        "`",
        "```",
        "```diff",
        "~~~",
        "1. ",
        "2. ",
        "- ",
        "  ",
        "S1. ",
        "I2: ",
        "— ",
        "`a/b.rs:1-2`",
        "`355-374`",
        "(critical, regression)",
        "(important, gap)",
        "`(suggestion, x)`",
        "(in-scope)",
        "*(future)*",
        "Fix:",
        "**Fix:**",
        "None.",
        "| a | b |\n|---|---|\n",
        "| `x.rs` | ok |\n",
        "---",
        "İ",
        "ß",
        "é",
        "\u{feff}",
        "text",
        "word ",
        ":",
        "Severity: high",
        "Location: `q.go:3`",
        "<br>",
        "[Claude]",
        "\t",
        "\r\n",
        "> ",
        "* ",
        "1) ",
        "**S1.**",
        "## Appendix: Original Reviews\n",
        "### Claude Opus 4.6\n",
        "| **Reviewers** | Claude Opus 4.6 |\n",
        "## Resolution\n",
    ];
    let mut state: u64 = 11;
    for round in 0..600 {
        let mut s = String::new();
        for _ in 0..(20 + round % 150) {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            s.push_str(toks[((state >> 33) as usize) % toks.len()]);
        }
        let r = parse_review("soup", &s);
        if !s
            .trim_start_matches('\u{feff}')
            .trim_start()
            .starts_with('{')
        {
            assert_warnings_have_lines(&r);
        }
        let _ = parse_report(&s, "soup.md");
    }
}

/// A parsed review written out as JSON (the `Review` schema) reads back to the same review.
#[test]
fn json_round_trip_of_a_parsed_review() {
    for name in ["contract.md", "drift.md", "fields_and_tables.md"] {
        let r = read(name);
        let json = serde_json::to_string_pretty(&r).unwrap();
        let back = parse_review("claude", &json);
        assert_eq!(back, r, "{name}");
    }
}

#[test]
fn agent_headings_at_another_level_are_found() {
    let text = "| **Reviewers** | Claude Opus 4.6, Codex GPT 5.4 |\n\n\
                ## Appendix: Original Reviews\n\n#### Claude Opus 4.6\n\n## Findings\n\n\
                ### Suggestions\n\n1. **A** — `a.rs:1` (suggestion, gap)\n\n\
                #### Codex GPT 5.4\n\n**Suggestions**\n\n1. **B** — `b.rs:2` (suggestion, gap)\n";
    let src = parse_report(text, "r.md").unwrap();
    let agents: Vec<&str> = src.reviews.iter().map(|r| r.agent.as_str()).collect();
    assert_eq!(agents, ["claude", "codex"]);
    assert_eq!(src.reviews[0].findings[0].title, "A");
    assert_eq!(src.reviews[1].findings[0].title, "B");
}

/// 100,000 nested quotes or list items must not overflow the stack (the block tree is capped).
#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    for unit in ["> ", "- ", "1. ", "> - "] {
        let text = format!("{}x\n", unit.repeat(100_000));
        let r = parse_review("deep", &text);
        assert!(
            r.warnings.iter().any(|w| w.message.contains("nested")),
            "{unit:?}"
        );
        assert!(r.summary.ends_with('x'), "{unit:?}");
        let _ = parse_report(&text, "deep.md");
    }
}

#[test]
fn location_and_severity_on_the_line_after_the_title() {
    let r = parse_review(
        "x",
        "## Findings\n\n1. **Leak in the handler**\n   `src/serve.rs:30-35` (important, regression)\n   \
         The descriptor lives too long.\n\n2. **Typo**\n   Just a typo in a comment.\n",
    );
    assert_eq!(r.findings.len(), 2);
    let f = &r.findings[0];
    assert_eq!(f.locations[0].to_string(), "src/serve.rs:30-35");
    assert_eq!(f.severity, Some(Severity::Important));
    assert_eq!(f.explanation, "The descriptor lives too long.");
    // A second line that is prose stays in the body.
    assert_eq!(r.findings[1].explanation, "Just a typo in a comment.");
    assert!(r.findings[1].locations.is_empty());
}

/// Text before the first section is never lost, even when a label in it carries a severity
/// note that does not make it a finding.
#[test]
fn preamble_keeps_every_paragraph_and_reads_a_plain_verdict_line() {
    let r = parse_review(
        "x",
        "Verdict: Approve.\n\nIntro.\n\n**Note** (critical, gap): read this.\n\nMore.\n",
    );
    assert_eq!(r.verdict.as_deref(), Some("Approve"));
    assert!(r.findings.is_empty());
    assert!(r.summary.contains("Intro."), "{}", r.summary);
    assert!(r.summary.contains("read this"), "{}", r.summary);
    assert!(r.summary.ends_with("More."), "{}", r.summary);
}

#[test]
fn unknown_sections_and_bad_coverage_entries_are_kept_with_a_warning() {
    let text = "# Review of the cache\n\n## Random thoughts\n\nThe cache is nice.\n\n\
                ## Coverage Summary\n\n- `src/a.rs` — ok\n- everything else looked fine\n";
    let r = parse_review("x", text);
    assert_eq!(r.coverage.len(), 1);
    assert!(
        r.unparsed
            .iter()
            .any(|u| u.contains("Random thoughts") && u.contains("nice"))
    );
    assert!(r.unparsed.iter().any(|u| u.contains("everything else")));
    let lines: Vec<Option<usize>> = r.warnings.iter().map(|w| w.line).collect();
    assert!(
        lines.contains(&Some(3)) && lines.contains(&Some(10)),
        "{:?}",
        r.warnings
    );
}

/// Hostile shapes that were superlinear (issue 10): every finding must be kept, with ids unique
/// within the review. (How long they take is measured by `cargo bench --bench parse`.)
fn assert_unique_ids(r: &Review) {
    let unique: std::collections::HashSet<&str> =
        r.findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(unique.len(), r.findings.len(), "ids are unique");
}

#[test]
fn thousands_of_repeated_ids_are_all_kept() {
    let mut json = String::from("{\"findings\":[");
    for k in 0..8_000 {
        if k > 0 {
            json.push(',');
        }
        json.push_str("{\"id\":\"C1\",\"title\":\"t\",\"severity\":\"critical\"}");
    }
    json.push_str("]}");
    // Read in full, past the flood cap (tested in `review_floods.rs`): the reader's own work.
    let r = parse_review_owned_limited("codex", json.clone(), usize::MAX);
    assert_eq!(r.findings.len(), 8_000);
    assert_unique_ids(&r);
    assert_eq!(ids(&r)[..3], ["C1", "C1-2", "C1-3"]);
    assert_eq!(r.findings[7_999].id, "C1-8000");

    let mut md = String::from("## Suggestions\n\n");
    for _ in 0..16_000 {
        md.push_str("S1. **Same id** — `a.rs:1` (suggestion, gap)\n\nBody.\n\n");
    }
    let r = parse_review_owned_limited("codex", md.clone(), usize::MAX);
    assert_eq!(r.findings.len(), 16_000);
    assert_unique_ids(&r);
    assert_eq!(r.findings[15_999].id, "S1-16000");
    let repeats = r
        .warnings
        .iter()
        .filter(|w| w.message.contains("used twice"))
        .count();
    assert_eq!(repeats, 15_999);
}

#[test]
fn ten_thousand_repeated_sections_are_all_read() {
    let mut text = String::new();
    for k in 0..10_000 {
        text.push_str(&format!(
            "## Executive Summary\n\nPart {k}.\n\n## Important Issues\n\n\
             - **Leak {k}** — `src/a{k}.rs:3` (important, gap)\n\n  It leaks.\n\n\
             ## Coverage Summary\n\n- `src/a{k}.rs` — Finding 1\n\n"
        ));
    }
    // Read in full, past the flood cap (tested in `review_floods.rs`).
    let r = parse_review_owned_limited("gemini", text.clone(), usize::MAX);
    assert_eq!(r.findings.len(), 10_000);
    assert_unique_ids(&r);
    // Unnumbered findings of each section take the next free number.
    assert_eq!(ids(&r)[..3], ["I1", "I2", "I3"]);
    assert_eq!(r.findings[9_999].title, "Leak 9999");
    assert_eq!(r.coverage.len(), 10_000);
    assert!(r.summary.ends_with("Part 9999."));
}

#[test]
fn many_unclosed_fences_and_comments_do_not_hide_the_findings_after_them() {
    let mut text = String::from("## Important Issues\n\n");
    for k in 0..3_000 {
        text.push_str(&format!(
            "### F{k} — `a.rs:{k}` (important, gap)\n\n```x\ncode\n\n\
             <!-- note {k}\n\nBody {k}.\n\n"
        ));
    }
    let r = parse_review("claude", &text);
    assert_eq!(r.findings.len(), 3_000);
    assert_unique_ids(&r);
    assert_eq!(r.findings[2_999].title, "F2999");
    assert!(r.findings[2_999].code.is_some());
    let closed_before_heading = r
        .warnings
        .iter()
        .filter(|w| w.message.contains("read it as closed before the heading"))
        .count();
    assert_eq!(closed_before_heading, 2_999);
    // The last one runs to the end of the review.
    let to_the_end: Vec<Option<usize>> = r
        .warnings
        .iter()
        .filter(|w| w.message.contains("everything after it was read as code"))
        .map(|w| w.line)
        .collect();
    assert_eq!(to_the_end, [Some(3 + 2_999 * 9 + 2)]);
}

/// The line is read whole (its severity note after 20,000 locations, its body); the finding
/// keeps its first `MAX_LOCATIONS` places (issue 20: every later comparison of places is
/// bounded), with a warning.
#[test]
fn a_line_naming_thousands_of_locations_is_read_whole_and_keeps_the_first_hundred() {
    let mut text = String::from("## Findings\n\n1. **Everywhere** — ");
    for k in 0..20_000 {
        text.push_str(&format!("`src/a{k}.rs:{k}`, "));
    }
    text.push_str("(important, gap)\n\nBody.\n");
    let r = parse_review("claude", &text);
    assert_eq!(r.findings.len(), 1);
    let f = &r.findings[0];
    assert_eq!(f.locations.len(), deep_review::parse::MAX_LOCATIONS);
    assert_eq!(f.locations[99].to_string(), "src/a99.rs:99");
    assert!(
        r.warnings
            .iter()
            .any(|w| w.message.contains("cites 20000 places"))
    );
    assert_eq!(f.severity, Some(Severity::Important));
    assert_eq!(f.explanation, "Body.");
}

#[test]
fn a_report_of_two_thousand_reviewers_splits_by_its_structure() {
    let names: Vec<String> = (0..2_000).map(|k| format!("Agent{k} Model {k}")).collect();
    let mut text = format!(
        "# Deep Review: x\n\n| | |\n|---|---|\n| **Reviewers** | {} |\n\n\
         ## Appendix: Original Reviews\n\n",
        names.join(", ")
    );
    for (k, name) in names.iter().enumerate() {
        // Each review holds a `## Resolution` line and a heading naming the next reviewer.
        text.push_str(&format!(
            "### {name}\n\n## Important Issues\n\n1. **F{k}** — `a.rs:{k}` (important, gap)\n\n\
             Body.\n\n## Resolution\n\nnot the end\n\n### {}\n\nstill {name}\n\n---\n\n",
            names[(k + 1) % names.len()]
        ));
    }
    text.push_str("## Resolution\n\nDone.\n");
    let src = parse_report(&text, "r.md").unwrap();
    assert_eq!(src.reviews.len(), 2_000);
    for (k, r) in src.reviews.iter().enumerate() {
        assert_eq!(r.agent, format!("agent{k}"));
        assert_eq!(r.findings.len(), 1, "{}", r.agent);
        assert!(
            r.raw.ends_with(&format!("still {}", names[k])),
            "{}",
            r.agent
        );
    }
    assert!(
        src.warnings.is_empty(),
        "{:?}",
        &src.warnings[..src.warnings.len().min(3)]
    );
}

/// A title line of 40,000 backticked locations (issue 20: quadratic, 91 s): the finding keeps
/// its first `MAX_LOCATIONS` places, in order, and a warning with the line says how many it
/// cited. Consolidation then compares a bounded list.
#[test]
fn a_title_of_forty_thousand_locations_keeps_the_first_hundred_with_a_warning() {
    let locations: Vec<String> = (0..40_000)
        .map(|i| format!("`src/f{}.rs:{}`", i % 97, i + 1))
        .collect();
    let text = format!(
        "## Findings\n\n### Important Issues\n\n1. **Title here** — {} (important, gap)\n\nBody.\n",
        locations.join(", ")
    );
    let r = parse_review("claude", &text);
    assert_eq!(r.findings.len(), 1);
    let f = &r.findings[0];
    assert_eq!(f.title, "Title here");
    assert_eq!(f.severity, Some(Severity::Important));
    let kept: Vec<String> = f.locations.iter().map(|l| l.to_string()).collect();
    let first: Vec<String> = (0..deep_review::parse::MAX_LOCATIONS)
        .map(|i| format!("src/f{}.rs:{}", i % 97, i + 1))
        .collect();
    assert_eq!(kept, first);
    let warning = r
        .warnings
        .iter()
        .find(|w| w.message.contains("cites 40000 places"))
        .expect("a warning about the cut");
    assert_eq!(warning.line, Some(5));
    // The same finding as JSON is cut the same way.
    let json = serde_json::json!({"findings": [{"id": "I1", "title": "t", "severity": "important",
        "locations": (0..40_000).map(|i| serde_json::json!({"path": "a.go", "start": i + 1})).collect::<Vec<_>>()}]});
    let r = parse_review("codex", &json.to_string());
    assert_eq!(
        r.findings[0].locations.len(),
        deep_review::parse::MAX_LOCATIONS
    );
    assert!(
        r.warnings
            .iter()
            .any(|w| w.message.contains("cites 40000 places"))
    );
}

/// Lines of 40,000 `(` with no `)` (each used to be searched to its end for a `)`): the
/// severity note after them is still read, and a note-like `(` run reads as no note.
#[test]
fn many_open_parentheses_before_a_severity_note() {
    let noise = "(a ".repeat(40_000);
    let text = format!(
        "## Findings\n\n### Suggestions\n\n1. **Title** — {noise} `a.go:3` (important, gap)\n\nBody {}\n",
        "(important ".repeat(40_000)
    );
    let r = parse_review("claude", &text);
    assert_eq!(r.findings.len(), 1);
    let f = &r.findings[0];
    assert_eq!(f.severity, Some(Severity::Important));
    assert_eq!(
        f.category.as_ref().map(|c| c.to_string()).as_deref(),
        Some("gap")
    );
    assert_eq!(f.locations[0].to_string(), "a.go:3");
}
