//! Coverage measured against the change: the changed files come from a real repository (the
//! verify stage's outcome), the agent's claims from its coverage summary and its findings.

use crate::support::repo as repo_support;

use deep_review::types::{CoverageEntry, Finding, Location, Review};
use deep_review::verify::coverage::{Coverage, coverage_of};
use deep_review::verify::{VerifyContext, verify_reviews};
use repo_support::Repo;

fn entry(path: &str) -> CoverageEntry {
    CoverageEntry {
        path: path.to_string(),
        status: "Reviewed".to_string(),
    }
}

#[test]
fn files_reviewed_and_misses_come_from_the_change() {
    let r = Repo::new();
    for f in [
        "src/api/server.go",
        "src/api/routes.go",
        "docs/usage.md",
        "README.md",
    ] {
        r.write(f, "one\n");
    }
    r.write("src/old.go", "package src\n");
    let base = r.commit("base");
    for f in ["src/api/server.go", "src/api/routes.go", "docs/usage.md"] {
        r.write(f, "one\ntwo\n");
    }
    r.write("src/api/auth.go", "package api\n");
    std::fs::remove_file(r.file("src/old.go")).expect("rm");
    r.commit("head");
    let repo = r.path();

    let mut finding = Finding::new("I1", "auth is not checked");
    finding
        .locations
        .push(Location::new("auth.go", Some(1), None));
    let mut outside = Finding::new("S1", "the readme is stale");
    outside
        .locations
        .push(Location::new("README.md", Some(1), None));
    let mut reviews = vec![
        Review {
            agent: "claude".to_string(),
            // A bare name, a line-suffixed path, and a file outside the change.
            coverage: vec![
                entry("server.go"),
                entry("src/api/routes.go:1-2"),
                entry("README.md"),
            ],
            findings: vec![finding, outside],
            ..Review::default()
        },
        Review {
            agent: "codex".to_string(),
            coverage: vec![entry("src/**/*.go"), entry("docs/")],
            ..Review::default()
        },
        Review {
            agent: "gemini".to_string(),
            ..Review::default()
        },
    ];
    let ctx = VerifyContext {
        repo: repo.to_path_buf(),
        head: "HEAD".to_string(),
        base: Some(base),
        checkout: None,
    };
    let outcome = verify_reviews(&ctx, &mut reviews).expect("verify runs");
    let mut changed = outcome.changed_paths();
    changed.sort();
    assert_eq!(
        changed,
        vec![
            "docs/usage.md",
            "src/api/auth.go",
            "src/api/routes.go",
            "src/api/server.go",
            "src/old.go"
        ]
    );

    // The finding on `auth.go` counts as reviewing it; the deleted file and the docs are missed.
    assert_eq!(
        coverage_of(&reviews[0], &changed),
        Coverage {
            reviewed: 3,
            total: 5,
            misses: vec!["docs/usage.md".to_string(), "src/old.go".to_string()],
        }
    );
    let count = coverage_of(&reviews[0], &changed).files_reviewed();
    assert_eq!((count.reviewed, count.total), (3, 5));
    assert_eq!(
        coverage_of(&reviews[1], &changed),
        Coverage {
            reviewed: 5,
            total: 5,
            misses: vec![],
        }
    );
    assert_eq!(coverage_of(&reviews[2], &changed).misses, changed);

    // Findings outside the change are kept and marked.
    let marks: Vec<bool> = reviews[0]
        .findings
        .iter()
        .map(|f| f.verification.as_ref().expect("verified").outside_change)
        .collect();
    assert_eq!(marks, vec![false, true]);
    assert_eq!(reviews[0].findings[0].locations[0].path, "src/api/auth.go");
}
