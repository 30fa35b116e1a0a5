//! The changed files of `base..head` with their hunks, from three `git diff` runs between the two
//! commits: `--raw -z` (exact paths, modes, kinds), `--numstat -z` (line counts, binary) and
//! `-U0` (hunks). The working tree is never read: a review is about commits.

use std::collections::HashMap;
use std::path::Path;

use crate::git::git_bytes;
use crate::types::{ChangeKind, ChangedFile, Hunk};

/// The files changed between `base` and `head` (commit-ishes) in the repository at `repo`,
/// with renames followed. Binary files have no counts and no hunks; submodules are listed with
/// no counts and no hunks; deleted files carry their old path.
pub fn changed_files(repo: &Path, base: &str, head: &str) -> anyhow::Result<Vec<ChangedFile>> {
    for rev in [base, head] {
        if rev.starts_with('-') {
            anyhow::bail!("`{rev}` is not a commit: revisions may not start with `-`");
        }
    }
    let common = [
        "diff",
        "-M",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=none",
        "--submodule=short",
    ];
    let run = |extra: &[&str]| {
        let mut args: Vec<&str> = common.to_vec();
        args.extend_from_slice(extra);
        args.extend_from_slice(&[base, head, "--"]);
        git_bytes(repo, &args)
    };
    // Three git processes at once: on a 20,000-file change each takes a few hundred ms.
    let (raw, numstat, patch) = std::thread::scope(|s| {
        let numstat = s.spawn(|| run(&["--numstat", "-z"]));
        let patch = s.spawn(|| run(&["-U0", "--no-color", "--src-prefix=a/", "--dst-prefix=b/"]));
        let raw = run(&["--raw", "-z"]);
        let join = |h: std::thread::ScopedJoinHandle<'_, anyhow::Result<Vec<u8>>>| {
            h.join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("a `git diff` reader thread panicked")))
        };
        (raw, join(numstat), join(patch))
    });
    let (raw, numstat, patch) = (raw?, numstat?, patch?);

    let mut files = parse_raw(&raw)?;
    let counts = parse_numstat(&numstat)?;
    let mut hunks = parse_patch_hunks(&patch);
    for file in &mut files {
        if file.submodule {
            continue;
        }
        match counts.get(&file.path) {
            Some(Some((added, removed))) => {
                file.added = *added;
                file.removed = *removed;
            }
            Some(None) => file.binary = true,
            None => {}
        }
        if !file.binary {
            file.hunks = hunks.remove(&file.path).unwrap_or_default();
        }
    }
    Ok(files)
}

/// The blob ids of each changed file as (id at `base`, id at `head`), keyed like
/// [`changed_files`] (the path at head; a deleted file's old path). An id of all zeros means the
/// file is absent on that side. For readers of file contents (the packed prompt) that must read
/// the commits, not the working tree, and cannot pass odd paths through `git cat-file`.
pub fn blob_ids(
    repo: &Path,
    base: &str,
    head: &str,
) -> anyhow::Result<HashMap<String, (String, String)>> {
    for rev in [base, head] {
        if rev.starts_with('-') {
            anyhow::bail!("`{rev}` is not a commit: revisions may not start with `-`");
        }
    }
    let raw = git_bytes(
        repo,
        &[
            "diff",
            "-M",
            "--no-ext-diff",
            "--no-textconv",
            "--ignore-submodules=none",
            "--raw",
            "-z",
            "--no-abbrev",
            base,
            head,
            "--",
        ],
    )?;
    Ok(parse_raw_entries(&raw)?
        .into_iter()
        .map(|(file, old_id, new_id)| (file.path, (old_id, new_id)))
        .collect())
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Parses `git diff --raw -z`: `:oldmode newmode oldsha newsha STATUS\0path\0` or, for renames
/// and copies, `...R086\0old\0new\0`.
fn parse_raw(out: &[u8]) -> anyhow::Result<Vec<ChangedFile>> {
    Ok(parse_raw_entries(out)?
        .into_iter()
        .map(|(file, _, _)| file)
        .collect())
}

/// [`parse_raw`] with each file's old and new object ids.
fn parse_raw_entries(out: &[u8]) -> anyhow::Result<Vec<(ChangedFile, String, String)>> {
    let mut fields = out.split(|b| *b == 0);
    let mut files = Vec::new();
    while let Some(meta) = fields.next() {
        if meta.is_empty() {
            continue;
        }
        let meta = lossy(meta);
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old_sha, new_sha, status] = parts[..] else {
            anyhow::bail!("unexpected `git diff --raw` line `{meta}`: please report this");
        };
        let letter = status.chars().next().unwrap_or('M');
        let mut next_path = || {
            fields
                .next()
                .map(lossy)
                .ok_or_else(|| anyhow::anyhow!("`git diff --raw` line `{meta}` has no path"))
        };
        let (kind, old_path, path) = match letter {
            'A' => (ChangeKind::Added, None, next_path()?),
            'D' => (ChangeKind::Deleted, None, next_path()?),
            'T' => (ChangeKind::TypeChanged, None, next_path()?),
            'R' | 'C' => {
                let old = next_path()?;
                let new = next_path()?;
                let kind = if letter == 'R' {
                    ChangeKind::Renamed
                } else {
                    ChangeKind::Copied
                };
                (kind, Some(old), new)
            }
            _ => (ChangeKind::Modified, None, next_path()?),
        };
        let submodule = old_mode == "160000" || new_mode == "160000";
        let file = ChangedFile {
            path,
            old_path,
            kind,
            added: 0,
            removed: 0,
            binary: false,
            submodule,
            hunks: Vec::new(),
        };
        files.push((file, old_sha.to_string(), new_sha.to_string()));
    }
    Ok(files)
}

/// Parses `git diff --numstat -z` into path → `Some((added, removed))`, or `None` for a binary
/// file (`-\t-`). Renames are keyed by their new path.
fn parse_numstat(out: &[u8]) -> anyhow::Result<HashMap<String, Option<(u32, u32)>>> {
    let mut fields = out.split(|b| *b == 0);
    let mut counts = HashMap::new();
    while let Some(entry) = fields.next() {
        if entry.is_empty() {
            continue;
        }
        let entry = lossy(entry);
        let mut parts = entry.splitn(3, '\t');
        let (Some(added), Some(removed), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            anyhow::bail!("unexpected `git diff --numstat` entry `{entry}`: please report this");
        };
        let path = if path.is_empty() {
            // A rename: the old and the new path follow as two fields.
            let _old = fields.next();
            fields.next().map(lossy).unwrap_or_default()
        } else {
            path.to_string()
        };
        let value = match (added.parse::<u32>(), removed.parse::<u32>()) {
            (Ok(a), Ok(r)) => Some((a, r)),
            _ => None,
        };
        counts.insert(path, value);
    }
    Ok(counts)
}

/// Parses the hunk headers of `git diff -U0` output, keyed by the file's path at head (its old
/// path when deleted). Hunk bodies are skipped by their line counts, so a removed line that
/// itself reads `--- x` cannot be taken for a header.
fn parse_patch_hunks(out: &[u8]) -> HashMap<String, Vec<Hunk>> {
    let mut map: HashMap<String, Vec<Hunk>> = HashMap::new();
    let mut minus_path: Option<String> = None;
    let mut current: Option<String> = None;
    let mut remaining_old = 0u32;
    let mut remaining_new = 0u32;
    for line in out.split(|b| *b == b'\n') {
        if remaining_old > 0 || remaining_new > 0 {
            match line.first() {
                Some(b'-') if remaining_old > 0 => {
                    remaining_old -= 1;
                    continue;
                }
                Some(b'+') if remaining_new > 0 => {
                    remaining_new -= 1;
                    continue;
                }
                Some(b'\\') => continue,
                // Counts and body disagree (should not happen): read this line as a header.
                _ => {
                    remaining_old = 0;
                    remaining_new = 0;
                }
            }
        }
        if line.starts_with(b"diff --git ") {
            minus_path = None;
            current = None;
        } else if let Some(rest) = line.strip_prefix(b"--- ") {
            minus_path = header_path(rest, b"a/");
        } else if let Some(rest) = line.strip_prefix(b"+++ ") {
            current = header_path(rest, b"b/").or_else(|| minus_path.clone());
        } else if line.starts_with(b"@@ ")
            && let (Some(path), Some(hunk)) = (&current, parse_hunk_header(&lossy(line)))
        {
            remaining_old = hunk.old_lines;
            remaining_new = hunk.new_lines;
            map.entry(path.clone()).or_default().push(hunk);
        }
    }
    map
}

/// The path of a `--- a/x` / `+++ b/x` line: C-quoted when it holds special characters, a
/// trailing tab when it holds a space, `/dev/null` for none.
fn header_path(rest: &[u8], prefix: &[u8]) -> Option<String> {
    let rest = rest.strip_suffix(b"\t").unwrap_or(rest);
    if rest == b"/dev/null" {
        return None;
    }
    let raw = if rest.first() == Some(&b'"') {
        unquote_c(rest)
    } else {
        rest.to_vec()
    };
    let stripped = raw.strip_prefix(prefix).unwrap_or(&raw);
    Some(lossy(stripped))
}

/// Undoes git's C-style path quoting: `"a\tb\303\251"` → bytes.
fn unquote_c(quoted: &[u8]) -> Vec<u8> {
    let inner = quoted
        .strip_prefix(b"\"")
        .and_then(|q| q.strip_suffix(b"\""))
        .unwrap_or(quoted);
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        let b = inner[i];
        if b != b'\\' || i + 1 >= inner.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let next = inner[i + 1];
        let octal = inner
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        if let Some(d) = octal {
            out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
            i += 4;
            continue;
        }
        out.push(match next {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'a' => 7,
            b'b' => 8,
            b'f' => 12,
            b'v' => 11,
            other => other,
        });
        i += 2;
    }
    out
}

/// `@@ -12,3 +12,0 @@ ...` → a [`Hunk`]; a missing count means 1.
pub(crate) fn parse_hunk_header(line: &str) -> Option<Hunk> {
    let mut parts = line.split(' ');
    parts.next()?; // @@
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let range = |s: &str| -> Option<(u32, u32)> {
        match s.split_once(',') {
            Some((start, len)) => Some((start.parse().ok()?, len.parse().ok()?)),
            None => Some((s.parse().ok()?, 1)),
        }
    };
    let (old_start, old_lines) = range(old)?;
    let (new_start, new_lines) = range(new)?;
    Some(Hunk {
        old_start,
        old_lines,
        new_start,
        new_lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunk_header_defaults_count_to_one() {
        let h = parse_hunk_header("@@ -3 +4,0 @@ fn x").unwrap();
        assert_eq!(
            h,
            Hunk {
                old_start: 3,
                old_lines: 1,
                new_start: 4,
                new_lines: 0
            }
        );
    }

    #[test]
    fn quoted_paths_are_unquoted() {
        assert_eq!(
            header_path(b"\"b/a\\tb\\303\\251\"", b"b/").unwrap(),
            "a\tb\u{e9}"
        );
        assert_eq!(
            header_path(b"b/with space.txt\t", b"b/").unwrap(),
            "with space.txt"
        );
        assert_eq!(header_path(b"/dev/null", b"b/"), None);
    }

    #[test]
    fn removed_line_looking_like_a_header_is_body() {
        let patch = b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,0 @@\n--- a/y\n-+++ b/y\n@@ -5 +3 @@\n-a\n+b\n";
        let map = parse_patch_hunks(patch);
        assert_eq!(map.len(), 1);
        assert_eq!(map["x"].len(), 2);
    }
}
