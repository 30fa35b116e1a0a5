//! Big real repositories, fast: commits written with `git fast-import` (one process for any
//! number of commits and files), for the brief's budget tests and `benches/brief.rs`. Depends
//! only on std, so the benchmark can include it by path.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// One commit: its message and the files it writes (`Some`) or deletes (`None`).
pub struct Commit {
    pub message: String,
    pub files: Vec<(String, Option<Vec<u8>>)>,
}

impl Commit {
    pub fn new(message: impl Into<String>) -> Commit {
        Commit {
            message: message.into(),
            files: Vec::new(),
        }
    }

    pub fn write(mut self, path: impl Into<String>, content: impl Into<Vec<u8>>) -> Commit {
        self.files.push((path.into(), Some(content.into())));
        self
    }
}

/// Appends `commits` to `branch` of the repository at `dir` (starting it from `from` when the
/// branch is new, e.g. `Some("main")`), with one `git fast-import`. The working tree and index
/// are not touched.
pub fn import(
    dir: &Path,
    branch: &str,
    from: Option<&str>,
    commits: impl IntoIterator<Item = Commit>,
) {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["fast-import", "--quiet", "--done"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import runs");
    {
        let stdin = child.stdin.as_mut().expect("stdin");
        let mut out = std::io::BufWriter::with_capacity(1 << 20, stdin);
        let data = |out: &mut std::io::BufWriter<_>, bytes: &[u8]| {
            writeln!(out, "data {}", bytes.len()).unwrap();
            out.write_all(bytes).unwrap();
            out.write_all(b"\n").unwrap();
        };
        let mut first = true;
        for (n, commit) in commits.into_iter().enumerate() {
            let when = 1_767_323_045 + n as u64;
            writeln!(out, "commit refs/heads/{branch}").unwrap();
            writeln!(out, "author Test Author <author@example.com> {when} +0000").unwrap();
            writeln!(
                out,
                "committer Test Author <author@example.com> {when} +0000"
            )
            .unwrap();
            data(&mut out, commit.message.as_bytes());
            if first && let Some(from) = from {
                writeln!(out, "from refs/heads/{from}").unwrap();
            }
            first = false;
            for (path, content) in &commit.files {
                let quoted = quote(path);
                match content {
                    Some(bytes) => {
                        writeln!(out, "M 100644 inline {quoted}").unwrap();
                        data(&mut out, bytes);
                    }
                    None => writeln!(out, "D {quoted}").unwrap(),
                }
            }
            out.write_all(b"\n").unwrap();
        }
        out.write_all(b"done\n").unwrap();
        out.flush().unwrap();
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "git fast-import failed");
}

/// A path as fast-import reads it: C-quoted when it holds a quote, a newline or a backslash.
fn quote(path: &str) -> String {
    if !path.contains(['"', '\n', '\\']) && !path.starts_with(' ') {
        return path.to_string();
    }
    let mut out = String::from("\"");
    for c in path.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A source file of `functions` small functions (8 lines each), `tag` making it unique.
pub fn source_file(tag: usize, functions: usize) -> String {
    let mut s = format!("package p{tag}\n\n");
    for k in 0..functions {
        s.push_str(&format!(
            "func handle{tag}_{k}(req Request) error {{\n\tif req.ID == {k} {{\n\t\treturn errInvalid\n\t}}\n\tvalue := compute(req, {tag})\n\tlog.Printf(\"handled %d\", value)\n\treturn nil\n}}\n\n"
        ));
    }
    s
}

/// [`source_file`] with one line changed in every `every`-th function: `changed` lines in all.
pub fn source_file_changed(tag: usize, functions: usize, every: usize) -> String {
    let mut s = format!("package p{tag}\n\n");
    for k in 0..functions {
        let value = if k % every == 0 {
            format!("\tvalue := computeChecked(req, {tag}, {k})\n")
        } else {
            format!("\tvalue := compute(req, {tag})\n")
        };
        s.push_str(&format!(
            "func handle{tag}_{k}(req Request) error {{\n\tif req.ID == {k} {{\n\t\treturn errInvalid\n\t}}\n{value}\tlog.Printf(\"handled %d\", value)\n\treturn nil\n}}\n\n"
        ));
    }
    s
}
