//! Reading many blobs from the object store in one `git cat-file --batch`: the packed prompt
//! reads the changed files as committed (merge-base and head), never from the working tree.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::Stdio;

use anyhow::Context as _;

/// A blob bigger than this is not read (it is named as too large): a prompt cannot use it.
pub const MAX_BLOB_BYTES: u64 = 4 * 1024 * 1024;

/// What `git cat-file` gave for one object id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blob {
    Text(Vec<u8>),
    /// Bigger than [`MAX_BLOB_BYTES`]: its size.
    TooLarge(u64),
    /// Not in the object store (or not a blob).
    Missing,
}

/// Reads every object of `ids` (full hex ids) from the repository at `repo`. One git process; its
/// input is written from a second thread so neither side can block on a full pipe.
pub fn read_blobs(repo: &Path, ids: &[String]) -> anyhow::Result<HashMap<String, Blob>> {
    let mut unique: Vec<&str> = ids.iter().map(String::as_str).collect();
    unique.sort_unstable();
    unique.dedup();
    let mut out = HashMap::with_capacity(unique.len());
    if unique.is_empty() {
        return Ok(out);
    }
    if let Some(bad) = unique
        .iter()
        .find(|id| !id.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        anyhow::bail!("`{bad}` is not an object id: please report this");
    }

    let mut child = crate::git::command(repo)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| {
            format!(
                "could not start `git cat-file` in {}: is git installed and on PATH?",
                repo.display()
            )
        })?;
    let mut stdin = child.stdin.take().context("git cat-file has no stdin")?;
    let request: String = unique.iter().map(|id| format!("{id}\n")).collect();
    let writer = std::thread::spawn(move || {
        // A write error means git stopped reading; the read side reports what happened.
        let _ = stdin.write_all(request.as_bytes());
    });

    let stdout = child.stdout.take().context("git cat-file has no stdout")?;
    let mut reader = BufReader::with_capacity(1 << 16, stdout);
    let result = read_replies(&mut reader, &unique, &mut out);
    let _ = writer.join();
    drop(reader);
    let status = child.wait()?;
    if let Err(err) = result {
        let mut stderr = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut stderr);
        }
        anyhow::bail!(
            "could not read files from git in {} ({status}): {err}: {}",
            repo.display(),
            stderr.trim()
        );
    }
    Ok(out)
}

/// Reads one reply per id: `<id> blob <size>\n<content>\n` or `<id> missing\n`.
fn read_replies(
    reader: &mut impl BufRead,
    ids: &[&str],
    out: &mut HashMap<String, Blob>,
) -> anyhow::Result<()> {
    let mut header = String::new();
    for id in ids {
        header.clear();
        if reader.read_line(&mut header)? == 0 {
            anyhow::bail!("git cat-file stopped before `{id}`");
        }
        let fields: Vec<&str> = header.trim_end().split(' ').collect();
        let blob = match fields.as_slice() {
            [_, kind, size] => {
                let size: u64 = size.parse().with_context(|| {
                    format!("unexpected git cat-file reply `{}`", header.trim())
                })?;
                if *kind == "blob" && size <= MAX_BLOB_BYTES {
                    let mut data = vec![0u8; size as usize];
                    reader.read_exact(&mut data)?;
                    skip(reader, 1)?;
                    Blob::Text(data)
                } else {
                    skip(reader, size + 1)?;
                    if *kind == "blob" {
                        Blob::TooLarge(size)
                    } else {
                        Blob::Missing
                    }
                }
            }
            _ => Blob::Missing,
        };
        out.insert((*id).to_string(), blob);
    }
    Ok(())
}

fn skip(reader: &mut impl BufRead, n: u64) -> anyhow::Result<()> {
    let copied = std::io::copy(&mut reader.take(n), &mut std::io::sink())?;
    if copied != n {
        anyhow::bail!("git cat-file output ended early");
    }
    Ok(())
}
