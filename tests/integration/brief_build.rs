//! `brief::build` on real repositories: every changed file, the exact diff command, the context
//! file, the output contract, custom templates and their errors.

use crate::support::repo::Repo;
use deep_review::brief::{BriefOptions, build, estimate_tokens};
use deep_review::target::{TargetSpec, resolve};
use deep_review::types::PrInfo;
use deep_review::types::Target;

/// A branch `feat` off main touching a modified, an added, a deleted, a renamed, a binary file and
/// a submodule pointer.
fn feature_repo() -> Repo {
    let repo = Repo::new();
    repo.write("src/lib.rs", "pub fn a() {}\n");
    repo.write("old/name.rs", "one\ntwo\nthree\nfour\nfive\nsix\n");
    repo.write("gone.txt", "bye\n");
    repo.write("logo.png", [0u8, 1, 2]);
    let base = repo.commit("initial");
    repo.git(&["checkout", "-q", "-b", "feat"]);
    repo.write("src/lib.rs", "pub fn a() {}\npub fn b() {}\n");
    repo.write("src/new file.rs", "pub fn c() {}\n");
    std::fs::remove_file(repo.file("gone.txt")).unwrap();
    std::fs::create_dir_all(repo.file("new")).unwrap();
    std::fs::rename(repo.file("old/name.rs"), repo.file("new/name.rs")).unwrap();
    repo.write("logo.png", [0u8, 9, 9, 9]);
    repo.git(&["add", "-A"]);
    repo.add_gitlink("vendor/dep", &base);
    repo.git(&["commit", "-q", "-m", "Add b and c"]);
    repo.write("src/lib.rs", "pub fn a() {}\npub fn b() { }\n");
    repo.commit("Tidy b");
    repo
}

fn target(repo: &Repo) -> Target {
    resolve(
        repo.path(),
        &TargetSpec {
            target: Some("feat".into()),
            ..TargetSpec::default()
        },
    )
    .unwrap()
}

#[test]
fn default_brief_describes_the_whole_change() {
    let repo = feature_repo();
    let t = target(&repo);
    let brief = build(&t, &BriefOptions::default()).unwrap();
    let text = &brief.text;

    assert_eq!(brief.bytes, text.len());
    assert_eq!(brief.estimated_tokens, text.len().div_ceil(4));
    assert_eq!(brief.context_file, None);

    assert!(
        text.contains(&format!("git diff {}..{}", t.merge_base, t.head)),
        "exact diff command"
    );
    assert!(text.contains("- **Branch**: `feat`"));
    assert!(text.contains("- **Author**: Test Author"));
    for c in &t.commits {
        assert!(
            text.contains(&format!("- `{}` {}", c.sha, c.subject)),
            "commit {c:?}"
        );
    }
    assert_eq!(t.changed_files.len(), 6);
    for f in &t.changed_files {
        let listed = text.matches(&format!("- `{}`", f.path)).count();
        assert_eq!(
            listed, 2,
            "{} listed with its counts and in the coverage list",
            f.path
        );
    }
    assert!(text.contains("- `src/lib.rs` (+1 −0)"), "{text}");
    assert!(text.contains("- `src/new file.rs` (+1 −0, added)"));
    assert!(text.contains("- `gone.txt` (+0 −1, deleted)"));
    assert!(text.contains("- `new/name.rs` (+0 −0, renamed) from `old/name.rs`"));
    assert!(text.contains("- `logo.png` (binary, modified)"));
    assert!(text.contains("- `vendor/dep` (submodule pointer added: listed, not diffed)"));
    assert!(text.contains("6 files changed, +2 −1 lines"));

    // Review rules and the output contract the parser reads.
    for needle in [
        "Verify against the code before you flag",
        "Pre-existing versus regression",
        "`critical`",
        "`important`",
        "`suggestion`",
        "`regression`",
        "`gap`",
        "`enhancement`",
        "`in-scope`",
        "`future`",
        "`pre-existing`",
        "**Verdict**:",
        "## Executive Summary",
        "## Findings",
        "### Critical Issues",
        "### Important Issues",
        "### Suggestions",
        "1. **Short title of the defect** — `path/to/file.ext:120-134` (important, regression)",
        "Fix:",
        "```diff",
        "## Design Observations",
        "**Concerns**",
        "**Strengths**",
        "## Testing Assessment",
        "## Documentation Assessment",
        "## Acknowledged Limitations",
        "## Coverage Summary",
        "| File | Status |",
        "every one of these\n6 changed files",
    ] {
        assert!(text.contains(needle), "missing {needle:?}");
    }
    assert!(
        !text.contains("{{") && !text.contains("{%"),
        "no template syntax left"
    );
    assert!(
        !text.contains("# Project context"),
        "no context file in this repo"
    );
    assert!(!text.contains("Pull request"));
    assert!(!text.contains("\n\n\n"), "no runs of blank lines");
}

#[test]
fn context_file_is_included_from_head_or_working_tree() {
    let repo = feature_repo();
    // The context is the base's: committed on main, which the branch then merges.
    repo.git(&["checkout", "-q", "main"]);
    repo.write(".deep-review/context.md", "Second choice.\n");
    repo.write(
        "deep-review-context.md",
        "Errors must use `thiserror`.\nNever panic on input.\n",
    );
    repo.commit("Add review context");
    repo.git(&["checkout", "-q", "feat"]);
    repo.git(&["merge", "-q", "--no-edit", "main"]);
    // An uncommitted edit: the brief follows the head commit, which the reviewers see.
    repo.write("deep-review-context.md", "uncommitted edit\n");
    let brief = build(&target(&repo), &BriefOptions::default()).unwrap();
    assert_eq!(
        brief.context_file.as_deref(),
        Some("deep-review-context.md")
    );
    assert!(
        brief
            .text
            .contains("# Project context (from `deep-review-context.md`)")
    );
    assert!(
        brief
            .text
            .contains("Errors must use `thiserror`.\nNever panic on input.")
    );
    assert!(!brief.text.contains("uncommitted edit"));
    assert!(!brief.text.contains("Second choice."));

    let none = build(
        &target(&repo),
        &BriefOptions {
            no_context: true,
            ..BriefOptions::default()
        },
    )
    .unwrap();
    assert!(!none.text.contains("Project context"));
}

#[test]
fn uncommitted_context_dir_file_is_used_when_not_in_the_commit() {
    let repo = feature_repo();
    repo.write(".deep-review/context.md", "Local notes for reviewers.\n");
    let brief = build(&target(&repo), &BriefOptions::default()).unwrap();
    assert_eq!(
        brief.context_file.as_deref(),
        Some(".deep-review/context.md")
    );
    assert!(brief.text.contains("Local notes for reviewers."));
}

#[test]
fn pr_title_and_description_are_shown() {
    let repo = feature_repo();
    let t = resolve(
        repo.path(),
        &TargetSpec {
            target: Some("feat".into()),
            pr: Some(PrInfo {
                number: 236,
                title: "Implement App controller".into(),
                url: Some("https://github.com/o/r/pull/236".into()),
                kind: Default::default(),
            }),
            description: Some("Adds the lifecycle.\n\nFixes #12.".into()),
            ..TargetSpec::default()
        },
    )
    .unwrap();
    let text = build(&t, &BriefOptions::default()).unwrap().text;
    assert!(text.contains(
        "- **Pull request**: #236 — Implement App controller (https://github.com/o/r/pull/236)"
    ));
    assert!(text.contains("## Description\n\nAdds the lifecycle.\n\nFixes #12."));
}

#[test]
fn single_commit_subject_is_the_title() {
    let repo = Repo::new();
    repo.write("a", "a\n");
    repo.commit("a");
    repo.git(&["checkout", "-q", "-b", "fix"]);
    repo.write("a", "b\n");
    repo.commit("Fix the frobnicator");
    let t = resolve(repo.path(), &TargetSpec::default()).unwrap();
    let text = build(&t, &BriefOptions::default()).unwrap().text;
    assert!(text.contains("- **Title**: Fix the frobnicator"));
    assert!(text.contains("1 file changed"));
}

#[test]
fn custom_template_replaces_the_default() {
    let repo = feature_repo();
    let dir = tempfile::tempdir().unwrap();
    let tmpl = dir.path().join("brief.j2");
    std::fs::write(
        &tmpl,
        "Review {{ branch }}: {{ diff_command }}\n{% for f in files %}{{ f.path }} +{{ f.added }}\n{% endfor %}",
    )
    .unwrap();
    let t = target(&repo);
    let brief = build(
        &t,
        &BriefOptions {
            template: Some(tmpl.clone()),
            ..BriefOptions::default()
        },
    )
    .unwrap();
    assert!(
        brief
            .text
            .starts_with(&format!("Review feat: {}\n", t.diff_command()))
    );
    assert!(brief.text.contains("src/lib.rs +1\n"));
    assert_eq!(brief.template, Some(tmpl));
    assert_eq!(brief.estimated_tokens, estimate_tokens(brief.bytes));
}

#[test]
fn template_errors_name_the_file_and_line() {
    let repo = feature_repo();
    let dir = tempfile::tempdir().unwrap();
    let t = target(&repo);

    let typo = dir.path().join("typo.j2");
    std::fs::write(&typo, "ok\n{{ brnach }}\n").unwrap();
    let err = build(
        &t,
        &BriefOptions {
            template: Some(typo.clone()),
            ..BriefOptions::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with(&format!("{} line 2", typo.display())),
        "{err}"
    );

    let syntax = dir.path().join("syntax.j2");
    std::fs::write(&syntax, "a\nb\n{% for x in files %}\n").unwrap();
    let err = build(
        &t,
        &BriefOptions {
            template: Some(syntax.clone()),
            ..BriefOptions::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("syntax.j2 line"), "{err}");

    let missing = dir.path().join("missing.j2");
    let err = build(
        &t,
        &BriefOptions {
            template: Some(missing),
            ..BriefOptions::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("cannot read the brief template") && err.contains("missing.j2"),
        "{err}"
    );
}
