//! The few git plumbing commands verification needs, run through the git CLI.
//!
//! Verification reads commits, never the checkout: every read names a revision (`ls-tree`,
//! `cat-file`, `grep <rev>`), so a dirty or detached working tree cannot change the answer.
//! File contents come through one long-lived `git cat-file --batch` process, so each file costs
//! one round trip on a pipe instead of one process.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use anyhow::{Context, Result, bail};

/// Runs `git -C repo args...` and returns its stdout; a failure names the command and git's error.
pub fn run(repo: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| {
            format!(
                "could not run `git {}`: is git installed and on PATH?",
                args.join(" ")
            )
        })?;
    if !out.status.success() {
        bail!(
            "`git {}` failed in {}: {}",
            args.join(" "),
            repo.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}

/// The full commit id of `rev`, or an error that names the revision and the repository.
pub fn resolve_commit(repo: &Path, rev: &str) -> Result<String> {
    if rev.trim().is_empty() {
        bail!("empty revision given for the repository {}", repo.display());
    }
    let spec = format!("{rev}^{{commit}}");
    let out = run(repo, &["rev-parse", "--verify", "--quiet", &spec]).with_context(|| {
        format!(
            "revision {rev:?} is not a commit in {}: pass a branch, tag or commit id that exists there",
            repo.display()
        )
    })?;
    let sha = String::from_utf8_lossy(&out).trim().to_string();
    if sha.is_empty() {
        bail!("revision {rev:?} is not a commit in {}", repo.display());
    }
    Ok(sha)
}

/// One entry of a commit's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// `100644`, `100755`, `120000` (symlink), `160000` (submodule).
    pub mode: String,
    pub oid: String,
}

impl TreeEntry {
    pub fn is_submodule(&self) -> bool {
        self.mode == "160000"
    }
}

/// Every file of `rev`'s tree by path (`git ls-tree -r -z --full-tree`).
pub fn list_tree(repo: &Path, rev: &str) -> Result<HashMap<String, TreeEntry>> {
    let out = run(repo, &["ls-tree", "-r", "-z", "--full-tree", rev])?;
    let mut tree = HashMap::new();
    for record in out.split(|b| *b == 0) {
        if record.is_empty() {
            continue;
        }
        let record = String::from_utf8_lossy(record);
        let Some((meta, path)) = record.split_once('\t') else {
            continue;
        };
        let mut parts = meta.split(' ');
        let (Some(mode), Some(_kind), Some(oid)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        tree.insert(
            path.to_string(),
            TreeEntry {
                mode: mode.to_string(),
                oid: oid.to_string(),
            },
        );
    }
    Ok(tree)
}

/// A running `git cat-file --batch`: ask for objects one at a time, get their bytes back.
pub struct CatFile {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl CatFile {
    pub fn start(repo: &Path) -> Result<Self> {
        let mut child = Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| {
                format!(
                    "could not start `git cat-file --batch` in {}: is git installed?",
                    repo.display()
                )
            })?;
        let stdin = child.stdin.take().context("git cat-file has no stdin")?;
        let stdout = child.stdout.take().context("git cat-file has no stdout")?;
        Ok(CatFile {
            child,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout),
        })
    }

    /// The bytes of the object `spec` names (an object id or `rev:path`), `None` when it does
    /// not exist or is not a blob.
    pub fn read(&mut self, spec: &str) -> Result<Option<Vec<u8>>> {
        if spec.contains('\n') {
            return Ok(None);
        }
        let stdin = self.stdin.as_mut().context("git cat-file was closed")?;
        stdin
            .write_all(format!("{spec}\n").as_bytes())
            .and_then(|_| stdin.flush())
            .context("could not write to git cat-file")?;
        let mut header = String::new();
        self.stdout
            .read_line(&mut header)
            .context("could not read from git cat-file")?;
        let header = header.trim_end();
        if header.is_empty() {
            bail!("git cat-file stopped answering (asked for {spec})");
        }
        let fields: Vec<&str> = header.split(' ').collect();
        // "<spec> missing" / "<spec> ambiguous": nothing follows.
        if fields.len() != 3 {
            return Ok(None);
        }
        let size: usize = fields[2]
            .parse()
            .with_context(|| format!("git cat-file answered {header:?} for {spec}"))?;
        let mut body = vec![0u8; size + 1];
        self.stdout
            .read_exact(&mut body)
            .with_context(|| format!("git cat-file cut short the object {spec}"))?;
        body.pop(); // the newline after every object
        if fields[1] != "blob" {
            return Ok(None);
        }
        Ok(Some(body))
    }
}

impl Drop for CatFile {
    fn drop(&mut self) {
        // Closing stdin ends the batch; then reap the process so no zombie is left.
        self.stdin.take();
        let _ = self.child.wait();
    }
}

/// Which of `words` occur as whole words anywhere in the text files of `rev`: one
/// `git grep -o -w -F` over the whole tree, whatever the number of words.
pub fn words_present(repo: &Path, rev: &str, words: &BTreeSet<String>) -> Result<HashSet<String>> {
    if words.is_empty() {
        return Ok(HashSet::new());
    }
    let mut patterns = tempfile::NamedTempFile::new()
        .context("could not create a temporary file for git grep patterns")?;
    for word in words {
        writeln!(patterns, "{word}").context("could not write git grep patterns")?;
    }
    patterns
        .flush()
        .context("could not write git grep patterns")?;
    let pattern_path: PathBuf = patterns.path().to_path_buf();
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["grep", "-o", "-h", "-w", "-F", "-I", "--no-color", "-f"])
        .arg(&pattern_path)
        .arg(rev)
        .arg("--")
        .stdin(Stdio::null())
        .output()
        .context("could not run `git grep`: is git installed?")?;
    // Exit status 1 means "no match": not an error.
    match out.status.code() {
        Some(0) | Some(1) => {}
        _ => bail!(
            "`git grep` failed in {}: {}",
            repo.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ),
    }
    let mut found = HashSet::new();
    for line in out.stdout.split(|b| *b == b'\n') {
        if line.is_empty() {
            continue;
        }
        let word = String::from_utf8_lossy(line);
        if words.contains(word.as_ref()) {
            found.insert(word.into_owned());
        }
    }
    Ok(found)
}

/// Paths of the text files at `rev` with a line containing the words of `folded_line` in order,
/// separated by any whitespace (at most `limit` of them).
pub fn files_containing(
    repo: &Path,
    rev: &str,
    folded_line: &str,
    limit: usize,
) -> Result<Vec<String>> {
    let needle = folded_line
        .split(' ')
        .map(|word| {
            word.chars().fold(String::new(), |mut acc, c| {
                if ".[]()*+?{}|^$\\".contains(c) {
                    acc.push('\\');
                }
                acc.push(c);
                acc
            })
        })
        .collect::<Vec<_>>()
        .join("[[:space:]]+");
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "grep",
            "-l",
            "-E",
            "-I",
            "--no-color",
            "-e",
            &needle,
            rev,
            "--",
        ])
        .stdin(Stdio::null())
        .output()
        .context("could not run `git grep`: is git installed?")?;
    match out.status.code() {
        Some(0) | Some(1) => {}
        _ => bail!(
            "`git grep` failed in {}: {}",
            repo.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ),
    }
    let prefix = format!("{rev}:");
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.strip_prefix(&prefix).unwrap_or(l).to_string())
        .take(limit)
        .collect())
}
