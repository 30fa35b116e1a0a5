//! The shared generators of realistic inputs (`../shared/bench-gen/`, Python 3): raw reviews with
//! a Zipf vocabulary, and git repositories of many Go-like files with reviews of their real
//! lines. Tests and benches call them into a temporary directory; nothing they write is
//! committed. Both are deterministic for a given `--seed` (the scripts' default is fixed).
//!
//! Used by the integration tests (`support::bench_gen`) and by the benches (`#[path]`), so it
//! depends on nothing but std.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// `../shared/bench-gen`, or `None` when the folder is absent (the caller says it skipped).
pub fn generators() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/bench-gen");
    dir.join("gen_reviews.py").is_file().then_some(dir)
}

/// `../shared/bench-gen`, which must exist (tests that need it are ignored unless asked for).
pub fn required() -> PathBuf {
    generators().unwrap_or_else(|| {
        panic!(
            "{}/../shared/bench-gen is missing: this test runs the shared generators",
            env!("CARGO_MANIFEST_DIR")
        )
    })
}

fn python(script: &Path, args: &[&str]) {
    let out = Command::new("python3")
        .arg(script)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("python3 {} could not start: {e}", script.display()));
    assert!(
        out.status.success(),
        "python3 {} {}: {}",
        script.display(),
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `gen_reviews.py ARGS --out OUT`: the agents' review files (`a00.md`, ...) by agent name, in
/// agent order.
pub fn reviews(scripts: &Path, out: &Path, args: &[&str]) -> Vec<(String, PathBuf)> {
    let out_arg = out.to_str().expect("a UTF-8 temporary path");
    let mut all = args.to_vec();
    all.extend(["--out", out_arg]);
    python(&scripts.join("gen_reviews.py"), &all);
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(out)
        .expect("the generator's output folder")
        .filter_map(|e| {
            let path = e.ok()?.path();
            let stem = path.file_stem()?.to_str()?.to_string();
            (path.extension()? == "md").then_some((stem, path))
        })
        .collect();
    files.sort();
    files
}

/// `gen_repo.py ARGS --out OUT --no-checkout`: a repository whose working tree is empty.
pub fn repo(scripts: &Path, out: &Path, args: &[&str]) {
    let out_arg = out.to_str().expect("a UTF-8 temporary path");
    let mut all = args.to_vec();
    all.extend(["--out", out_arg, "--no-checkout"]);
    python(&scripts.join("gen_repo.py"), &all);
}
