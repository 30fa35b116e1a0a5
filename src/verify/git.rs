//! The few git plumbing commands verification needs, run through the git CLI.
//!
//! Verification reads commits, never the checkout: every read names a revision (`ls-tree`,
//! `cat-file`, `grep <rev>`), so a dirty or detached working tree cannot change the answer.
//! File contents come through one long-lived `git cat-file --batch` process, so each file costs
//! one round trip on a pipe instead of one process.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use anyhow::{Context, Result, bail};

pub use crate::git::resolve_commit;
use crate::git::{git_bytes, git_grep};

/// One entry of a commit's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// `100644`, `100755`, `120000` (symlink), `160000` (submodule).
    pub mode: String,
    pub oid: String,
    /// Size in bytes (0 for a submodule).
    pub size: u64,
}

impl TreeEntry {
    pub fn is_submodule(&self) -> bool {
        self.mode == "160000"
    }
}

/// Every file of `rev`'s tree by path (`git ls-tree -r -z -l --full-tree`).
pub fn list_tree(repo: &Path, rev: &str) -> Result<HashMap<String, TreeEntry>> {
    let out = git_bytes(repo, &["ls-tree", "-r", "-z", "-l", "--full-tree", rev])?;
    let mut tree = HashMap::new();
    for record in out.split(|b| *b == 0) {
        if record.is_empty() {
            continue;
        }
        let record = String::from_utf8_lossy(record);
        let Some((meta, path)) = record.split_once('\t') else {
            continue;
        };
        // "<mode> <type> <oid> <size padded with spaces>"
        let mut parts = meta.split(' ').filter(|p| !p.is_empty());
        let (Some(mode), Some(_kind), Some(oid)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let size = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        tree.insert(
            path.to_string(),
            TreeEntry {
                mode: mode.to_string(),
                oid: oid.to_string(),
                size,
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
        let mut child = crate::git::command(repo)
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
        Ok(self.read_many(&[spec.to_string()])?.pop().flatten())
    }

    /// The bytes of every object of `specs`, in order. A thread writes all the requests while
    /// this one reads the answers, so a thousand files cost one pass through the pipe rather
    /// than a thousand round trips.
    pub fn read_many(&mut self, specs: &[String]) -> Result<Vec<Option<Vec<u8>>>> {
        let asked: Vec<&String> = specs.iter().filter(|s| !s.contains('\n')).collect();
        let stdin = self.stdin.as_mut().context("git cat-file was closed")?;
        let stdout = &mut self.stdout;
        let mut answers: Vec<Option<Vec<u8>>> = Vec::with_capacity(asked.len());
        std::thread::scope(|scope| -> Result<()> {
            let writer = scope.spawn(|| -> std::io::Result<()> {
                let mut w = std::io::BufWriter::new(&mut *stdin);
                for spec in &asked {
                    w.write_all(spec.as_bytes())?;
                    w.write_all(b"\n")?;
                }
                w.flush()
            });
            for spec in &asked {
                answers.push(read_answer(stdout, spec)?);
            }
            writer
                .join()
                .map_err(|_| anyhow::anyhow!("the git cat-file writer panicked"))?
                .context("could not write to git cat-file")
        })?;
        // Specs that could not be asked (a newline in the path) have no object.
        let mut answers = answers.into_iter();
        Ok(specs
            .iter()
            .map(|s| {
                if s.contains('\n') {
                    None
                } else {
                    answers.next().flatten()
                }
            })
            .collect())
    }
}

/// Reads one answer of `git cat-file --batch`: `<oid> <type> <size>\n<bytes>\n`, or
/// `<spec> missing\n` / `<spec> ambiguous\n` with nothing after.
fn read_answer(stdout: &mut BufReader<ChildStdout>, spec: &str) -> Result<Option<Vec<u8>>> {
    let mut header = String::new();
    stdout
        .read_line(&mut header)
        .context("could not read from git cat-file")?;
    let header = header.trim_end();
    if header.is_empty() {
        bail!("git cat-file stopped answering (asked for {spec})");
    }
    let fields: Vec<&str> = header.rsplitn(3, ' ').collect();
    let found = fields.len() == 3
        && fields[0].bytes().all(|b| b.is_ascii_digit())
        && fields[2].len() >= 40
        && fields[2].bytes().all(|b| b.is_ascii_hexdigit());
    if !found {
        return Ok(None);
    }
    let size: usize = fields[0]
        .parse()
        .with_context(|| format!("git cat-file answered {header:?} for {spec}"))?;
    let mut body = vec![0u8; size + 1];
    stdout
        .read_exact(&mut body)
        .with_context(|| format!("git cat-file cut short the object {spec}"))?;
    body.pop(); // the newline after every object
    Ok((fields[1] == "blob").then_some(body))
}

impl Drop for CatFile {
    fn drop(&mut self) {
        // Closing stdin ends the batch; then reap the process so no zombie is left.
        self.stdin.take();
        let _ = self.child.wait();
    }
}

/// How many words go into one alternation of [`words_present`].
const WORDS_PER_PATTERN: usize = 256;

/// Which of `words` (identifiers: letters, digits, `_`) occur as whole words anywhere in the
/// text files of `rev`: one `git grep -o -w -E` over the whole tree. The words are joined into
/// a few alternations (`(a|b|c)`) rather than passed as one pattern each, because git tries
/// every pattern on every line: a thousand `-e` patterns take a minute on 5,000 files where one
/// alternation takes a fraction of a second.
pub fn words_present(repo: &Path, rev: &str, words: &HashSet<String>) -> Result<HashSet<String>> {
    let mut wanted: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .filter(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .collect();
    if wanted.is_empty() {
        return Ok(HashSet::new());
    }
    wanted.sort_unstable();
    let mut patterns = tempfile::NamedTempFile::new()
        .context("could not create a temporary file for git grep patterns")?;
    for chunk in wanted.chunks(WORDS_PER_PATTERN) {
        writeln!(patterns, "({})", chunk.join("|")).context("could not write git grep patterns")?;
    }
    patterns
        .flush()
        .context("could not write git grep patterns")?;
    let pattern_file = patterns.path().to_string_lossy().into_owned();
    let stdout = git_grep(
        repo,
        &["-o", "-h", "-w", "-E", "-I", "-f", &pattern_file, rev, "--"],
    )?;
    let mut found = HashSet::new();
    for line in stdout.split(|b| *b == b'\n') {
        if let Ok(word) = std::str::from_utf8(line)
            && words.contains(word)
            && !found.contains(word)
        {
            found.insert(word.to_string());
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
    // `-z`: names end in NUL and are never quoted, so non-ASCII paths come back as they are.
    let stdout = git_grep(repo, &["-l", "-z", "-E", "-I", "-e", &needle, rev, "--"])?;
    let prefix = format!("{rev}:");
    Ok(stdout
        .split(|b| *b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| {
            let name = String::from_utf8_lossy(name);
            name.strip_prefix(&prefix).unwrap_or(&name).to_string()
        })
        .take(limit)
        .collect())
}
