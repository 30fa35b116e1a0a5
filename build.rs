//! Names the commit deep-review was built from, for `deep-review --version`
//! (`deep-review 0.2.0 (commit 0123456789ab)`): a bug report then says which code ran.
//!
//! From git when the package's own folder is a git checkout (not merely inside one: a package
//! unpacked under a home folder kept in git must not take that repository's commit); else from the
//! `.cargo_vcs_info.json` that crates.io packages carry; else `unknown`. Never fails the build.

use std::path::Path;
use std::process::Command;

#[path = "build/vcs_info.rs"]
mod vcs_info;

/// How many hex digits of the commit `--version` shows (git's own abbreviation grows with the
/// repository; a fixed length keeps the output stable).
const SHORT: usize = 12;

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let dir = Path::new(&dir);
    let commit = commit_from_git(dir)
        .or_else(|| commit_from_vcs_info(dir))
        .map(|sha| sha[..SHORT].to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=DEEP_REVIEW_COMMIT={commit}");
    println!("cargo:rerun-if-changed=.cargo_vcs_info.json");
}

/// HEAD's commit when `dir` is the top of a git work tree, with the files whose change moves
/// HEAD marked for a rebuild.
fn commit_from_git(dir: &Path) -> Option<String> {
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    let same = Path::new(&top).canonicalize().ok()? == dir.canonicalize().ok()?;
    if !same {
        return None;
    }
    let sha = git(dir, &["rev-parse", "--verify", "HEAD^{commit}"])?;
    // HEAD itself, the branch it points at (loose), and packed-refs (where a gc moves it).
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    watched.extend(git(dir, &["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(path) = git(dir, &["rev-parse", "--git-path", &name]) {
            println!("cargo:rerun-if-changed={}", dir.join(path).display());
        }
    }
    (sha.len() == 40 || sha.len() == 64).then_some(sha)
}

fn commit_from_vcs_info(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    vcs_info::sha_from_vcs_info(&text)
}

/// One git command's trimmed stdout, or `None` when git is missing or refuses.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    out.status.success().then(|| text.trim().to_string())
}
