//! `brief::pack` on real repositories: the prompt for reviewers that cannot read the
//! repository holds the change's code from the commits, whole files or enclosing blocks when
//! they fit, within the budget, and names what it left out.

use crate::brief_fixtures::{Commit, import, source_file, source_file_changed};
use crate::support::repo::Repo;
use deep_review::brief::{PackOptions, pack};
use deep_review::target::{TargetSpec, resolve};
use deep_review::types::Target;

fn feat(repo: &Repo) -> Target {
    resolve(
        repo.path(),
        &TargetSpec {
            target: Some("main..feat".into()),
            ..TargetSpec::default()
        },
    )
    .unwrap()
}

fn packed(t: &Target, tokens: usize) -> deep_review::types::Brief {
    pack(
        t,
        &PackOptions {
            context_tokens: tokens,
            ..PackOptions::default()
        },
    )
    .unwrap()
}

/// The code section of a packed prompt.
fn code(text: &str) -> &str {
    text.split("\n# The code\n")
        .nth(1)
        .expect("a code section")
        .split("</change-material>")
        .next()
        .unwrap()
}

/// main: 60 Go files of 40 functions; feat changes one line in 4 functions of each, adds a
/// vendored file and a binary file. The checkout also has an uncommitted edit, which must not
/// be read.
fn wide_change() -> (Repo, Target) {
    let repo = Repo::new();
    let mut base = Commit::new("initial");
    for i in 0..60 {
        base = base.write(format!("pkg/f{i:02}.go"), source_file(i, 40));
    }
    import(repo.path(), "main", None, [base]);
    let mut change = Commit::new("Check computations");
    for i in 0..60 {
        change = change.write(format!("pkg/f{i:02}.go"), source_file_changed(i, 40, 10));
    }
    change = change
        .write("vendor/dep/dep.go", source_file_changed(99, 40, 1))
        .write("logo.png", vec![0u8, 1, 2, 3, 0, 9]);
    import(repo.path(), "feat", Some("main"), [change]);
    repo.git(&["checkout", "-q", "-f", "feat"]);
    repo.write("pkg/f00.go", "uncommitted working-tree text\n");
    let t = feat(&repo);
    assert_eq!(t.changed_files.len(), 62);
    (repo, t)
}

#[test]
fn a_change_over_budget_is_packed_and_names_what_it_left_out() {
    let (_repo, t) = wide_change();
    let budget = 12_000;
    let brief = packed(&t, budget);
    let text = &brief.text;
    assert!(
        brief.estimated_tokens <= budget,
        "{} tokens for {budget}",
        brief.estimated_tokens
    );
    assert!(brief.full_tokens > budget, "{}", brief.full_tokens);

    let code = code(text);
    // The committed code, with the change marked and head line numbers.
    assert!(code.contains("## `pkg/f00.go` (+4 −4)"), "{code}");
    assert!(
        code.contains(" +\tvalue := computeChecked(req, 0, 0)\n"),
        "{code}"
    );
    assert!(code.contains("       -\tvalue := compute(req, 0)\n"));
    assert!(!text.contains("uncommitted working-tree text"));

    // Some files did not fit: named, with counts by kind, in the prompt and the returned values.
    let shown = code.matches("\n## `").count() + usize::from(code.starts_with("## `"));
    assert!(shown < 62, "{shown}");
    assert!(text.contains("# Left out"));
    assert!(text.contains(&format!("To keep this prompt within {budget} tokens")));
    let note = brief
        .omitted
        .iter()
        .find(|o| o.starts_with("the code of "))
        .expect("files left out");
    assert!(note.contains("of the 62 changed files"), "{note}");
    assert!(note.contains("1 vendored"), "{note}");
    assert!(
        note.contains("`vendor/dep/dep.go`"),
        "vendored is last, so left out: {note}"
    );
    assert!(text.contains(note.as_str()));
    // A file that is not shown is named; a file that is shown is not in the list.
    assert!(note.contains("`pkg/f59.go`"), "{note}");
    assert!(!note.contains("`pkg/f00.go`"), "{note}");
    let warning = brief.warning.as_deref().unwrap();
    assert!(warning.contains("12,000 tokens"), "{warning}");
    assert!(warning.contains("of 62 changed files"), "{warning}");
}

#[test]
fn with_room_whole_files_are_shown_and_nothing_is_left_out() {
    let (_repo, t) = wide_change();
    let brief = packed(&t, 1_000_000);
    let code = code(&brief.text);
    assert_eq!(brief.warning, None);
    assert!(brief.omitted.is_empty());
    assert!(!brief.text.contains("# Left out"));
    assert!(code.contains("## `pkg/f00.go` (+4 −4): the whole file"));
    assert!(
        code.contains("     1  package p0\n"),
        "whole file from line 1"
    );
    assert!(code.contains("## `logo.png` (binary, added)\n\nA binary file: not shown."));
    let vendored = source_file_changed(99, 40, 1).lines().count();
    assert!(code.contains(&format!(
        "## `vendor/dep/dep.go` (+{vendored} −0, added): the whole file"
    )));
    assert!(
        brief
            .text
            .contains("The Coverage Summary lists every file shown under \"The code\"")
    );
    assert!(
        !brief.text.contains("git diff "),
        "no commands for a reviewer that cannot run them"
    );
}

/// Between the two: one file whose whole text does not fit, but whose changed function does.
#[test]
fn the_enclosing_function_is_shown_when_the_whole_file_does_not_fit() {
    let repo = Repo::new();
    import(
        repo.path(),
        "main",
        None,
        [Commit::new("initial").write("pkg/big.go", source_file(7, 300))],
    );
    let mut lines: Vec<String> = source_file(7, 300).lines().map(str::to_string).collect();
    // Function 150 starts at line 3 + 150*9; its `value :=` line is 4 lines in.
    let at = 2 + 150 * 9 + 4;
    assert_eq!(lines[at], "\tvalue := compute(req, 7)");
    lines[at] = "\tvalue := computeChecked(req, 7)".to_string();
    import(
        repo.path(),
        "feat",
        Some("main"),
        [Commit::new("Check one").write("pkg/big.go", lines.join("\n") + "\n")],
    );
    let t = feat(&repo);

    let roomy = packed(&t, 1_000_000);
    assert!(code(&roomy.text).contains("the whole file"));
    // Take away most of the whole file's room (its 2,700 lines take about 15,000 tokens): the
    // file does not fit, its changed function does.
    let budget = roomy.estimated_tokens - 12_000;
    let brief = packed(&t, budget);
    let code = code(&brief.text);
    assert!(
        code.contains("## `pkg/big.go` (+1 −1): its diff in the enclosing code"),
        "{code}"
    );
    let start = 3 + 150 * 9;
    assert!(
        code.contains(&format!(
            "{start:>6}  func handle7_150(req Request) error {{\n"
        )),
        "{code}"
    );
    assert!(code.contains(&format!("{:>6}  }}\n", start + 7)), "{code}");
    assert!(!code.contains("handle7_148("), "{code}");
    assert!(brief.estimated_tokens <= budget);
}

#[test]
fn one_diff_larger_than_the_budget_is_shown_in_part() {
    let repo = Repo::new();
    import(
        repo.path(),
        "main",
        None,
        [Commit::new("initial").write("README.md", "x\n")],
    );
    let big: String = (0..20_000)
        .map(|i| format!("line {i} of generated text\n"))
        .collect();
    import(
        repo.path(),
        "feat",
        Some("main"),
        [Commit::new("Add data").write("src/table.rs", big)],
    );
    let t = feat(&repo);
    let brief = packed(&t, 20_000);
    assert!(brief.estimated_tokens <= 20_000);
    let code = code(&brief.text);
    assert!(code.contains("## `src/table.rs` (+20000 −0, added): the first part of its diff"));
    assert!(code.contains("     1 +line 0 of generated text\n"));
    assert!(code.contains("(the rest of this diff did not fit)"));
    assert!(
        brief
            .omitted
            .iter()
            .any(|o| o.contains("the end of the diff of `src/table.rs`")),
        "{:?}",
        brief.omitted
    );
}

#[test]
fn a_zero_budget_is_an_error_that_names_the_setting() {
    let (_repo, t) = wide_change();
    let err = pack(&t, &PackOptions::default()).unwrap_err().to_string();
    assert!(err.contains("context_tokens"), "{err}");
}
