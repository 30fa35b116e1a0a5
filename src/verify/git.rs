//! The few git plumbing commands verification needs, run through the git CLI.
//!
//! Verification reads commits, never the checkout: every read names a revision or an object
//! (`ls-tree`, `cat-file`), so a dirty or detached working tree cannot change the answer. File
//! contents come through one long-lived `git cat-file --batch` process, so each file costs one
//! round trip on a pipe instead of one process; a search over many files reads them from the
//! object store in process, or streams them through one `git cat-file --batch --buffer`
//! ([`super::stream`]).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use anyhow::{Context, Result, bail};

use crate::git::git_bytes;
pub use crate::git::resolve_commit;

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

/// Every file of `rev`'s tree by path (`git ls-tree -r -z --full-tree`). Sizes are not asked
/// for: git would have to open every object to give them (three times the listing's time on
/// 50,000 files); a read learns a file's size anyway.
pub fn list_tree(repo: &Path, rev: &str) -> Result<HashMap<String, TreeEntry>> {
    let out = git_bytes(repo, &["ls-tree", "-r", "-z", "--full-tree", rev])?;
    let mut tree = HashMap::new();
    for record in out.split(|b| *b == 0) {
        if record.is_empty() {
            continue;
        }
        let record = String::from_utf8_lossy(record);
        let Some((meta, path)) = record.split_once('\t') else {
            continue;
        };
        // "<mode> <type> <oid>"
        let mut parts = meta.split(' ').filter(|p| !p.is_empty());
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

/// `git cat-file --batch` with `extra` options, started with its pipes taken.
pub(super) fn spawn_cat_file(
    repo: &Path,
    extra: &[&str],
) -> Result<(Child, ChildStdin, ChildStdout)> {
    let mut child = crate::git::command(repo)
        .args(["cat-file", "--batch"])
        .args(extra)
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
    Ok((child, stdin, stdout))
}

/// A running `git cat-file --batch`: ask for objects one at a time, get their bytes back.
pub struct CatFile {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl CatFile {
    pub fn start(repo: &Path) -> Result<Self> {
        let (child, stdin, stdout) = spawn_cat_file(repo, &[])?;
        Ok(CatFile {
            child,
            stdin: Some(stdin),
            stdout: BufReader::with_capacity(1 << 20, stdout),
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
            // Every request in one write.
            let writer = scope.spawn(|| -> std::io::Result<()> {
                let mut requests: Vec<u8> = Vec::new();
                for spec in &asked {
                    requests.extend_from_slice(spec.as_bytes());
                    requests.push(b'\n');
                }
                stdin.write_all(&requests)?;
                stdin.flush()
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

/// Blobs larger than this are passed over by a search of many files (read from the pipe and
/// dropped, see [`super::stream`]): generated bundles and data files, not code a reviewer quotes or names.
pub const MAX_SCAN_BLOB: usize = 8 * 1024 * 1024;

/// Reads one answer of `git cat-file --batch`, appending the blob to `body`: `true` for a blob
/// no larger than [`MAX_SCAN_BLOB`], `false` for anything else (missing, not a blob, too
/// large: skipped, `body` as it was).
pub(super) fn read_blob(reader: &mut impl BufRead, oid: &str, body: &mut Vec<u8>) -> Result<bool> {
    let mut header = String::new();
    reader
        .read_line(&mut header)
        .context("could not read from git cat-file")?;
    let header = header.trim_end();
    if header.is_empty() {
        bail!("git cat-file stopped answering (asked for {oid})");
    }
    let fields: Vec<&str> = header.rsplitn(3, ' ').collect();
    if fields.len() != 3 || !fields[0].bytes().all(|b| b.is_ascii_digit()) {
        return Ok(false); // `<oid> missing`
    }
    let size: usize = fields[0]
        .parse()
        .with_context(|| format!("git cat-file answered {header:?} for {oid}"))?;
    let keep = fields[1] == "blob" && size <= MAX_SCAN_BLOB;
    if keep {
        let start = body.len();
        body.resize(start + size + 1, 0);
        reader
            .read_exact(&mut body[start..])
            .with_context(|| format!("git cat-file cut short the object {oid}"))?;
        body.pop(); // the newline after every object
    } else {
        let skipped = std::io::copy(&mut reader.take(size as u64 + 1), &mut std::io::sink())
            .with_context(|| format!("git cat-file cut short the object {oid}"))?;
        if skipped != size as u64 + 1 {
            bail!("git cat-file cut short the object {oid}");
        }
    }
    Ok(keep)
}
