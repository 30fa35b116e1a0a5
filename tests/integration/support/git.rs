//! Throwaway git repositories made with the real git CLI, isolated from the user's git config.

use std::path::Path;
use std::process::Command;

/// A `git` command in `dir` that reads no global or system config and commits as a fixed author.
pub fn git_command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Ada Tester")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada Tester")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE");
    cmd
}

/// Runs git in `dir` and returns its stdout; panics with git's stderr when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_command(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("could not run git {args:?}: {e}"));
    assert!(
        out.status.success(),
        "git {args:?} failed in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
}

/// `src/parse.rs` as the second commit of [`two_commit_branch`] adds it: `parse` unwraps on
/// line 4, `parse_list` filters on line 20 (far enough apart for findings on each to stay apart).
pub const PARSE_RS: &str = "//! Number parsing.\n\npub fn parse(s: &str) -> i32 {\n    s.trim().parse().unwrap()\n}\n\n\
/// Parses a comma-separated list.\n///\n/// Empty items are skipped.\n///\n/// Example: `1, 2,,3`.\n///\n\
/// The items are trimmed first.\n///\n/// Nothing else is accepted.\n///\n/// (Kept short on purpose.)\n\
#[allow(dead_code)]\npub fn parse_list(s: &str) -> Vec<i32> {\n    s.split(',').filter(|p| !p.is_empty()).map(parse).collect()\n}\n";

/// A fresh repository in `dir`: `main` with one commit, and a branch `feature` with two more
/// commits that change `src/lib.rs` and add `src/parse.rs`. `feature` is checked out.
pub fn two_commit_branch(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(dir.join("src")).expect("create src/");
    std::fs::write(dir.join("README.md"), "# demo\n").expect("write README.md");
    std::fs::write(
        dir.join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    )
    .expect("write src/lib.rs");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "Initial commit"]);
    git(dir, &["checkout", "-q", "-b", "feature"]);
    std::fs::write(
        dir.join("src/lib.rs"),
        "pub mod parse;\n\npub fn add(a: i32, b: i32) -> i32 {\n    a.wrapping_add(b)\n}\n",
    )
    .expect("write src/lib.rs");
    git(dir, &["commit", "-q", "-am", "Use wrapping addition"]);
    std::fs::write(dir.join("src/parse.rs"), PARSE_RS).expect("write src/parse.rs");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "Add a number parser"]);
}
