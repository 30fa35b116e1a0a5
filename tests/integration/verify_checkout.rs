//! Verification reading the head's files from a checkout (`run`'s own sandboxed checkout):
//! the same verification as from git, and a checkout file whose bytes are not the commit's
//! (edited, removed, replaced by a symlink, converted by an end-of-line attribute) is never
//! used: it is read from git instead.

use std::path::Path;

use deep_review::types::{CodeSnippet, Finding, Location, Review};
use deep_review::verify::{VerifyContext, verify_reviews};

use crate::support::git::git;

fn write(dir: &Path, path: &str, text: &str) {
    let p = dir.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A repository of 40 files and a change of one; a checkout of head beside it.
fn repo_and_checkout(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    for i in 0..40 {
        write(
            &repo,
            &format!("pkg/m{}/f{i}.go", i % 4),
            &format!(
                "package m\n\nfunc handle{i}(x int) error {{\n\treturn checkLimit{i}(x)\n}}\n"
            ),
        );
    }
    write(&repo, "notes.txt", "line one\r\nline two\r\n");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "base"]);
    write(
        &repo,
        "pkg/m0/f0.go",
        "package m\n\nfunc handle0(x int) error {\n\treturn retryAll(x)\n}\n",
    );
    git(&repo, &["commit", "-qam", "retry"]);
    let checkout = dir.join("checkout");
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            checkout.to_str().unwrap(),
            "HEAD",
        ],
    );
    (repo, checkout)
}

fn finding(id: &str, loc: &str, code: &str, text: &str) -> Finding {
    let mut f = Finding::new(id, format!("finding {id}"));
    f.locations.push(loc.parse::<Location>().unwrap());
    f.code = Some(CodeSnippet {
        language: Some("go".into()),
        code: code.into(),
    });
    f.explanation = text.into();
    f
}

/// Findings that need the whole tree: quotes whose cited path does not exist, names to look up.
fn findings() -> Vec<Finding> {
    vec![
        finding(
            "I1",
            "pkg/gone/a.go:4",
            "return checkLimit17(x)",
            "`checkLimit17` and `neverDefinedAnywhere`",
        ),
        finding(
            "I2",
            "pkg/gone/b.go:4",
            "return forgedInCheckout(x)",
            "`forgedInCheckout`",
        ),
        finding(
            "I3",
            "pkg/gone/c.go:4",
            "return checkLimit33(x)",
            "`checkLimit33`",
        ),
        finding("I4", "pkg/gone/d.go:1", "line two", "`notes`"),
    ]
}

fn verify(repo: &Path, checkout: Option<&Path>) -> String {
    let ctx = VerifyContext {
        repo: repo.to_path_buf(),
        head: "HEAD".into(),
        base: Some("HEAD~1".into()),
        checkout: checkout.map(Path::to_path_buf),
    };
    let mut reviews = vec![Review {
        agent: "claude".into(),
        findings: findings(),
        ..Review::default()
    }];
    verify_reviews(&ctx, &mut reviews).unwrap();
    serde_json::to_string_pretty(&reviews[0].findings).unwrap()
}

#[test]
fn a_checkout_gives_the_same_verification_as_git_and_its_altered_files_are_not_used() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, checkout) = repo_and_checkout(tmp.path());
    let from_git = verify(&repo, None);
    assert!(from_git.contains("pkg/m1/f17.go"), "{from_git}");
    assert!(from_git.contains("neverDefinedAnywhere"), "{from_git}");
    assert_eq!(verify(&repo, Some(&checkout)), from_git);

    // A file edited to hold a quote the commit does not have, one removed, one replaced by a
    // symlink to a file that holds another quote, one converted to other line endings.
    write(
        &checkout,
        "pkg/m2/f2.go",
        "package m\n\nfunc handle2(x int) error {\n\treturn forgedInCheckout(x)\n}\n",
    );
    std::fs::remove_file(checkout.join("pkg/m1/f17.go")).unwrap();
    std::fs::remove_file(checkout.join("pkg/m1/f33.go")).unwrap();
    write(
        &checkout,
        "elsewhere.go",
        "func x() {\n\treturn checkLimit33(x)\n}\nneverDefinedAnywhere\n",
    );
    std::os::unix::fs::symlink(
        checkout.join("elsewhere.go"),
        checkout.join("pkg/m1/f33.go"),
    )
    .unwrap();
    write(&checkout, "notes.txt", "line one\nline two\n");
    let altered = verify(&repo, Some(&checkout));
    assert_eq!(
        altered, from_git,
        "the altered checkout changed the verification"
    );
    assert!(!altered.contains("pkg/m2/f2.go"));
}
