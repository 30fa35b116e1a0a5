//! Turning what the user typed (`feature`, `main..feature`, nothing) into commits.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::environment::{self, repo_root};
use super::{TargetSpec, changed_files, safe_label, uncommitted};
use crate::git::{git_probe, git_text};
use crate::types::CommitInfo;
use crate::types::Target;

/// Resolves `spec` in the repository that contains `repo` into a [`Target`].
///
/// TARGET `A..B` (or `A...B`) reviews `merge-base(A, B)..B`; a single name reviews that branch
/// or commit against its base; nothing reviews HEAD. The base, when not given, is the branch's
/// upstream when it tracks another branch (`git checkout -b feat origin/main`), else the default
/// branch (`origin/HEAD`, `main`, `master`). `--base` and `--head` override either side.
pub fn resolve(repo: &Path, spec: &TargetSpec) -> anyhow::Result<Target> {
    resolve_leaving_out(repo, spec, &[])
}

/// [`resolve`], with the folders of `leave_out` (deep-review's store when `--store` puts it in
/// the working tree, an earlier version's `.reviews/`) kept out of an `--uncommitted` snapshot:
/// they are deep-review's records, not the user's change.
pub fn resolve_leaving_out(
    repo: &Path,
    spec: &TargetSpec,
    leave_out: &[PathBuf],
) -> anyhow::Result<Target> {
    let root = repo_root(repo)?;

    let (base_from_target, head_from_target) = split_target(spec.target.as_deref());
    let head_spec = spec
        .head
        .clone()
        .or(head_from_target)
        .unwrap_or_else(|| "HEAD".to_string());
    let base_spec = spec.base.clone().or(base_from_target);

    let (head, head_ref) = if spec.uncommitted {
        if head_spec != "HEAD" {
            anyhow::bail!(
                "`--uncommitted` reviews the working tree against HEAD, so it takes no head \
                 (`{head_spec}`): drop it, or name a base with `--base REV` or `BASE..`"
            );
        }
        let parent = verify_commit(&root, "HEAD")?;
        let snapshot = uncommitted::snapshot_commit(&root, &parent, leave_out)?;
        (snapshot, "HEAD".to_string())
    } else {
        verify_commit_or_origin(&root, &head_spec)?
    };
    let branch = branch_of(&root, &head_ref);
    let head_shown = if spec.uncommitted {
        "the working tree"
    } else {
        head_ref.as_str()
    };

    let (base, base_ref) = match base_spec {
        Some(b) => verify_commit_or_origin(&root, &b)?,
        None if spec.uncommitted => (verify_commit(&root, "HEAD")?, "HEAD".to_string()),
        None => default_base(&root, branch.as_deref(), head_shown, &head)?,
    };

    let merge_base = merge_base_of(&root, (&base, &base_ref), (&head, head_shown))?;

    // The commit list and the diffs are independent: read them at once.
    let (commits, files) = std::thread::scope(|s| {
        let files = s.spawn(|| changed_files(&root, &merge_base, &head));
        let commits = commits(&root, &merge_base, &head);
        let files = files
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the `git diff` reader thread panicked")));
        (commits, files)
    });
    let commits = commits?;
    let files =
        files.with_context(|| format!("could not list the files changed by `{head_shown}`"))?;
    let author = commits
        .first()
        .map(|c| c.1.clone())
        .filter(|a| !a.is_empty());
    let commits: Vec<CommitInfo> = commits.into_iter().map(|c| c.0).collect();

    let label = label_of(spec, branch.as_deref(), &head);

    let repo_name = repo_name(&root);
    let web_url = web_url(&root);
    Ok(Target {
        repo_name,
        web_url,
        repo: root,
        base,
        head,
        merge_base,
        base_ref,
        branch,
        author,
        commits,
        changed_files: files,
        pr: spec.pr.clone(),
        description: spec.description.clone(),
        review_threads: Vec::new(),
        label,
    })
}

/// The merge-base of the change, or why there is nothing to review: no shared history (with
/// what to do, a shallow clone's own), or no commit of its own.
fn merge_base_of(
    root: &Path,
    (base, base_ref): (&str, &str),
    (head, head_shown): (&str, &str),
) -> anyhow::Result<String> {
    let merge_base = git_text(root, &["merge-base", base, head]).map_err(|_| {
        let why = if environment::is_shallow(root) {
            environment::SHALLOW_HINT.to_string()
        } else {
            format!("name a base that `{head_shown}` was branched from with `--base REV`")
        };
        anyhow::anyhow!(
            "`{base_ref}` and `{head_shown}` share no history in {}: {why}",
            root.display()
        )
    })?;
    if merge_base == head {
        anyhow::bail!(
            "nothing to review: `{head_shown}` has no commits that are not already on `{base_ref}` \
             in {}: name the change as `BASE..HEAD` or pass `--base REV`",
            root.display()
        );
    }
    Ok(merge_base)
}

/// The change's label (report ids, the store): its PR, else its branch, else the head's short
/// id; `-uncommitted` for the working tree.
fn label_of(spec: &TargetSpec, branch: Option<&str>, head: &str) -> String {
    let label = match (&spec.pr, branch) {
        (Some(pr), _) => pr.label(),
        (None, Some(b)) => safe_label(b),
        (None, None) => head.chars().take(12).collect(),
    };
    if spec.uncommitted {
        format!("{label}-uncommitted")
    } else {
        label
    }
}

/// `owner/name` from the `origin` remote (`git@github.com:o/n.git`, `https://host/o/n`), else
/// the directory's name.
fn repo_name(root: &Path) -> String {
    let from_remote = git_probe(root, &["config", "--get", "remote.origin.url"]).and_then(|url| {
        let url = url.trim().trim_end_matches('/').trim_end_matches(".git");
        let path = url.rsplit_once(':').map(|(_, p)| p).unwrap_or(url);
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        match parts.as_slice() {
            [.., owner, name] if !url.starts_with('/') && !url.starts_with("file:") => {
                Some(format!("{owner}/{name}"))
            }
            _ => None,
        }
    });
    from_remote.unwrap_or_else(|| {
        root.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    })
}

/// The repository's web page, from the `origin` remote: `git@github.com:o/n.git` and
/// `https://github.com/o/n` give `https://github.com/o/n`. `None` for a local or unknown remote.
/// Reports link a finding's lines there (`/blob/<sha>/<path>#L10-L20`); the forge finds the
/// repository of a pull request there.
pub fn web_url(root: &Path) -> Option<String> {
    let url = git_probe(root, &["config", "--get", "remote.origin.url"])?;
    let url = url.trim().trim_end_matches('/').trim_end_matches(".git");
    let (host, path) = if let Some(rest) = url.strip_prefix("https://") {
        let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
        rest.split_once('/')?
    } else if let Some(rest) = url.strip_prefix("ssh://") {
        let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
        let (host, path) = rest.split_once('/')?;
        (host.split(':').next().unwrap_or(host), path)
    } else if let Some((user_host, path)) = url.split_once(':') {
        let host = user_host.rsplit_once('@').map_or(user_host, |(_, h)| h);
        if host.contains('/') || host.is_empty() {
            return None;
        }
        (host, path)
    } else {
        return None;
    };
    let path = path.trim_matches('/');
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
    };
    (plain(host) && plain(path) && path.contains('/') && !path.contains(".."))
        .then(|| format!("https://{host}/{path}"))
}

/// `A..B` / `A...B` → (Some(A), Some(B)), an empty side meaning HEAD; `X` → (None, Some(X)).
fn split_target(target: Option<&str>) -> (Option<String>, Option<String>) {
    let Some(t) = target.map(str::trim).filter(|t| !t.is_empty()) else {
        return (None, None);
    };
    let split = t.split_once("...").or_else(|| t.split_once(".."));
    match split {
        Some((a, b)) => {
            let side = |s: &str| {
                if s.is_empty() {
                    "HEAD".to_string()
                } else {
                    s.to_string()
                }
            };
            (Some(side(a)), Some(side(b)))
        }
        None => (None, Some(t.to_string())),
    }
}

/// The commit `rev` names as (full sha, how to show it). A name that is not a local branch or
/// commit but is a branch on `origin` (`main` in a clone that only has `origin/main`, as CI
/// checkouts are) is read as `origin/<rev>`.
fn verify_commit_or_origin(root: &Path, rev: &str) -> anyhow::Result<(String, String)> {
    match verify_commit(root, rev) {
        Ok(sha) => Ok((sha, rev.to_string())),
        Err(err) => {
            let remote = format!("origin/{rev}");
            let full = format!("refs/remotes/{remote}");
            match (
                rev == "HEAD" || rev.starts_with('-'),
                crate::git::resolve_commit(root, &full),
            ) {
                (false, Ok(sha)) => Ok((sha, remote)),
                _ => Err(err),
            }
        }
    }
}

/// The full sha of the commit `rev` names, or one sentence saying it names none.
fn verify_commit(root: &Path, rev: &str) -> anyhow::Result<String> {
    if rev.starts_with('-') {
        anyhow::bail!("`{rev}` is not a branch or commit: revisions may not start with `-`");
    }
    match crate::git::resolve_commit(root, rev) {
        Ok(sha) => Ok(sha),
        Err(_) if rev == "HEAD" => anyhow::bail!(
            "{} has no commits yet: commit the change first, deep-review reviews commits",
            root.display()
        ),
        Err(_) => anyhow::bail!(
            "`{rev}` is not a branch or commit in {}: run `git branch -a` to see the branches",
            root.display()
        ),
    }
}

/// The branch `spec` names: the current branch for `HEAD` (`None` when detached), the name of a
/// local or remote-tracking branch, else `None` (a sha, a tag).
fn branch_of(root: &Path, spec: &str) -> Option<String> {
    if spec == "HEAD" {
        return git_probe(root, &["symbolic-ref", "--quiet", "--short", "HEAD"]);
    }
    let name = spec.strip_prefix("refs/heads/").unwrap_or(spec);
    for prefix in ["refs/heads/", "refs/remotes/"] {
        let full = format!("{prefix}{name}");
        if git_probe(root, &["show-ref", "--verify", "--quiet", &full]).is_some() {
            return Some(name.to_string());
        }
    }
    None
}

/// Picks the base when none was named: the upstream when the branch tracks a *different*
/// branch, then the default branch. An upstream that is the branch's own remote copy
/// (`feat` → `origin/feat`) is skipped: it would review only the unpushed commits. A candidate
/// that already contains the head (nothing to review) is skipped too. Returns (sha, name).
fn default_base(
    root: &Path,
    branch: Option<&str>,
    head_spec: &str,
    head: &str,
) -> anyhow::Result<(String, String)> {
    let shown = branch.unwrap_or(head_spec);
    let mut candidates: Vec<String> = Vec::new();
    if let Some(b) = branch
        && let Some(up) = tracked_other_branch(root, b)
    {
        candidates.push(up);
    }
    if let Some(origin_head) = git_probe(
        root,
        &[
            "symbolic-ref",
            "--quiet",
            "--short",
            "refs/remotes/origin/HEAD",
        ],
    ) {
        candidates.push(origin_head);
    }
    for name in ["main", "master", "origin/main", "origin/master"] {
        candidates.push(name.to_string());
    }

    let mut found_any: Option<String> = None;
    let mut unrelated: Option<String> = None;
    for cand in candidates {
        if Some(cand.as_str()) == branch {
            // On the default branch itself: there is a base, but nothing is on top of it.
            found_any.get_or_insert_with(|| cand.clone());
            continue;
        }
        let peeled = format!("{cand}^{{commit}}");
        let Some(sha) = git_probe(
            root,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &peeled,
            ],
        ) else {
            continue;
        };
        found_any.get_or_insert_with(|| cand.clone());
        match git_probe(root, &["merge-base", &sha, head]) {
            Some(mb) if mb != head => return Ok((sha, cand)),
            Some(_) => continue,
            None => {
                unrelated.get_or_insert(cand);
            }
        }
    }
    let shallow = environment::is_shallow(root);
    if let Some(base) = unrelated.filter(|_| shallow) {
        anyhow::bail!(
            "`{base}` and `{shown}` share no history in {}: {}",
            root.display(),
            environment::SHALLOW_HINT
        );
    }
    match found_any {
        None if shallow => anyhow::bail!(
            "no base to compare `{shown}` with in {}: there is no default branch (origin/HEAD, \
             main, master) in this shallow clone: fetch it (`git fetch --unshallow origin \
             main`, or in GitHub Actions check out with `fetch-depth: 0`), or pass `--base REV`",
            root.display()
        ),
        Some(base) => anyhow::bail!(
            "nothing to review: `{shown}` has no commits that are not already on `{base}` in \
             {}: check out the branch to review, or name it as `deep-review run BRANCH` or `BASE..HEAD`",
            root.display()
        ),
        None => anyhow::bail!(
            "no base to compare `{shown}` with in {}: it has no upstream and there is no \
             default branch (origin/HEAD, main, master): pass `--base REV` or `BASE..HEAD`",
            root.display()
        ),
    }
}

/// The upstream of local branch `b` when it is not `b`'s own copy on the remote.
fn tracked_other_branch(root: &Path, b: &str) -> Option<String> {
    let upstream = format!("{b}@{{upstream}}");
    let short = git_probe(
        root,
        &[
            "rev-parse",
            "--abbrev-ref",
            "--symbolic-full-name",
            &upstream,
        ],
    )?;
    let merge = git_probe(root, &["config", "--get", &format!("branch.{b}.merge")]);
    let remote = git_probe(root, &["config", "--get", &format!("branch.{b}.remote")]);
    let same_name =
        merge.as_deref() == Some(&format!("refs/heads/{b}")) && remote.as_deref() != Some(".");
    if same_name || short.is_empty() {
        None
    } else {
        Some(short)
    }
}

/// `merge_base..head`, oldest first: (commit, author name).
fn commits(root: &Path, merge_base: &str, head: &str) -> anyhow::Result<Vec<(CommitInfo, String)>> {
    let range = format!("{merge_base}..{head}");
    let out = git_text(
        root,
        &[
            "log",
            "--reverse",
            "--no-color",
            "--format=%h%x1f%s%x1f%an%x1e",
            &range,
            "--",
        ],
    )?;
    Ok(out
        .split('\u{1e}')
        .map(|rec| rec.trim_start_matches('\n'))
        .filter(|rec| !rec.is_empty())
        .filter_map(|rec| {
            let mut parts = rec.split('\u{1f}');
            let sha = parts.next()?.to_string();
            let subject = parts.next().unwrap_or_default().to_string();
            let author = parts.next().unwrap_or_default().to_string();
            Some((CommitInfo { sha, subject }, author))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::{repo_name, split_target, web_url};

    #[test]
    fn repo_names_from_remotes_or_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("myrepo");
        std::fs::create_dir(&root).unwrap();
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .arg("-C")
                .arg(&root)
                .args(args)
                .status();
            assert!(ok.unwrap().success());
        };
        git(&["init", "-q"]);
        assert_eq!(repo_name(&root), "myrepo");
        for (url, want) in [
            (
                "git@github.com:rancher-sandbox/rancher-desktop-daemon.git",
                "rancher-sandbox/rancher-desktop-daemon",
            ),
            ("https://github.com/o/n/", "o/n"),
            ("ssh://git@host:22/group/sub/n.git", "sub/n"),
            ("/srv/git/n.git", "myrepo"),
        ] {
            let _ = std::process::Command::new("git")
                .arg("-C")
                .arg(&root)
                .args(["remote", "remove", "origin"])
                .status();
            git(&["remote", "add", "origin", url]);
            assert_eq!(repo_name(&root), want, "{url}");
        }
        for (url, want) in [
            (
                "git@github.com:o/n.git",
                Some("https://github.com/o/n".to_string()),
            ),
            (
                "https://user:pw@github.com/o/n/",
                Some("https://github.com/o/n".to_string()),
            ),
            (
                "ssh://git@gitlab.example.com:22/group/n.git",
                Some("https://gitlab.example.com/group/n".to_string()),
            ),
            ("/srv/git/n.git", None),
            ("https://host/o/n\"><script>", None),
        ] {
            let _ = std::process::Command::new("git")
                .arg("-C")
                .arg(&root)
                .args(["remote", "remove", "origin"])
                .status();
            git(&["remote", "add", "origin", url]);
            assert_eq!(web_url(&root), want, "{url}");
        }
    }

    #[test]
    fn target_forms() {
        let s = |a: &str, b: &str| (Some(a.to_string()), Some(b.to_string()));
        assert_eq!(split_target(Some("main..feat")), s("main", "feat"));
        assert_eq!(split_target(Some("main...feat")), s("main", "feat"));
        assert_eq!(split_target(Some("main..")), s("main", "HEAD"));
        assert_eq!(split_target(Some("feat")), (None, Some("feat".to_string())));
        assert_eq!(split_target(None), (None, None));
        assert_eq!(split_target(Some("  ")), (None, None));
    }
}
