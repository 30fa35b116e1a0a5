//! `deep-review publish`: the store's reports committed to a branch (`reviews` by default) that
//! GitHub Pages can serve, one commit per report (`Review: <id>`), with the index page and
//! `.nojekyll` at the top. A report already on the branch is committed again when its files
//! changed since (`Review: <id> (updated)`: its Resolution was recorded after it was published).
//!
//! Only plumbing is used: blobs are hashed into the object store, a tree is built in a private
//! index file, and the branch ref is moved with compare-and-swap. The user's working tree,
//! index, HEAD and stash are never touched, whatever branch is checked out.

use std::path::Path;

use anyhow::Context;

use super::Store;

/// What `publish` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    pub branch: String,
    /// `(report id, commit sha)` for each report committed now, oldest first.
    pub commits: Vec<(String, String)>,
    /// The ids among them that were on the branch already and changed since.
    pub updated: Vec<String>,
}

/// The files of a report the branch carries.
const EXTENSIONS: [&str; 4] = ["md", "html", "json", "sarif"];

/// Commits every report of `store` not yet on `branch` of `repo`.
pub fn publish(repo: &Path, store: &Store, branch: &str) -> anyhow::Result<Published> {
    if branch.is_empty()
        || branch.starts_with('-')
        || crate::git::git_probe(repo, &["check-ref-format", "--branch", branch]).is_none()
    {
        anyhow::bail!("`{branch}` is not a valid branch name: pass `--branch NAME`");
    }
    let refname = format!("refs/heads/{branch}");
    let old_tip = crate::git::git_probe(repo, &["rev-parse", "--verify", "--quiet", &refname]);
    let on_branch = match &old_tip {
        Some(tip) => blobs_at(repo, tip)?,
        None => Default::default(),
    };
    let mut entries = store.list()?;
    entries.reverse(); // oldest first: the branch's history follows the reviews'
    let index = tempfile::Builder::new()
        .prefix("deep-review-publish-")
        .tempdir()
        .context("cannot create a temporary directory")?;
    let index_file = index.path().join("index");
    let mut tip = old_tip.clone();
    let mut commits = Vec::new();
    let mut updated = Vec::new();
    let files_of = |id: &str| -> Vec<(String, std::path::PathBuf)> {
        EXTENSIONS
            .iter()
            .map(|ext| (format!("{id}.{ext}"), store.report_path(id, ext)))
            .filter(|(_, p)| p.is_file())
            .collect()
    };
    let all_files: Vec<std::path::PathBuf> = entries
        .iter()
        .flat_map(|e| files_of(&e.id).into_iter().map(|(_, p)| p))
        .collect();
    let hashes = hash_files(repo, &all_files)?;
    for entry in &entries {
        let files = files_of(&entry.id);
        let published = on_branch.contains_key(&format!("{}.md", entry.id))
            || on_branch.contains_key(&format!("{}.json", entry.id));
        let unchanged = published
            && files
                .iter()
                .all(|(name, path)| on_branch.get(name) == hashes.get(path));
        if unchanged {
            continue;
        }
        match &tip {
            Some(t) => crate::git::with_index(repo, &index_file, &["read-tree", t])?,
            None => crate::git::with_index(repo, &index_file, &["read-tree", "--empty"])?,
        };
        let mut files = files;
        files.push(("index.html".into(), store.report_path("index", "html")));
        let stats = store.report_path(super::reports::STATS_PAGE, "html");
        if stats.is_file() {
            files.push((format!("{}.html", super::reports::STATS_PAGE), stats));
        }
        for (name, path) in &files {
            add_file(repo, &index_file, name, path)?;
        }
        add_bytes(repo, &index_file, ".nojekyll", b"")?;
        let tree = crate::git::with_index(repo, &index_file, &["write-tree"])?;
        let parents: Vec<&str> = tip.iter().map(String::as_str).collect();
        let message = if published {
            updated.push(entry.id.clone());
            format!("Review: {} (updated)", entry.id)
        } else {
            format!("Review: {}", entry.id)
        };
        let commit = crate::git::commit_tree(repo, &tree, &parents, &message)?;
        commits.push((entry.id.clone(), commit.clone()));
        tip = Some(commit);
    }
    if let Some(new) = &tip
        && tip != old_tip
    {
        // Compare-and-swap: a branch moved by someone else meanwhile is not overwritten.
        let old = old_tip
            .as_deref()
            .unwrap_or("0000000000000000000000000000000000000000");
        crate::git::git_text(repo, &["update-ref", &refname, new, old])
            .with_context(|| format!("cannot move {refname}"))?;
    }
    Ok(Published {
        branch: branch.to_string(),
        commits,
        updated,
    })
}

/// The blob of every file at the top of `tree`, by name.
fn blobs_at(repo: &Path, tree: &str) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    // `<mode> blob <sha>\t<name>`, one per line.
    Ok(crate::git::git_text(repo, &["ls-tree", tree])?
        .lines()
        .filter_map(|line| {
            let (meta, name) = line.split_once('\t')?;
            let sha = meta.split_whitespace().nth(2)?;
            Some((name.to_string(), sha.to_string()))
        })
        .collect())
}

/// The blob id each file would have, hashed by one `git hash-object --stdin-paths` (nothing is
/// written to the object store).
fn hash_files(
    repo: &Path,
    files: &[std::path::PathBuf],
) -> anyhow::Result<std::collections::HashMap<std::path::PathBuf, String>> {
    use std::io::Write;
    if files.is_empty() {
        return Ok(Default::default());
    }
    let mut child = crate::git::command(repo)
        .args(["hash-object", "--no-filters", "--stdin-paths"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .context("could not start `git hash-object`")?;
    let list: String = files.iter().map(|p| format!("{}\n", p.display())).collect();
    let mut stdin = child
        .stdin
        .take()
        .context("no stdin for `git hash-object`")?;
    // Written from another thread: git answers as it reads, and a full pipe would stall both.
    let writer = std::thread::spawn(move || stdin.write_all(list.as_bytes()));
    let out = child.wait_with_output()?;
    let _ = writer.join();
    if !out.status.success() {
        anyhow::bail!(
            "`git hash-object` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let shas = String::from_utf8_lossy(&out.stdout);
    Ok(files
        .iter()
        .cloned()
        .zip(shas.lines().map(str::to_string))
        .collect())
}

/// The JSON reports `publish` committed to `branch` of `repo`: `(id, bytes)` for every
/// `<id>.json` at the top of the branch's tree, in id order. Read from the commits through one
/// `git cat-file --batch`; the working tree is never looked at.
pub fn published_reports(repo: &Path, branch: &str) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    if branch.is_empty()
        || branch.starts_with('-')
        || crate::git::git_probe(repo, &["check-ref-format", "--branch", branch]).is_none()
    {
        anyhow::bail!("`{branch}` is not a valid branch name: pass `--branch NAME`");
    }
    let refname = format!("refs/heads/{branch}");
    let Some(tip) = crate::git::git_probe(repo, &["rev-parse", "--verify", "--quiet", &refname])
    else {
        anyhow::bail!(
            "there is no branch `{branch}` in {}: `deep-review publish --branch {branch}` makes it",
            repo.display()
        );
    };
    let listing = crate::git::git_bytes(repo, &["ls-tree", "--name-only", "-z", &tip])?;
    let mut ids: Vec<String> = listing
        .split(|b| *b == 0)
        .filter_map(|name| std::str::from_utf8(name).ok())
        .filter_map(|name| name.strip_suffix(".json"))
        .filter(|id| !id.is_empty() && !id.contains('\n'))
        .map(str::to_string)
        .collect();
    ids.sort_by(|a, b| super::reports::id_order(a, b));
    let specs: Vec<String> = ids.iter().map(|id| format!("{tip}:{id}.json")).collect();
    let mut cat = crate::verify::git::CatFile::start(repo)?;
    let blobs = cat.read_many(&specs)?;
    Ok(ids
        .into_iter()
        .zip(blobs)
        .filter_map(|(id, blob)| Some((id, blob?)))
        .collect())
}

/// Pushes `branch` to `remote`.
pub fn push(repo: &Path, remote: &str, branch: &str) -> anyhow::Result<()> {
    let refspec = format!("refs/heads/{branch}:refs/heads/{branch}");
    crate::git::git_text(repo, &["push", "--quiet", remote, &refspec])
        .with_context(|| format!("cannot push {branch} to {remote}"))?;
    Ok(())
}

fn add_file(repo: &Path, index: &Path, name: &str, path: &Path) -> anyhow::Result<()> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    add_bytes(repo, index, name, &bytes)
}

/// Writes `bytes` as a blob and stages it as `name` in the private index.
fn add_bytes(repo: &Path, index: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    let mut child = crate::git::command(repo)
        .args(["hash-object", "-w", "--stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .context("could not start `git hash-object`")?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(bytes)?;
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        anyhow::bail!(
            "`git hash-object` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let sha = String::from_utf8_lossy(&out.stdout).trim().to_string();
    crate::git::with_index(
        repo,
        index,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{sha},{name}"),
        ],
    )?;
    Ok(())
}
