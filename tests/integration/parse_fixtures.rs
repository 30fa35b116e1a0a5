//! The parse stage on the four reference reports in `../shared/fixtures/reports`: the metadata
//! of each report and, for every raw review in its appendix, the findings by severity as the
//! agent wrote them (counted by hand from the raw reviews), coverage entries and design
//! observations. Ignored unless asked for (`--run-ignored all`): it reads `../shared`.

use std::path::PathBuf;

use deep_review::report::markdown_read::{ReportSource, parse_report, read_report};
use deep_review::types::{Review, Severity, Verdict};

fn reports_dir() -> Option<PathBuf> {
    Some(crate::support::shared::shared_dir("fixtures/reports"))
}

fn load(name: &str) -> Option<ReportSource> {
    let dir = reports_dir()?;
    let path = dir.join(name);
    Some(read_report(&path).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// [critical, important, suggestion] as the agent wrote them.
fn counts(r: &Review) -> [usize; 3] {
    let mut c = [0; 3];
    for f in &r.findings {
        match f.severity {
            Some(Severity::Critical) => c[0] += 1,
            Some(Severity::Important) => c[1] += 1,
            Some(Severity::Suggestion) => c[2] += 1,
            None => panic!("{}: finding {} has no severity", r.agent, f.id),
        }
    }
    c
}

/// One agent's expected figures: name, display, counts, coverage entries, observations.
type AgentExpect = (&'static str, &'static str, [usize; 3], usize, usize);

fn check_agents(src: &ReportSource, expected: &[AgentExpect]) {
    let got: Vec<&str> = src.reviews.iter().map(|r| r.agent.as_str()).collect();
    let want: Vec<&str> = expected.iter().map(|e| e.0).collect();
    assert_eq!(got, want, "agents of {}", src.meta.id);
    // Every metadata row is understood and every reviewer has a review.
    assert!(
        src.warnings.is_empty(),
        "{}: {:?}",
        src.meta.id,
        src.warnings
    );
    for (r, (name, display, c, cov, obs)) in src.reviews.iter().zip(expected) {
        assert_eq!(r.display_name.as_deref(), Some(*display), "{name}");
        assert_eq!(
            counts(r),
            *c,
            "{} {name}: [critical, important, suggestion]",
            src.meta.id
        );
        assert_eq!(
            r.coverage.len(),
            *cov,
            "{} {name}: coverage entries",
            src.meta.id
        );
        assert_eq!(
            r.observations.len(),
            *obs,
            "{} {name}: design observations",
            src.meta.id
        );
        for f in &r.findings {
            assert!(!f.title.trim().is_empty(), "{name} {} has a title", f.id);
            assert!(
                !f.title.starts_with("**") && !f.title.ends_with("**"),
                "{name} {}: title without bold markers: {:?}",
                f.id,
                f.title
            );
        }
        // The appendix text is kept verbatim, trimmed of the `---` separators only.
        assert!(
            !r.raw.starts_with("---") && !r.raw.ends_with("---"),
            "{name}"
        );
        assert!(
            r.warnings
                .iter()
                .all(|w| !w.message.contains("no severity")),
            "{name}: {:?}",
            r.warnings
        );
    }
}

fn review<'a>(src: &'a ReportSource, agent: &str) -> &'a Review {
    src.reviews
        .iter()
        .find(|r| r.agent == agent)
        .unwrap_or_else(|| panic!("no review by {agent}"))
}

fn finding<'a>(r: &'a Review, id: &str) -> &'a deep_review::types::Finding {
    r.findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("{} has no finding {id}: {:?}", r.agent, ids(r)))
}

fn ids(r: &Review) -> Vec<&str> {
    r.findings.iter().map(|f| f.id.as_str()).collect()
}

fn locs(f: &deep_review::types::Finding) -> Vec<String> {
    f.locations.iter().map(|l| l.to_string()).collect()
}

#[test]
#[ignore = "needs ../shared (reference reports and benchmark data): run with --run-ignored all"]
fn pr_238_metadata_and_reviews() {
    let Some(src) = load("20260316-111459-pr-238.md") else {
        return;
    };
    let m = &src.meta;
    assert_eq!(m.id, "20260316-111459-pr-238");
    assert_eq!(
        m.date
            .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
            .as_deref(),
        Some("2026-03-16 11:14")
    );
    assert_eq!(
        (m.repo.as_deref(), m.round, m.author.as_deref()),
        (None, None, None)
    );
    let pr = m.pr.as_ref().unwrap();
    assert_eq!(pr.number, 238);
    assert_eq!(pr.title, "Split RDD finalizer into /cleanup and /owned");
    assert_eq!(m.branch.as_deref(), Some("split-finalizers"));
    assert_eq!(m.commits.len(), 1);
    assert_eq!(m.commits[0].sha, "9de9269");
    assert_eq!(m.wall_clock_s, Some(747.0));
    assert_eq!(src.verdict, Some(Verdict::MergeWithFixes));
    assert_eq!(
        src.verdict_rationale,
        "upgrade path for legacy finalizers must be addressed"
    );
    check_agents(
        &src,
        &[
            ("claude", "Claude Opus 4.6", [0, 1, 2], 0, 2),
            ("codex", "Codex GPT 5.4", [0, 1, 1], 0, 1),
            ("gemini", "Gemini 3.1 Pro", [1, 1, 1], 0, 1),
        ],
    );
    let claude = review(&src, "claude");
    let i1 = finding(claude, "I1");
    assert_eq!(
        i1.title,
        "Existing template ConfigMaps get stuck in Terminating on upgrade"
    );
    assert_eq!(
        locs(i1),
        [
            "pkg/controllers/base/finalizer.go:162",
            "pkg/controllers/lima/limavm/controller.go:210-211"
        ]
    );
    assert_eq!(i1.category.as_ref().map(|c| c.as_str()), Some("gap"));
    assert!(
        i1.fix
            .as_deref()
            .unwrap()
            .starts_with("Add migration logic")
    );
    // Finding without line numbers keeps its path.
    assert_eq!(
        locs(finding(claude, "S2")),
        ["pkg/controllers/base/finalizer_test.go"]
    );
    // The test-only list before "Untested scenarios" is not a gap.
    assert_eq!(claude.testing.gaps.len(), 2);
    assert!(claude.testing.gaps[0].contains("Upgrade path"));
    // Gemini numbers across sections: 1 under Critical, 2 under Important, 3 under Suggestions.
    let gemini = review(&src, "gemini");
    assert_eq!(ids(gemini), ["C1", "I2", "S3"]);
    let obs = &gemini.observations[0];
    assert_eq!(obs.title.as_deref(), Some("Two Finalizers vs One"));
    assert_eq!(obs.scopes, ["in-scope"]);
    let codex = review(&src, "codex");
    assert_eq!(
        codex.observations[0].title.as_deref(),
        Some(
            "`DeleteOwnedResources()` now depends on a migration story, not just a new convention"
        )
    );
    assert!(
        codex.observations[0]
            .text
            .starts_with("The split is a good model")
    );
}

#[test]
#[ignore = "needs ../shared (reference reports and benchmark data): run with --run-ignored all"]
fn pr_236_metadata_and_reviews() {
    let Some(src) = load("20260324-131047-pr-236.md") else {
        return;
    };
    let m = &src.meta;
    assert_eq!(m.id, "20260324-131047-pr-236");
    assert_eq!(
        m.date
            .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
            .as_deref(),
        Some("2026-03-24 13:10")
    );
    assert_eq!(m.round, Some(5));
    assert_eq!(m.author.as_deref(), Some("Nino-K"));
    let pr = m.pr.as_ref().unwrap();
    assert_eq!(pr.number, 236);
    assert_eq!(pr.title, "Implement App controller lifecycle for LimaVM");
    assert_eq!(
        pr.url.as_deref(),
        Some("https://github.com/rancher-sandbox/rancher-desktop-daemon/pull/236")
    );
    assert_eq!(
        m.branch.as_deref(),
        Some("app-controller-create-delete-limavm")
    );
    let shas: Vec<&str> = m.commits.iter().map(|c| c.sha.as_str()).collect();
    assert_eq!(shas, ["2a3c5b2", "049a3a0"]);
    assert_eq!(m.commits[1].subject, "Add Bats test to App Controller");
    let names: Vec<&str> = m.reviewers.iter().map(|r| r.display.as_str()).collect();
    assert_eq!(
        names,
        ["Claude Opus 4.6", "Codex GPT 5.4", "Gemini 3.1 Pro"]
    );
    assert_eq!(m.wall_clock_s, Some(906.0));
    assert_eq!(src.verdict, Some(Verdict::MergeWithFixes));
    assert!(
        src.verdict_rationale
            .starts_with("ownership violation in deletion path")
    );
    check_agents(
        &src,
        &[
            ("claude", "Claude Opus 4.6", [0, 2, 3], 9, 5),
            ("codex", "Codex GPT 5.4", [0, 2, 0], 9, 2),
            ("gemini", "Gemini 3.1 Pro", [2, 2, 1], 9, 0),
        ],
    );
    let claude = review(&src, "claude");
    assert_eq!(
        claude.verdict.as_deref(),
        Some("Approve with requested changes")
    );
    let i2 = finding(claude, "I2");
    assert_eq!(
        i2.title,
        "Mirrored ObservedGeneration refers to the wrong resource"
    );
    assert_eq!(locs(i2), ["app_controller.go:207"]);
    assert!(i2.fix_diff.as_deref().unwrap().contains("app.Generation"));
    assert_eq!(i2.code.as_ref().unwrap().language.as_deref(), Some("go"));
    // Coverage as a table.
    assert_eq!(
        claude.coverage[4].path,
        "pkg/controllers/app/app/controllers/app_controller.go"
    );
    assert_eq!(
        claude.coverage[4].status,
        "Findings 1, 2 (important); Suggestions 1, 2"
    );
    assert_eq!(claude.observations[0].scopes, ["in-scope"]);
    assert_eq!(claude.testing.gaps.len(), 3);
    assert_eq!(claude.documentation.len(), 2);
    assert_eq!(claude.limitations.len(), 1);
    // "No unresolved PR review comments." is an empty section.
    assert!(claude.unresolved_feedback.is_empty());

    // Codex writes its sections as bold paragraphs.
    let codex = review(&src, "codex");
    assert_eq!(codex.verdict.as_deref(), Some("Changes requested"));
    assert!(codex.summary.starts_with("This PR adds the App controller"));
    let i2 = finding(codex, "I2");
    assert_eq!(
        locs(i2),
        [
            "pkg/controllers/app/app/lima.yaml:13-14",
            "pkg/controllers/app/app/lima.yaml:30-37"
        ]
    );
    assert_eq!(i2.severity, Some(Severity::Important));
    assert_eq!(codex.coverage[6].status, "Finding 2");
    assert_eq!(codex.testing.gaps.len(), 2);

    let gemini = review(&src, "gemini");
    assert_eq!(ids(gemini), ["C1", "C2", "I1", "I2", "S1"]);
    let c1 = finding(gemini, "C1");
    assert_eq!(c1.title, "Resource Leak on App Deletion");
    assert_eq!(
        locs(c1),
        ["pkg/controllers/app/app/controllers/app_controller.go:69-71"]
    );
    assert!(c1.explanation.contains("transient API error"));
    assert!(c1.fix.as_deref().unwrap().starts_with("Return the error"));
    assert!(c1.fix_diff.is_some());
}

#[test]
#[ignore = "needs ../shared (reference reports and benchmark data): run with --run-ignored all"]
fn pr_361_round_1_metadata_and_reviews() {
    let Some(src) = load("20260521-153126-pr-361.md") else {
        return;
    };
    let m = &src.meta;
    assert_eq!(m.id, "20260521-153126-pr-361");
    assert_eq!(
        m.repo.as_deref(),
        Some("rancher-sandbox/rancher-desktop-daemon")
    );
    assert_eq!(m.round, Some(1));
    assert_eq!(m.author.as_deref(), Some("jandubois"));
    assert_eq!(m.branch, None);
    assert_eq!(m.commits.len(), 3);
    assert_eq!(m.reviewers[0].effort.as_deref(), Some("xhigh"));
    assert_eq!(m.reviewers[2].effort.as_deref(), Some("default"));
    assert_eq!(m.wall_clock_s, Some(605.0));
    assert_eq!(src.verdict, Some(Verdict::MergeWithFixes));
    check_agents(
        &src,
        &[
            ("claude", "Claude Opus 4.7", [0, 0, 4], 4, 4),
            ("codex", "Codex GPT 5.5", [0, 0, 2], 4, 2),
            ("gemini", "Gemini 3.1 Pro", [0, 2, 0], 4, 1),
        ],
    );
    let claude = review(&src, "claude");
    assert_eq!(ids(claude), ["S1", "S2", "S3", "S4"]);
    assert_eq!(
        locs(finding(claude, "S2")),
        [
            "pkg/controllers/app/kubernetes/controllers/kube_reconciler.go:127",
            "pkg/controllers/app/kubernetes/controllers/kube_reconciler.go:207-209"
        ]
    );
    let concern = &claude.observations[0];
    assert_eq!(
        concern.title.as_deref(),
        Some("Async current-context probe failures still cannot reach the user")
    );
    assert!(concern.text.contains("`kube_reconciler.go:200-201`"));
    let gemini = review(&src, "gemini");
    // Gemini puts the `(important, gap)` note at the end of the body.
    let i1 = finding(gemini, "I1");
    assert_eq!(i1.severity, Some(Severity::Important));
    assert_eq!(i1.category.as_ref().map(|c| c.as_str()), Some("gap"));
    assert!(i1.fix.as_deref().unwrap().starts_with("Add nil checks"));
    let i2 = finding(gemini, "I2");
    assert_eq!(i2.title, "Missing BATS test for MergeFailed condition");
    assert!(!i2.fix.as_deref().unwrap().contains("(important, gap)"));
    // The last review stops before `## Resolution`.
    assert!(!gemini.raw.contains("Resolution"));
    assert!(gemini.raw.ends_with("— I1"));
}

#[test]
#[ignore = "needs ../shared (reference reports and benchmark data): run with --run-ignored all"]
fn pr_361_round_2_metadata_and_reviews() {
    let Some(src) = load("20260521-205512-pr-361.md") else {
        return;
    };
    let m = &src.meta;
    assert_eq!(m.id, "20260521-205512-pr-361");
    assert_eq!(
        m.date
            .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
            .as_deref(),
        Some("2026-05-21 20:55")
    );
    assert_eq!(m.round, Some(2));
    assert_eq!(m.commits.len(), 4);
    assert_eq!(
        m.commits[0].subject,
        "Document KubernetesReady reasons in api_app.md"
    );
    assert_eq!(m.wall_clock_s, Some(2265.0));
    assert_eq!(src.verdict, Some(Verdict::MergeWithOptionalFixes));
    check_agents(
        &src,
        &[
            ("claude", "Claude Opus 4.7", [0, 0, 6], 8, 4),
            ("codex", "Codex GPT 5.5", [0, 0, 1], 8, 2),
            ("gemini", "Gemini 3.1 Pro", [0, 2, 1], 8, 2),
        ],
    );
    let claude = review(&src, "claude");
    // Prose before the first heading is kept, and the `---` after it stays in the raw text.
    assert!(claude.raw.starts_with("Now I have a complete picture."));
    assert!(claude.unparsed.iter().any(|u| u.starts_with("Now I have")));
    assert!(claude.warnings.iter().any(|w| w.line == Some(1)));
    // The report itself reads cleanly: the warning is the review's.
    assert!(src.warnings.is_empty(), "{:?}", src.warnings);
    assert_eq!(
        claude.verdict.as_deref(),
        Some("Approve with minor cleanups")
    );
    assert_eq!(ids(claude), ["S1", "S2", "S3", "S4", "S5", "S6"]);
    assert_eq!(
        finding(claude, "S6").category.as_ref().map(|c| c.as_str()),
        Some("enhancement")
    );
    assert!(
        claude
            .commit_structure
            .as_deref()
            .unwrap()
            .contains("f0ff640")
    );
    let concern = &claude.observations[0];
    assert_eq!(concern.scopes, ["future"]);
    assert!(concern.text.contains("```diff"), "{}", concern.text);
    let codex = review(&src, "codex");
    assert!(
        codex
            .observations
            .iter()
            .all(|o| o.text.starts_with("Promoting") || o.text.starts_with("Returning"))
    );
    let gemini = review(&src, "gemini");
    assert_eq!(
        locs(finding(gemini, "I2")),
        [
            "pkg/controllers/app/kubernetes/controllers/kube_reconciler.go:76-80",
            "pkg/controllers/app/kubernetes/controllers/kube_reconciler.go:355-374"
        ]
    );
    assert_eq!(
        gemini.observations[0].title.as_deref(),
        Some("Aggressive current-context hijacking")
    );
    assert_eq!(gemini.observations[0].scopes, ["in-scope"]);
    assert_eq!(gemini.coverage[5].status, "I1, I2, S1");
}

/// A report written in the reference layout from the raw reviews of a fixture reads back to the
/// same raw reviews and the same findings.
#[test]
#[ignore = "needs ../shared (reference reports and benchmark data): run with --run-ignored all"]
fn round_trip_through_the_reference_layout() {
    let Some(dir) = reports_dir() else {
        return;
    };
    for name in [
        "20260316-111459-pr-238.md",
        "20260324-131047-pr-236.md",
        "20260521-153126-pr-361.md",
        "20260521-205512-pr-361.md",
    ] {
        let src = read_report(&dir.join(name)).unwrap();
        let mut out = String::new();
        out.push_str(&format!(
            "# Deep Review: {}\n\n| | |\n|---|---|\n",
            src.meta.id
        ));
        let reviewers: Vec<String> = src
            .meta
            .reviewers
            .iter()
            .map(|r| r.display.clone())
            .collect();
        out.push_str(&format!("| **Reviewers** | {} |\n\n", reviewers.join(", ")));
        out.push_str("## Executive Summary\n\nWritten by the tool.\n\n---\n\n");
        out.push_str("## Appendix: Original Reviews\n\n");
        for r in &src.reviews {
            out.push_str(&format!("### {}\n\n{}\n\n", r.display(), r.raw));
        }
        let back = parse_report(&out, "written.md").unwrap();
        assert_eq!(back.reviews.len(), src.reviews.len(), "{name}");
        for (a, b) in src.reviews.iter().zip(&back.reviews) {
            assert_eq!(a.agent, b.agent, "{name}");
            assert_eq!(a.raw, b.raw, "{name} {}", a.agent);
            assert_eq!(a.findings, b.findings, "{name} {}", a.agent);
        }
    }
}
