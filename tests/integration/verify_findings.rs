//! The verify stage on real git repositories made here with the git CLI: a base commit, a head
//! commit, findings as reviewers write them, and the exact verification each one gets.

use deep_review::types::{
    Category, CodeSnippet, Finding, Location, Review, Verification, VerificationStatus,
};
use deep_review::verify::{VerifyContext, VerifyOutcome, verify_reviews};

use crate::support::repo as repo_support;

use repo_support::Repo;

/// Verification of findings in a test repository.
trait VerifyHere {
    fn verify(&self, base: Option<&str>, findings: Vec<Finding>) -> (Vec<Finding>, VerifyOutcome);
}

impl VerifyHere for Repo {
    /// Verifies `findings` (one review) against head with `base` as the merge-base.
    fn verify(&self, base: Option<&str>, findings: Vec<Finding>) -> (Vec<Finding>, VerifyOutcome) {
        let ctx = VerifyContext {
            repo: self.path().to_path_buf(),
            head: "HEAD".to_string(),
            base: base.map(str::to_string),
            checkout: None,
        };
        let mut reviews = vec![Review {
            agent: "claude".to_string(),
            findings,
            ..Review::default()
        }];
        let outcome = verify_reviews(&ctx, &mut reviews).expect("verify runs");
        (reviews.remove(0).findings, outcome)
    }
}

/// `n` numbered lines of Go-ish code: `\tx{i} := {i}`.
fn numbered_lines(n: usize) -> String {
    (1..=n).map(|i| format!("\tx{i} := {i}\n")).collect()
}

fn finding(location: &str, code: Option<&str>) -> Finding {
    let mut f = Finding::new("I1", "a finding");
    if !location.is_empty() {
        f.locations.push(location.parse().expect("a location"));
    }
    f.code = code.map(|c| CodeSnippet {
        language: None,
        code: c.to_string(),
    });
    f
}

fn regression(location: &str, code: Option<&str>) -> Finding {
    let mut f = finding(location, code);
    f.category = Some(Category::Regression);
    f
}

fn v(f: &Finding) -> &Verification {
    f.verification.as_ref().expect("every finding is verified")
}

fn expected(status: VerificationStatus, note: Option<&str>) -> Verification {
    Verification {
        status,
        path_ok: true,
        lines_ok: true,
        quote_ok: Some(true),
        symbols_missing: Vec::new(),
        pre_existing: false,
        outside_change: false,
        known_issue_comment: None,
        note: note.map(str::to_string),
    }
}

const HANDLER_BASE: &str = "package web\n\nfunc Handle(r Request) error {\n\tif r.User == \"\" {\n\t\treturn ErrNoUser\n\t}\n\treturn nil\n}\n";
const HANDLER_HEAD: &str = "package web\n\nfunc Handle(r Request) error {\n\tif r.User == \"\" {\n\t\treturn ErrNoUser\n\t}\n\ttoken := r.Header.Get(\"X-Token\")\n\tif token != \"\" {\n\t\tlog.Printf(\"token %s\", token)\n\t}\n\treturn nil\n}\n";

#[test]
fn quote_at_the_cited_lines_is_grounded() {
    let repo = Repo::new();
    repo.write("pkg/web/handler.go", HANDLER_BASE);
    let base = repo.commit("base");
    repo.write("pkg/web/handler.go", HANDLER_HEAD);
    repo.commit("head");
    // Indentation dropped, as reviewers quote.
    let quote = "if token != \"\" {\n    log.Printf(\"token %s\", token)\n}";
    let (findings, outcome) = repo.verify(
        Some(&base),
        vec![regression("pkg/web/handler.go:8-10", Some(quote))],
    );
    assert_eq!(
        v(&findings[0]),
        &expected(VerificationStatus::Grounded, None)
    );
    assert_eq!(
        findings[0].locations,
        vec![Location::new("pkg/web/handler.go", Some(8), Some(10))]
    );
    assert_eq!(outcome.changed_paths(), vec!["pkg/web/handler.go"]);
    assert_eq!(outcome.counts.grounded, 1);
}

#[test]
fn lines_off_by_fourteen_are_corrected() {
    let repo = Repo::new();
    let mut text = String::from("package big\n\nfunc f() {\n");
    text.push_str(&numbered_lines(300));
    text.push_str("}\n");
    repo.write("big.go", &text);
    let base = repo.commit("base");
    // Head: lines 207-208 (x204, x205) become a retry loop.
    let head = text.replace(
        "\tx204 := 204\n\tx205 := 205\n",
        "\tfor attempt := 0; attempt < 3; attempt++ {\n\t\tsend(x203)\n",
    );
    repo.write("big.go", &head);
    repo.commit("head");
    let quote = "for attempt := 0; attempt < 3; attempt++ {\n    send(x203)";
    let (findings, _) = repo.verify(Some(&base), vec![finding("big.go:193-194", Some(quote))]);
    assert_eq!(
        v(&findings[0]),
        &expected(
            VerificationStatus::Relocated,
            Some("lines corrected 193-194 → 207-208")
        )
    );
    assert_eq!(
        findings[0].locations,
        vec![Location::new("big.go", Some(207), Some(208))]
    );
}

#[test]
fn quote_that_is_not_in_the_file_is_ungrounded() {
    let repo = Repo::new();
    repo.write("run.sh", "#!/bin/sh\nset -eu\n");
    let base = repo.commit("base");
    repo.write("run.sh", "#!/bin/sh\nset -eu\nexec \"$@\"\n");
    repo.commit("head");
    // The reviewer misread `"$@"` as `"$ @"`: folding whitespace must not make them equal.
    let (findings, outcome) =
        repo.verify(Some(&base), vec![finding("run.sh:3", Some("exec \"$ @\""))]);
    assert_eq!(
        v(&findings[0]),
        &Verification {
            quote_ok: Some(false),
            ..expected(
                VerificationStatus::Ungrounded,
                Some("quoted code not found in run.sh at head")
            )
        }
    );
    assert_eq!(
        findings[0].locations,
        vec![Location::new("run.sh", Some(3), Some(3))]
    );
    assert_eq!(outcome.counts.ungrounded, 1);
}

#[test]
fn a_quote_of_the_code_the_change_removed_is_grounded_at_the_merge_base() {
    let repo = Repo::new();
    repo.write("pkg/web/handler.go", HANDLER_BASE);
    let base = repo.commit("base");
    repo.write(
        "pkg/web/handler.go",
        HANDLER_BASE.replace("\tif r.User == \"\" {\n\t\treturn ErrNoUser\n\t}\n", ""),
    );
    repo.commit("head");
    let (findings, _) = repo.verify(
        Some(&base),
        vec![regression(
            "pkg/web/handler.go:4",
            Some("if r.User == \"\" {\n    return ErrNoUser\n}"),
        )],
    );
    assert_eq!(
        v(&findings[0]),
        &expected(
            VerificationStatus::Grounded,
            Some(
                "quoted code is the merge-base version (pkg/web/handler.go:4-6), changed by \
                 the change"
            )
        )
    );
}

const LEGACY: &str =
    "package conv\n\nfunc legacyParse(s string) int {\n\tn, _ := strconv.Atoi(s)\n\treturn n\n}\n";

#[test]
fn regression_on_lines_the_change_did_not_touch_is_pre_existing() {
    let repo = Repo::new();
    repo.write("conv/legacy.go", LEGACY);
    repo.write("conv/untouched.go", "package conv\n\nconst Limit = 10\n");
    let base = repo.commit("base");
    // Three lines inserted above the function: its lines move from 3-6 to 6-9.
    repo.write(
        "conv/legacy.go",
        LEGACY.replace(
            "package conv\n\n",
            "package conv\n\nimport \"strconv\"\n\nvar _ = 1\n\n",
        ),
    );
    repo.commit("head");
    let quote = "n, _ := strconv.Atoi(s)\nreturn n";
    let (findings, outcome) = repo.verify(
        Some(&base),
        vec![
            regression("conv/legacy.go:8-9", Some(quote)),
            regression("conv/untouched.go:3", Some("const Limit = 10")),
        ],
    );
    assert_eq!(
        v(&findings[0]),
        &Verification {
            pre_existing: true,
            ..expected(
                VerificationStatus::Grounded,
                Some("pre-existing: lines 8-9 are unchanged since the merge-base")
            )
        }
    );
    assert_eq!(
        v(&findings[1]),
        &Verification {
            pre_existing: true,
            outside_change: true,
            ..expected(
                VerificationStatus::Grounded,
                Some("pre-existing: lines 3 are unchanged since the merge-base")
            )
        }
    );
    assert_eq!(outcome.counts.pre_existing, 2);
}

#[test]
fn untouched_code_the_change_calls_stays_a_regression() {
    let repo = Repo::new();
    repo.write("conv/legacy.go", LEGACY);
    repo.write("cmd/main.go", "package main\n\nfunc main() {\n}\n");
    let base = repo.commit("base");
    repo.write(
        "cmd/main.go",
        "package main\n\nfunc main() {\n\tprintln(conv.legacyParse(\"7\"))\n}\n",
    );
    repo.commit("head");
    let quote = "func legacyParse(s string) int {\n\tn, _ := strconv.Atoi(s)";
    let (findings, _) = repo.verify(
        Some(&base),
        vec![regression("conv/legacy.go:3-4", Some(quote))],
    );
    assert_eq!(
        v(&findings[0]),
        &Verification {
            outside_change: true,
            ..expected(
                VerificationStatus::Grounded,
                Some(
                    "kept as a regression: lines 3-4 predate the change, but the change calls \
                     `legacyParse` at cmd/main.go:4"
                )
            )
        }
    );
}

#[test]
fn untouched_code_the_change_copies_stays_a_regression() {
    let repo = Repo::new();
    repo.write("conv/legacy.go", LEGACY);
    let base = repo.commit("base");
    // The change copies the body into a new file.
    repo.write(
        "conv/fast.go",
        "package conv\n\nfunc fastParse(s string) int {\n\tn, _ := strconv.Atoi(s)\n\treturn n\n}\n",
    );
    repo.commit("head");
    let (findings, _) = repo.verify(
        Some(&base),
        vec![regression(
            "conv/legacy.go:4",
            Some("n, _ := strconv.Atoi(s)"),
        )],
    );
    assert_eq!(
        v(&findings[0]),
        &Verification {
            outside_change: true,
            ..expected(
                VerificationStatus::Grounded,
                Some(
                    "kept as a regression: lines 4 predate the change, but the change copies \
                     this code at conv/fast.go:4"
                )
            )
        }
    );
}

#[test]
fn a_function_that_does_not_exist_is_reported() {
    let repo = Repo::new();
    repo.write("pkg/web/handler.go", HANDLER_BASE);
    let base = repo.commit("base");
    repo.write("pkg/web/handler.go", HANDLER_HEAD);
    repo.write("config.yaml", "retries: 3\n");
    repo.commit("head");
    let mut f = finding(
        "pkg/web/handler.go:7",
        Some("token := r.Header.Get(\"X-Token\")"),
    );
    f.title = "`validateToken()` is never called before the token is logged".to_string();
    // Existing identifiers, repeats, plain words, file names, values, names the finding
    // proposes and names its fix introduces are not reported.
    f.explanation = "`Handle` reads `r.Header.Get` into `token` and passes it to `log.Printf` \
                     without `validateToken`; `ErrNoUser` is unrelated and `sessionCache.evict` \
                     is never reached. See `config.yaml`, `retries: 3`, `true`; consider \
                     `subtle.ConstantTimeCompare`, and `sanitize_header()` in the fix."
        .to_string();
    f.fix = Some("call `sanitize_header()` first".to_string());
    let (findings, outcome) = repo.verify(Some(&base), vec![f]);
    assert_eq!(
        v(&findings[0]),
        &Verification {
            symbols_missing: vec![
                "validateToken()".to_string(),
                "sessionCache.evict".to_string()
            ],
            ..expected(
                VerificationStatus::Grounded,
                Some(
                    "not found in the repository at head: `validateToken()`, `sessionCache.evict`"
                )
            )
        }
    );
    assert_eq!(outcome.counts.with_missing_symbols, 1);
}

#[test]
fn a_renamed_file_is_followed() {
    let repo = Repo::new();
    let body = "pub fn area(w: u32, h: u32) -> u32 {\n    w * h\n}\n\npub fn perimeter(w: u32, h: u32) -> u32 {\n    2 * (w + h)\n}\n";
    repo.write("src/old_shapes.rs", body);
    let base = repo.commit("base");
    repo.git(&["mv", "src/old_shapes.rs", "src/shapes.rs"]);
    repo.write("src/shapes.rs", body.replace("2 * (w + h)", "(w + h) * 2"));
    repo.commit("head");
    let (findings, outcome) = repo.verify(
        Some(&base),
        vec![finding("src/old_shapes.rs:6", Some("(w + h) * 2"))],
    );
    assert_eq!(
        v(&findings[0]),
        &expected(
            VerificationStatus::Grounded,
            Some("renamed by the change: src/old_shapes.rs → src/shapes.rs")
        )
    );
    assert_eq!(
        findings[0].locations,
        vec![Location::new("src/shapes.rs", Some(6), Some(6))]
    );
    assert_eq!(
        outcome.changed_files[0].old_path.as_deref(),
        Some("src/old_shapes.rs")
    );
}

#[test]
fn a_deleted_file_is_checked_at_the_merge_base() {
    let repo = Repo::new();
    repo.write(
        "tools/gone.py",
        "import os\n\ndef cleanup(path):\n    os.remove(path)\n",
    );
    repo.write("tools/keep.py", "print('kept')\n");
    let base = repo.commit("base");
    std::fs::remove_file(repo.path().join("tools/gone.py")).expect("rm");
    repo.commit("head");
    let (findings, _) = repo.verify(
        Some(&base),
        vec![
            finding("tools/gone.py:4", Some("os.remove(path)")),
            finding("tools/gone.py:4", Some("shutil.rmtree(path)")),
        ],
    );
    let note = "tools/gone.py was deleted by the change; checked at the merge-base";
    assert_eq!(
        v(&findings[0]),
        &expected(VerificationStatus::Grounded, Some(note))
    );
    assert_eq!(
        v(&findings[1]),
        &Verification {
            quote_ok: Some(false),
            ..expected(
                VerificationStatus::Ungrounded,
                Some(&format!(
                    "{note}; quoted code not found in tools/gone.py at the merge-base"
                ))
            )
        }
    );
}

#[test]
fn elided_lines_in_a_quote_are_gaps() {
    let repo = Repo::new();
    let code = "def load(path):\n    with open(path) as f:\n        data = f.read()\n        parts = data.split(',')\n        total = 0\n        for p in parts:\n            total += int(p)\n    return total\n";
    repo.write("calc.py", "");
    let base = repo.commit("base");
    repo.write("calc.py", code);
    repo.commit("head");
    let quotes = [
        "def load(path):\n    ...\n    return total",
        "def load(path):\n    # ...\n    return total",
        "with open(path) as f:\n    data = f.read()\n    // ...\n    for p in parts:\n        total += int(p)",
        "with open(path) as f:\n    …\nreturn total",
    ];
    let (findings, _) = repo.verify(
        Some(&base),
        quotes
            .iter()
            .map(|q| finding("calc.py:1-8", Some(q)))
            .collect(),
    );
    for f in &findings {
        assert_eq!(
            v(f),
            &expected(VerificationStatus::Grounded, None),
            "{:?}",
            f.code
        );
    }
    // Grounded quotes keep the reviewer's lines.
    assert_eq!(
        findings[2].locations,
        vec![Location::new("calc.py", Some(1), Some(8))]
    );
}

#[test]
fn crlf_files_match_and_count_lines() {
    let repo = Repo::new();
    repo.write("win/app.cs", "class App {\r\n}\r\n");
    let base = repo.commit("base");
    repo.write(
        "win/app.cs",
        "class App {\r\n    void Run() {\r\n        Start();\r\n    }\r\n}\r\n",
    );
    repo.commit("head");
    let (findings, _) = repo.verify(
        Some(&base),
        vec![
            finding("win/app.cs:2-3", Some("void Run() {\n    Start();")),
            finding("win/app.cs:3", Some("Start();\r\n")),
            finding("win/app.cs:5-6", None),
        ],
    );
    assert_eq!(
        v(&findings[0]),
        &expected(VerificationStatus::Grounded, None)
    );
    assert_eq!(
        v(&findings[1]),
        &expected(VerificationStatus::Grounded, None)
    );
    assert_eq!(
        v(&findings[2]),
        &Verification {
            lines_ok: false,
            quote_ok: None,
            ..expected(
                VerificationStatus::Ungrounded,
                Some("lines 5-6 do not exist in win/app.cs (5 lines)")
            )
        }
    );
}

#[test]
fn a_fifty_thousand_line_file() {
    let repo = Repo::new();
    let text = numbered_lines(50_000);
    repo.write("gen/huge.go", &text);
    let base = repo.commit("base");
    repo.write(
        "gen/huge.go",
        text.replace("\tx40001 := 40001\n", "\tx40001 := compute()\n"),
    );
    repo.commit("head");
    let quote = "x40001 := compute()\nx40002 := 40002";
    let (findings, _) = repo.verify(
        Some(&base),
        vec![
            finding("gen/huge.go:40001-40002", Some(quote)),
            finding("gen/huge.go:39990", Some(quote)),
            finding("gen/huge.go:50001", None),
        ],
    );
    assert_eq!(
        v(&findings[0]),
        &expected(VerificationStatus::Grounded, None)
    );
    assert_eq!(
        v(&findings[1]),
        &expected(
            VerificationStatus::Relocated,
            Some("lines corrected 39990 → 40001-40002")
        )
    );
    assert_eq!(
        v(&findings[2]).note.as_deref(),
        Some("lines 50001 do not exist in gen/huge.go (50000 lines)")
    );
}

#[test]
fn a_binary_file_is_never_quote_matched() {
    let repo = Repo::new();
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend_from_slice(b"\nlogo();\n");
    repo.write("assets/logo.png", b"old");
    let base = repo.commit("base");
    repo.write("assets/logo.png", &png);
    repo.commit("head");
    let (findings, outcome) = repo.verify(
        Some(&base),
        vec![
            finding("assets/logo.png:2", Some("logo();")),
            finding("assets/logo.png", None),
        ],
    );
    assert_eq!(
        v(&findings[0]),
        &Verification {
            lines_ok: false,
            quote_ok: None,
            ..expected(
                VerificationStatus::Unchecked,
                Some("binary file: contents not checked (assets/logo.png)")
            )
        }
    );
    assert_eq!(
        v(&findings[1]),
        &Verification {
            quote_ok: None,
            ..expected(VerificationStatus::Grounded, None)
        }
    );
    assert!(outcome.changed_files[0].binary);
}

#[test]
fn a_submodule_is_listed_but_never_read() {
    let repo = Repo::new();
    repo.write("main.c", "int main(void) { return 0; }\n");
    let base = repo.commit("base");
    // A gitlink, as `git submodule add` records it, without fetching anything.
    repo.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{base},vendor/lib"),
    ]);
    repo.git(&["commit", "-q", "-m", "head"]);
    let (findings, outcome) = repo.verify(
        Some(&base),
        vec![finding("vendor/lib:1", Some("int main(void)"))],
    );
    assert_eq!(
        v(&findings[0]),
        &Verification {
            lines_ok: false,
            quote_ok: None,
            ..expected(
                VerificationStatus::Unchecked,
                Some("submodule: contents not checked (vendor/lib)")
            )
        }
    );
    assert!(outcome.changed_files[0].submodule);
}

#[test]
fn a_bare_file_name_resolves_to_the_changed_file() {
    let repo = Repo::new();
    repo.write("internal/app/app_controller.go", "package app\n");
    repo.write("a/util.go", "package a\n");
    repo.write("b/util.go", "package b\n");
    let base = repo.commit("base");
    repo.write(
        "internal/app/app_controller.go",
        "package app\n\nfunc Start() {}\n",
    );
    repo.write(
        "a/util.go",
        "package a\n\nfunc A() {}\n\nvar debug = false\n",
    );
    repo.write(
        "b/util.go",
        "package b\n\nfunc B() {}\n\nvar debug = false\n",
    );
    repo.commit("head");
    let (findings, _) = repo.verify(
        Some(&base),
        vec![
            finding("app_controller.go:3", Some("func Start() {}")),
            finding("app/app_controller.go:3", None),
            finding("util.go:3", Some("func B() {}")),
            finding("util.go:3", None),
            finding("util.go:5", Some("var debug = false")),
        ],
    );
    assert_eq!(
        v(&findings[0]),
        &expected(VerificationStatus::Grounded, None)
    );
    assert_eq!(
        findings[0].locations,
        vec![Location::new(
            "internal/app/app_controller.go",
            Some(3),
            Some(3)
        )]
    );
    assert_eq!(
        findings[1].locations[0].path,
        "internal/app/app_controller.go"
    );
    assert_eq!(
        v(&findings[2]),
        &expected(
            VerificationStatus::Grounded,
            Some("util.go resolved to b/util.go by the quoted code")
        )
    );
    assert_eq!(findings[2].locations[0].path, "b/util.go");
    assert_eq!(
        v(&findings[3]),
        &Verification {
            path_ok: false,
            lines_ok: false,
            quote_ok: None,
            ..expected(
                VerificationStatus::Ungrounded,
                Some("util.go is ambiguous: 2 files of that name (a/util.go, b/util.go)")
            )
        }
    );
    assert_eq!(findings[3].locations[0].path, "util.go");
    assert_eq!(
        v(&findings[4]),
        &Verification {
            path_ok: false,
            lines_ok: false,
            quote_ok: None,
            ..expected(
                VerificationStatus::Unchecked,
                Some(
                    "util.go is ambiguous: 2 files of that name hold the quoted code \
                     (a/util.go, b/util.go)"
                )
            )
        }
    );
}

#[test]
fn missing_paths_nothing_to_check_and_quote_only_findings() {
    let repo = Repo::new();
    repo.write("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n");
    let base = repo.commit("base");
    repo.write(
        "src/lib.rs",
        "pub fn one() -> u32 {\n    1\n}\n\npub fn two() -> u32 {\n    2\n}\n",
    );
    repo.commit("head");
    let (findings, _) = repo.verify(
        Some(&base),
        vec![
            finding("src/nowhere.rs:3", None),
            finding("", None),
            finding("", Some("pub fn two() -> u32 {")),
            finding("src/lib_old.rs:1", Some("pub fn two() -> u32 {")),
        ],
    );
    assert_eq!(
        v(&findings[0]),
        &Verification {
            path_ok: false,
            lines_ok: false,
            quote_ok: None,
            ..expected(
                VerificationStatus::Ungrounded,
                Some("src/nowhere.rs does not exist at head")
            )
        }
    );
    assert_eq!(
        v(&findings[1]),
        &Verification::unchecked("no location or quoted code to check")
    );
    assert_eq!(
        v(&findings[2]),
        &expected(
            VerificationStatus::Grounded,
            Some("location from the quoted code: src/lib.rs:5")
        )
    );
    assert_eq!(
        findings[2].locations,
        vec![Location::new("src/lib.rs", Some(5), Some(5))]
    );
    assert_eq!(
        findings[3].locations,
        vec![Location::new("src/lib.rs", Some(5), Some(5))]
    );
    assert_eq!(
        v(&findings[3]),
        &Verification {
            path_ok: false,
            lines_ok: false,
            ..expected(
                VerificationStatus::Relocated,
                Some(
                    "src/lib_old.rs does not exist at head; \
                     location corrected src/lib_old.rs:1 → src/lib.rs:5"
                )
            )
        }
    );
}

#[test]
fn commits_are_read_not_the_checkout_and_no_base_means_no_change_checks() {
    let repo = Repo::new();
    repo.write("main.py", "print('a')\n");
    repo.commit("base");
    repo.write("main.py", "print('a')\nprint('b')\n");
    repo.commit("head");
    // Uncommitted edits in the checkout must not change the answer.
    repo.write("main.py", "something else entirely\n");
    let (findings, outcome) = repo.verify(None, vec![regression("main.py:2", Some("print('b')"))]);
    assert_eq!(
        v(&findings[0]),
        &expected(VerificationStatus::Grounded, None)
    );
    assert!(outcome.changed_files.is_empty());
    assert_eq!(
        outcome.notes,
        vec![
            "no merge-base given: changed files unknown, nothing marked pre-existing or outside the change"
        ]
    );
}

#[test]
fn a_bad_revision_is_a_clear_error() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n");
    repo.commit("base");
    let ctx = VerifyContext {
        repo: repo.path().to_path_buf(),
        head: "no-such-branch".to_string(),
        base: None,
        checkout: None,
    };
    let err = verify_reviews(&ctx, &mut []).expect_err("an unknown head is an error");
    let msg = format!("{err:#}");
    assert!(msg.contains("no-such-branch"), "{msg}");
}

#[test]
fn forge_links_and_windows_paths_are_read_as_repository_paths() {
    let repo = Repo::new();
    repo.write("internal/app/app_controller.go", "package app\n");
    let base = repo.commit("base");
    repo.write(
        "internal/app/app_controller.go",
        "package app\n\nfunc Start() {}\n",
    );
    repo.commit("head");
    let (findings, _) = repo.verify(
        Some(&base),
        vec![
            finding(
                "https://github.com/o/r/blob/main/internal/app/app_controller.go#L3",
                Some("func Start() {}"),
            ),
            finding("internal\\app\\app_controller.go:3", None),
        ],
    );
    for f in &findings {
        assert_eq!(
            f.locations,
            vec![Location::new(
                "internal/app/app_controller.go",
                Some(3),
                Some(3)
            )]
        );
    }
    assert_eq!(
        v(&findings[0]),
        &expected(VerificationStatus::Grounded, None)
    );
    assert_eq!(
        v(&findings[1]),
        &Verification {
            quote_ok: None,
            ..expected(VerificationStatus::Grounded, None)
        }
    );
}

#[test]
fn malformed_findings_are_verified_without_a_panic() {
    let repo = Repo::new();
    repo.write("a.go", "package a\n\nfunc A() {}\n");
    repo.write("ünï/cödé.rs", "fn ü() {}\n");
    let base = repo.commit("base");
    repo.write("a.go", "package a\n\nfunc A() {}\n\nfunc B() {}\n");
    repo.commit("head");
    let locations = [
        "",
        ":",
        ":10",
        "a.go:0",
        "a.go:5-2",
        "a.go:4294967295",
        "../../etc/passwd",
        "a.go\nb.go",
        "ünï/cödé.rs:1",
        "cödé.rs",
        "/",
        "https://github.com/o/r/blob/main",
        "x.go#Lfoo",
    ];
    let codes = [
        None,
        Some(""),
        Some("..."),
        Some("\r\r\n"),
        Some("}\n// ...\n}"),
        Some("fn ü() {}"),
        Some("+++\n---\n@@"),
        Some("1: \n2: "),
    ];
    let mut findings = Vec::new();
    for loc in locations {
        for code in codes {
            let mut f = finding("", code);
            f.locations.push(Location::new(loc, None, None));
            f.category = Some(Category::Regression);
            f.title = "`` ` `a.b.` `::` `f()` `__` `…`".to_string();
            findings.push(f);
        }
    }
    let n = findings.len();
    let (findings, outcome) = repo.verify(Some(&base), findings);
    assert_eq!(findings.len(), n);
    assert!(findings.iter().all(|f| f.verification.is_some()));
    let c = outcome.counts;
    assert_eq!(c.grounded + c.relocated + c.ungrounded + c.unchecked, n);
    // The Unicode path with its quote is found; a bare Unicode name resolves.
    let unicode = &findings[8 * codes.len() + 5];
    assert_eq!(
        v(unicode).status,
        VerificationStatus::Grounded,
        "{:?}",
        v(unicode)
    );
    assert_eq!(findings[9 * codes.len()].locations[0].path, "ünï/cödé.rs");
}

#[test]
fn a_distinctive_quote_in_another_changed_file_moves_the_finding_there() {
    let repo = Repo::new();
    repo.write("api/users.go", "package api\n");
    repo.write("api/orders.go", "package api\n");
    let base = repo.commit("base");
    repo.write(
        "api/users.go",
        "package api\n\nfunc ListUsers() {\n\trows := db.Query(\"SELECT * FROM users\")\n\treturn nil\n}\n",
    );
    repo.write(
        "api/orders.go",
        "package api\n\nfunc ListOrders() {\n\treturn nil\n}\n",
    );
    repo.commit("head");
    let (findings, _) = repo.verify(
        Some(&base),
        vec![
            finding(
                "api/orders.go:4",
                Some("rows := db.Query(\"SELECT * FROM users\")"),
            ),
            // Too short to say where it belongs: stays ungrounded.
            finding("api/orders.go:2", Some("func ListUsers() {")),
        ],
    );
    assert_eq!(
        v(&findings[0]),
        &expected(
            VerificationStatus::Relocated,
            Some("quoted code is in api/users.go:4, not in api/orders.go")
        )
    );
    assert_eq!(
        findings[0].locations,
        vec![Location::new("api/users.go", Some(4), Some(4))]
    );
    assert_eq!(v(&findings[1]).status, VerificationStatus::Ungrounded);
}

#[test]
fn a_regression_located_by_its_quote_alone_is_checked_for_pre_existing() {
    let repo = Repo::new();
    repo.write("conv/legacy.go", LEGACY);
    let base = repo.commit("base");
    repo.write("conv/legacy.go", format!("{LEGACY}\nfunc Other() {{}}\n"));
    repo.commit("head");
    let (findings, _) = repo.verify(
        Some(&base),
        vec![regression("", Some("n, _ := strconv.Atoi(s)\nreturn n"))],
    );
    assert_eq!(
        v(&findings[0]),
        &Verification {
            pre_existing: true,
            ..expected(
                VerificationStatus::Grounded,
                Some(
                    "location from the quoted code: conv/legacy.go:4-5; pre-existing: lines 4-5 \
                     are unchanged since the merge-base"
                )
            )
        }
    );
}

/// A quote found in an unchanged file whose path is not ASCII: git quotes such names unless
/// told not to, and the file must still be found and the finding moved there.
#[test]
fn a_quote_in_a_file_with_a_non_ascii_path_is_found() {
    quote_elsewhere_is_found_in("路径/文件.rs");
}

#[test]
fn a_quote_in_an_unchanged_file_is_found() {
    quote_elsewhere_is_found_in("other/file.rs");
}

fn quote_elsewhere_is_found_in(path: &str) {
    let repo = Repo::new();
    repo.write(path, "fn setup() {}\nlet zebra_quux = compute_thing(42);\n");
    repo.write("src/lib.rs", "pub fn a() {}\n");
    let base = repo.commit("base");
    repo.write("src/lib.rs", "pub fn a() {}\npub fn b() {}\n");
    repo.commit("head");
    // The cited file does not exist: the quote is looked for in the whole tree.
    let f = finding("wrong.rs:2", Some("let zebra_quux = compute_thing(42);"));
    let (findings, _) = repo.verify(Some(&base), vec![f]);
    let ver = v(&findings[0]);
    assert_eq!(ver.status, VerificationStatus::Relocated, "{ver:?}");
    assert_eq!(findings[0].locations[0].path, path);
    assert_eq!(findings[0].locations[0].start, Some(2));
}
