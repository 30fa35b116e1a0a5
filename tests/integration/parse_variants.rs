//! Layouts real reviews and reports take that the contract does not ask for (issue 11, "Parser"),
//! each on an example written for this project: a location inside the bold title, a review
//! indented by four spaces or wrapped in an outer fence, severity groups as bold bullets, links
//! to lines, `<!--` and `<pre>` left open; in reports, `## Resolution` and reviewer headings
//! inside a review, a wrapped review before the next reviewer, and appendices that hold no raw
//! reviews.

use deep_review::parse::parse_review;
use deep_review::report::markdown_read::parse_report;
use deep_review::types::{Finding, Review, Severity};

fn ids(r: &Review) -> Vec<&str> {
    r.findings.iter().map(|f| f.id.as_str()).collect()
}

fn titles(r: &Review) -> Vec<&str> {
    r.findings.iter().map(|f| f.title.as_str()).collect()
}

fn locs(f: &Finding) -> Vec<String> {
    f.locations.iter().map(|l| l.to_string()).collect()
}

fn agents(src: &deep_review::report::markdown_read::ReportSource) -> Vec<&str> {
    src.reviews.iter().map(|r| r.agent.as_str()).collect()
}

#[test]
fn a_location_inside_the_bold_title_is_the_finding_location() {
    let r = parse_review(
        "codex",
        "## Suggestions\n\n\
         **S2. Cache entries never expire — `pkg/cache/store.go:12-20`**\n\n\
         Nothing evicts them.\n\n\
         **S3. Typo in the help text (`cmd/root.go:7`)**\n\n\
         `recieve` should be `receive`.\n\n\
         **S4. Rename `pkg/a.go` to `pkg/b.go`**\n\n\
         The name is stale.\n",
    );
    assert_eq!(ids(&r), ["S2", "S3", "S4"]);
    assert_eq!(
        titles(&r),
        [
            "Cache entries never expire",
            "Typo in the help text",
            // No separator before the spans: they are part of the sentence.
            "Rename `pkg/a.go` to `pkg/b.go`",
        ]
    );
    assert_eq!(locs(&r.findings[0]), ["pkg/cache/store.go:12-20"]);
    assert_eq!(locs(&r.findings[1]), ["cmd/root.go:7"]);
    assert_eq!(r.findings[0].severity, Some(Severity::Suggestion));
    assert_eq!(r.findings[0].explanation, "Nothing evicts them.");
}

#[test]
fn a_review_indented_by_four_spaces_is_read_with_its_own_line_numbers() {
    let text = "    ## Important Issues\n\n\
                \x20   1. **Lock held across await** — `src/pool.rs:88` (important, regression)\n\n\
                \x20      The guard lives until the end of the block.\n\n\
                \x20   ## Stray Notes\n\n\
                \x20   Something else.\n";
    let r = parse_review("gemini", text);
    assert_eq!(ids(&r), ["I1"]);
    assert_eq!(r.findings[0].title, "Lock held across await");
    assert_eq!(locs(&r.findings[0]), ["src/pool.rs:88"]);
    assert_eq!(
        r.findings[0].explanation,
        "The guard lives until the end of the block."
    );
    // The unknown section is named at its line in the text as written.
    let w = r
        .warnings
        .iter()
        .find(|w| w.message.contains("Stray Notes"))
        .expect("a warning for the unknown section");
    assert_eq!(w.line, Some(7));
    assert_eq!(r.raw, text);
}

#[test]
fn a_review_wrapped_in_an_outer_fence_with_inner_fences_is_unwrapped() {
    for (open, close) in [("```markdown", "```"), ("````md", "````"), ("```", "```")] {
        let text = format!(
            "{open}\n## Critical Issues\n\n\
             1. **Unchecked index** — `src/table.rs:30-31` (critical, regression)\n\n\
             ```rust\nlet row = rows[i];\n```\n\n\
             `i` comes from the request.\n\n\
             ## Suggestions\n\n\
             1. **Name the constant** — `src/table.rs:9` (suggestion, enhancement)\n\n\
             ```rust\nconst N: usize = 64;\n```\n\
             {close}\n"
        );
        let r = parse_review("claude", &text);
        assert_eq!(ids(&r), ["C1", "S1"], "{open}");
        let c1 = &r.findings[0];
        assert_eq!(
            c1.code.as_ref().map(|c| c.code.as_str()),
            Some("let row = rows[i];\n"),
            "{open}"
        );
        assert_eq!(c1.explanation, "`i` comes from the request.", "{open}");
        assert!(r.findings[1].code.is_some(), "{open}");
    }
}

#[test]
fn severity_groups_written_as_bold_bullets_are_sections() {
    let r = parse_review(
        "codex",
        "## Findings\n\n\
         - **Critical Issues**\n  None.\n\
         - **Important Issues**\n\
         \x20 1. **Token printed to the log** — `src/auth.rs:40` (important, security)\n\
         \x20    The bearer token reaches stdout.\n\
         \x20 2. **Retry storm** — `src/net.rs:7-9`\n\
         \x20    Retries run without backoff.\n\
         - **Suggestions:**\n\
         \x20 - **Rename `tmp`** — `src/util.rs:3`\n\
         \x20   The name says nothing.\n\
         - **Design Observations**\n\
         \x20 - **Strengths** — the retry policy is one type.\n",
    );
    assert_eq!(ids(&r), ["I1", "I2", "S1"]);
    assert_eq!(
        titles(&r),
        ["Token printed to the log", "Retry storm", "Rename `tmp`"]
    );
    let sev: Vec<Option<Severity>> = r.findings.iter().map(|f| f.severity).collect();
    assert_eq!(
        sev,
        [
            Some(Severity::Important),
            Some(Severity::Important),
            Some(Severity::Suggestion)
        ]
    );
    assert_eq!(r.findings[1].explanation, "Retries run without backoff.");
    assert_eq!(locs(&r.findings[2]), ["src/util.rs:3"]);
    assert_eq!(r.observations.len(), 1);
    assert!(r.unparsed.is_empty(), "{:?}", r.unparsed);
    // A bold bullet that is a finding's title (not a section name) stays a finding.
    let r = parse_review(
        "codex",
        "## Suggestions\n\n- **Documentation gaps in the README**\n  The flag is not described.\n",
    );
    assert_eq!(titles(&r), ["Documentation gaps in the README"]);
}

#[test]
fn links_to_lines_keep_the_lines() {
    let r = parse_review(
        "gemini",
        "## Important Issues\n\n\
         1. **Stale read** — [store.go#L47](https://github.com/acme/app/blob/4f1c2d0/pkg/store.go#L47) (important, regression)\n\n\
         The cache is read before the lock.\n\n\
         2. **Double close** — [conn.go](https://github.com/acme/app/blob/main/pkg/net/conn.go#L47-L52) (important, regression)\n\n\
         Closed twice on error.\n\n\
         3. **Leak** — see pkg/pool.go#L12-L14 (important, gap)\n\n\
         Never returned to the pool.\n\n\
         4. **Wrong default**\n\n\
         Location: [config.go#L3](pkg/config.go#L3)\n\n\
         The default is 0.\n",
    );
    assert_eq!(ids(&r), ["I1", "I2", "I3", "I4"]);
    assert_eq!(locs(&r.findings[0]), ["pkg/store.go:47"]);
    assert_eq!(locs(&r.findings[1]), ["pkg/net/conn.go:47-52"]);
    assert_eq!(locs(&r.findings[2]), ["pkg/pool.go:12-14"]);
    assert_eq!(locs(&r.findings[3]), ["pkg/config.go:3"]);
    // The link is the location, not part of the explanation.
    assert_eq!(
        r.findings[0].explanation,
        "The cache is read before the lock."
    );
}

#[test]
fn an_open_comment_or_pre_inside_a_finding_does_not_hide_the_rest() {
    let text = "## Important Issues\n\n\
                1. **Missing timeout** — `src/http.rs:20` (important, gap)\n\n\
                <!-- reviewer: check the other clients too\n\n\
                Requests can hang forever.\n\n\
                2. **Unbounded body** — `src/http.rs:41` (important, security)\n\n\
                <pre>\nread_to_end(&mut body)\n\n\
                The body size is not limited.\n\n\
                ## Suggestions\n\n\
                1. **Log the URL** — `src/http.rs:55` (suggestion, enhancement)\n\n\
                It helps debugging.\n";
    let r = parse_review("claude", text);
    assert_eq!(ids(&r), ["I1", "I2", "S1"]);
    assert!(r.findings[0].explanation.contains("hang forever"));
    assert!(r.findings[1].explanation.contains("not limited"));
    let lines: Vec<Option<usize>> = r
        .warnings
        .iter()
        .filter(|w| w.message.contains("never closed"))
        .map(|w| w.line)
        .collect();
    assert_eq!(lines, [Some(5), Some(11)], "{:?}", r.warnings);
    assert_eq!(r.raw, text);
}

const HEAD: &str = "# Deep Review: 20261203-090000-pr-7\n\n| | |\n|---|---|\n\
                    | **Reviewers** | Claude Opus 4.7, Codex GPT 5.5, Gemini 3.1 Pro |\n\n\
                    ## Executive Summary\n\nWritten by the tool.\n\n\
                    ## Appendix: Original Reviews\n\n";

#[test]
fn a_resolution_line_inside_a_review_does_not_cut_the_appendix() {
    let text = format!(
        "{HEAD}### Claude Opus 4.7\n\n## Important Issues\n\n\
         1. **A** — `a.rs:1` (important, gap)\n\nBody.\n\n\
         ## Resolution\n\nThe author should pick one of the two fixes.\n\n\
         ### Codex GPT 5.5\n\n## Suggestions\n\n1. **B** — `b.rs:2` (suggestion, gap)\n\nBody.\n\n\
         ### Gemini 3.1 Pro\n\n## Resolution\n\nNot the report's.\n\n\
         ## Coverage Summary\n\n- `c.rs` — ok\n\n---\n\n\
         ## Resolution\n\n| # | Finding | Action |\n|---|---|---|\n| 1 | A | Fixed |\n"
    );
    let src = parse_report(&text, "r.md").unwrap();
    assert_eq!(agents(&src), ["claude", "codex", "gemini"]);
    assert_eq!(src.reviews[0].findings.len(), 1);
    assert!(src.reviews[0].raw.contains("pick one of the two fixes"));
    assert_eq!(titles(&src.reviews[1]), ["B"]);
    // Gemini's own Resolution and Coverage Summary stay in its review; the report's does not.
    let gemini = &src.reviews[2];
    assert!(gemini.raw.contains("Not the report's."));
    assert_eq!(gemini.coverage.len(), 1);
    assert!(!gemini.raw.contains("| 1 | A | Fixed |"));
    assert!(src.warnings.is_empty(), "{:?}", src.warnings);
}

#[test]
fn a_reviewer_heading_inside_a_review_does_not_move_its_later_findings() {
    // Claude writes a `### Codex GPT 5.5` section of its own (about Codex's earlier comment),
    // then more findings; the appendix's real Codex heading follows.
    let text = format!(
        "{HEAD}### Claude Opus 4.7\n\n## Important Issues\n\n\
         1. **A** — `a.rs:1` (important, gap)\n\nBody.\n\n\
         ### Codex GPT 5.5\n\nIts earlier claim about `b.rs` does not hold.\n\n\
         ## Suggestions\n\n1. **C** — `c.rs:3` (suggestion, gap)\n\nBody.\n\n\
         ### Codex GPT 5.5\n\n## Suggestions\n\n1. **B** — `b.rs:2` (suggestion, gap)\n\nBody.\n\n\
         ### Gemini 3.1 Pro\n\n## Suggestions\n\n1. **D** — `d.rs:4` (suggestion, gap)\n\nBody.\n\n\
         Gemini adds:\n### Claude Opus 4.7\nnot a heading of the appendix either\n"
    );
    let src = parse_report(&text, "r.md").unwrap();
    assert_eq!(agents(&src), ["claude", "codex", "gemini"]);
    assert_eq!(titles(&src.reviews[0]), ["A", "C"]);
    assert_eq!(titles(&src.reviews[1]), ["B"]);
    assert_eq!(titles(&src.reviews[2]), ["D"]);
    assert!(
        src.reviews[2]
            .raw
            .ends_with("not a heading of the appendix either")
    );
    assert!(src.warnings.is_empty(), "{:?}", src.warnings);

    // Short names: `### Codex` inside Claude's review, in an appendix of short-name headings.
    let text = "| **Reviewers** | Claude Opus 4.7, Codex GPT 5.5 |\n\n\
                ## Appendix: Original Reviews\n\n### Claude\n\n## Suggestions\n\n\
                1. **A** — `a.rs:1` (suggestion, gap)\n\nBody.\n\n### Codex\n\nAbout Codex.\n\n\
                2. **C** — `c.rs:3` (suggestion, gap)\n\nBody.\n\n\
                ### Codex\n\n## Suggestions\n\n1. **B** — `b.rs:2` (suggestion, gap)\n\nBody.\n";
    let src = parse_report(text, "r.md").unwrap();
    assert_eq!(agents(&src), ["claude", "codex"]);
    assert_eq!(titles(&src.reviews[0]), ["A", "C"]);
    assert_eq!(titles(&src.reviews[1]), ["B"]);
    assert_eq!(
        src.reviews[1].display_name.as_deref(),
        Some("Codex GPT 5.5")
    );

    // In an appendix of full names, a bare `### Codex` is never a reviewer heading.
    let text = format!(
        "{HEAD}### Claude Opus 4.7\n\n## Suggestions\n\n1. **A** — `a.rs:1` (suggestion, gap)\n\n\
         Body.\n\n### Codex\n\nAbout Codex.\n\n2. **C** — `c.rs:3` (suggestion, gap)\n\nBody.\n"
    );
    let src = parse_report(&text, "r.md").unwrap();
    assert_eq!(agents(&src), ["claude"]);
    assert_eq!(titles(&src.reviews[0]), ["A", "C"]);
}

#[test]
fn a_wrapped_review_does_not_swallow_the_next_reviewer() {
    // The outer fence and the inner ones have the same length: a CommonMark reader closes the
    // wrapper at the first inner fence and opens a block at its last line that runs on into
    // the next review.
    let text = format!(
        "{HEAD}### Claude Opus 4.7\n\n```markdown\n## Important Issues\n\n\
         1. **A** — `a.rs:1` (important, gap)\n\n```rust\nlet a = 1;\n```\n\nBody.\n```\n\n\
         ### Codex GPT 5.5\n\n## Suggestions\n\n1. **B** — `b.rs:2` (suggestion, gap)\n\n\
         ```rust\nlet b = 2;\n```\n\nBody.\n\n\
         ### Gemini 3.1 Pro\n\n## Suggestions\n\n1. **D** — `d.rs:4` (suggestion, gap)\n\nBody.\n"
    );
    let src = parse_report(&text, "r.md").unwrap();
    assert_eq!(agents(&src), ["claude", "codex", "gemini"]);
    let claude = &src.reviews[0];
    assert_eq!(titles(claude), ["A"]);
    assert_eq!(
        claude.findings[0].code.as_ref().map(|c| c.code.as_str()),
        Some("let a = 1;\n")
    );
    assert_eq!(titles(&src.reviews[1]), ["B"]);
    assert_eq!(titles(&src.reviews[2]), ["D"]);
    assert!(src.warnings.is_empty(), "{:?}", src.warnings);
}

#[test]
fn an_open_comment_in_a_review_does_not_hide_the_reviews_after_it() {
    let text = format!(
        "{HEAD}### Claude Opus 4.7\n\n## Suggestions\n\n1. **A** — `a.rs:1` (suggestion, gap)\n\n\
         <!-- draft\n\nBody.\n\n### Codex GPT 5.5\n\n<pre>\n\n## Suggestions\n\n\
         1. **B** — `b.rs:2` (suggestion, gap)\n\nBody.\n\n\
         ### Gemini 3.1 Pro\n\n## Suggestions\n\n1. **D** — `d.rs:4` (suggestion, gap)\n\nBody.\n"
    );
    let src = parse_report(&text, "r.md").unwrap();
    assert_eq!(agents(&src), ["claude", "codex", "gemini"]);
    let found: Vec<Vec<&str>> = src.reviews.iter().map(titles).collect();
    assert_eq!(found, [vec!["A"], vec!["B"], vec!["D"]]);
}

#[test]
fn an_appendix_of_pointers_and_summaries_is_a_warning_naming_reviewer_and_line() {
    let text = format!(
        "{HEAD}### Claude Opus 4.7\n\nSee /tmp/deep-review-7/review-claude.md\n\n\
         ### Codex GPT 5.5\n\nCodex found two minor naming issues.\n\n\
         ### Gemini 3.1 Pro\n\n## Suggestions\n\n1. **D** — `d.rs:4` (suggestion, gap)\n\nBody.\n"
    );
    let src = parse_report(&text, "r.md").unwrap();
    assert_eq!(agents(&src), ["claude", "codex", "gemini"]);
    assert_eq!(src.warnings.len(), 2, "{:?}", src.warnings);
    let claude_line = text
        .lines()
        .position(|l| l == "### Claude Opus 4.7")
        .unwrap()
        + 1;
    let w = &src.warnings[0];
    assert!(w.starts_with(&format!("line {claude_line}:")), "{w}");
    assert!(w.contains("Claude Opus 4.7"), "{w}");
    assert!(w.contains("/tmp/deep-review-7/review-claude.md"), "{w}");
    assert!(w.contains("--raw claude="), "{w}");
    let w = &src.warnings[1];
    assert!(w.starts_with(&format!("line {}:", claude_line + 4)), "{w}");
    assert!(w.contains("Codex GPT 5.5"), "{w}");
    assert!(w.contains("two minor naming issues"), "{w}");
}

#[test]
fn an_indented_review_and_a_review_titled_with_its_reviewer_in_an_appendix() {
    let text = format!(
        "{HEAD}### Claude Opus 4.7\n\n\
         \x20   ## Suggestions\n\n\
         \x20   1. **A** — `a.rs:1` (suggestion, gap)\n\n\
         \x20      Body.\n\n\
         ### Codex GPT 5.5\n\n---\n\n### Codex GPT 5.5 — review of PR 7\n\n\
         ## Suggestions\n\n1. **B** — `b.rs:2` (suggestion, gap)\n\nBody.\n"
    );
    let src = parse_report(&text, "r.md").unwrap();
    assert_eq!(agents(&src), ["claude", "codex"]);
    assert_eq!(titles(&src.reviews[0]), ["A"]);
    assert!(src.reviews[0].raw.starts_with("    ## Suggestions"));
    assert_eq!(titles(&src.reviews[1]), ["B"]);
    assert!(src.reviews[1].raw.contains("review of PR 7"));
    assert_eq!(
        src.warnings,
        ["reviewer Gemini 3.1 Pro has no raw review in the appendix"]
    );
}
