//! Where the store is: `<git-common-dir>/deep-review/` unless `--store DIR` names another
//! folder, and the one-time move of an earlier version's `.reviews/` out of the working tree.
//!
//! The store lives beside git's own state (rerere, worktrees): shared by every worktree of the
//! repository, never committed, never part of a change. Earlier versions kept it in the working
//! tree as `.reviews/`, where a pull request could commit forged reports, bundles and pages that
//! `list`, `show`, `post`, `publish` and `run --resume` then read as deep-review's own, and
//! where `run --uncommitted` swept it into the change. So what a change commits is never read:
//! an earlier version's `.reviews/` is moved into the store only when git tracks nothing in it
//! (neither in the index nor in HEAD), it is not a symlink, and the store does not exist yet
//! (once); a `--store` folder that holds files git tracks is refused.

use std::path::{Path, PathBuf};

use super::Store;
use crate::git::{git_bytes, git_probe};

/// The folder under the git common directory that holds the store.
pub const STORE_DIR_NAME: &str = "deep-review";
/// The working-tree folder earlier versions kept the store in.
pub const LEGACY_DIR: &str = ".reviews";

/// A store found for a command, with what the user should know about it (a move from
/// `.reviews/`), one sentence each.
#[derive(Debug, Clone)]
pub struct Located {
    pub store: Store,
    pub notes: Vec<String>,
    /// Folders that are deep-review's and not the user's change: the store, and an earlier
    /// version's `.reviews/` left in the working tree. `run --uncommitted` leaves them out
    /// (those outside the working tree are left out by git anyway).
    pub leave_out: Vec<PathBuf>,
}

/// The store of the repository around `repo`, or `chosen` (`--store DIR`, the store folder
/// itself) when given.
pub fn locate(repo: &Path, chosen: Option<&Path>) -> anyhow::Result<Located> {
    let mut located = match chosen {
        Some(dir) => chosen_store(dir)?,
        None => Located::at(&default_dir(repo)?),
    };
    let Some(root) = git_probe(repo, &["rev-parse", "--show-toplevel"]).filter(|r| !r.is_empty())
    else {
        return Ok(located);
    };
    let legacy = Path::new(&root).join(LEGACY_DIR);
    // Only into the repository's own store: a folder `--store` names is the user's choice.
    let may_move = chosen.is_none();
    match adopt_legacy(&legacy, located.store.dir(), may_move) {
        Legacy::None => {}
        Legacy::Moved(note) => located.notes.push(note),
        Legacy::LeftBehind(note) => {
            located.notes.extend(note);
            located.leave_out.push(legacy);
        }
    }
    Ok(located)
}

impl Located {
    fn at(dir: &Path) -> Located {
        Located {
            store: Store::new(dir),
            notes: Vec::new(),
            leave_out: vec![dir.to_path_buf()],
        }
    }
}

/// `<git-common-dir>/deep-review` of the repository around `repo`.
pub fn default_dir(repo: &Path) -> anyhow::Result<PathBuf> {
    let common = git_probe(
        repo,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )
    .filter(|d| !d.is_empty())
    .ok_or_else(|| {
        // Git's own reason when it has one (a checkout owned by another user, ...).
        match crate::target::environment::repo_root(repo) {
            Err(why) if !why.to_string().contains("not inside a git repository") => why,
            _ => anyhow::anyhow!(
                "{} is not inside a git repository: run this in the repository that was \
                 reviewed, or pass `--store DIR` (the store folder)",
                display_dir(repo)
            ),
        }
    })?;
    Ok(PathBuf::from(common).join(STORE_DIR_NAME))
}

fn chosen_store(dir: &Path) -> anyhow::Result<Located> {
    // Absolute, so the paths printed and saved mean the same from anywhere.
    let dir = &std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    if let Some(tracked) = tracked_files(dir, ".").into_iter().next() {
        anyhow::bail!(
            "--store {}: git tracks files in it ({tracked}): a store is deep-review's own record, \
             and what a change commits is never read as one; give a folder git does not track \
             (the default is the repository's git directory)",
            dir.display()
        );
    }
    let mut located = Located::at(dir);
    let old = dir.join(LEGACY_DIR);
    if is_real_dir(&old) && !holds_records(dir) {
        located.notes.push(format!(
            "{} holds a store of an earlier version: `--store` now names the store folder \
             itself; pass `--store {}` to read it",
            old.display(),
            old.display()
        ));
    }
    Ok(located)
}

/// What became of an earlier version's `.reviews/`.
enum Legacy {
    /// There is none (or it is not deep-review's: a symlink, a file, something git tracks).
    None,
    /// Moved into the store, with the note that says so.
    Moved(String),
    /// Left where it is and not read (the store existed already, `--store` chose another, or
    /// the move failed), with a note when the user should know.
    LeftBehind(Option<String>),
}

/// Moves `legacy` (`<root>/.reviews`) to `store` when it is an earlier version's store (a real
/// directory that git tracks nothing in), moving is allowed and there is no store yet.
fn adopt_legacy(legacy: &Path, store: &Path, may_move: bool) -> Legacy {
    let root = legacy.parent().unwrap_or(legacy);
    if !is_real_dir(legacy) || !tracked_files(root, LEGACY_DIR).is_empty() {
        // Absent, a symlink, a file, or part of what is committed: not deep-review's record.
        return Legacy::None;
    }
    if !may_move {
        return Legacy::LeftBehind(None);
    }
    if std::fs::symlink_metadata(store).is_ok() {
        return Legacy::LeftBehind(holds_records(legacy).then(|| {
            format!(
                "{} is not read: the store is {} now (in the repository's git directory, never \
                 committed); move the reports there if you want them listed",
                legacy.display(),
                store.display()
            )
        }));
    }
    match std::fs::rename(legacy, store) {
        Ok(()) => Legacy::Moved(format!(
            "moved the store of an earlier version from {} to {}: reviews are kept in the \
             repository's git directory now (shared by worktrees, never committed); \
             `--store DIR` chooses another folder",
            legacy.display(),
            store.display()
        )),
        Err(e) => Legacy::LeftBehind(Some(format!(
            "{} (the store of an earlier version) could not be moved to {}: {e}; it is not \
             read: move it there yourself",
            legacy.display(),
            store.display()
        ))),
    }
}

/// A directory that is not a symlink.
fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// Whether `dir` holds reports or run bundles (a report file or `runs/`).
fn holds_records(dir: &Path) -> bool {
    if dir.join(super::RUNS_DIR).is_dir() {
        return true;
    }
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".json") || name.ends_with(".md")
        })
    })
}

/// Files under `rel` (relative to `dir`) that git tracks: in the index or in HEAD's tree.
/// Empty when `dir` is in no work tree (in no repository, or inside a git directory, as the
/// default store is: there git reads `.` as the whole tree) or does not exist.
fn tracked_files(dir: &Path, rel: &str) -> Vec<String> {
    if !dir.is_dir()
        || git_probe(dir, &["rev-parse", "--is-inside-work-tree"]).as_deref() != Some("true")
    {
        return Vec::new();
    }
    let listings = [
        git_bytes(dir, &["ls-files", "-z", "--", rel]),
        git_bytes(
            dir,
            &["ls-tree", "-r", "--name-only", "-z", "HEAD", "--", rel],
        ),
    ];
    listings
        .into_iter()
        .flatten()
        .flat_map(|listing| {
            listing
                .split(|b| *b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn display_dir(repo: &Path) -> String {
    if repo == Path::new(".") {
        "the current directory".to_string()
    } else {
        repo.display().to_string()
    }
}

impl Store {
    /// The store of the repository around `repo` (or `chosen`), its notes said on stderr.
    pub fn locate(repo: &Path, chosen: Option<&Path>) -> anyhow::Result<Store> {
        let located = locate(repo, chosen)?;
        for note in &located.notes {
            crate::say!("deep-review: {}", crate::text::printable_line(note));
        }
        Ok(located.store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        git(repo, &["init", "-q", "-b", "main"]);
        git(repo, &["config", "user.email", "t@example.com"]);
        git(repo, &["config", "user.name", "T"]);
        std::fs::write(repo.join("a.rs"), "a\n").unwrap();
        git(repo, &["add", "."]);
        git(repo, &["commit", "-qm", "one"]);
        dir
    }

    fn old_store(root: &Path) -> PathBuf {
        let old = root.join(LEGACY_DIR);
        std::fs::create_dir_all(old.join("runs/20260101-000000-main")).unwrap();
        std::fs::write(old.join("20260101-000000-main.md"), "# Deep Review\n").unwrap();
        old
    }

    #[test]
    fn the_store_is_in_the_git_directory_shared_by_worktrees() {
        let dir = repo();
        let located = locate(dir.path(), None).unwrap();
        let git_dir = std::fs::canonicalize(dir.path().join(".git")).unwrap();
        assert_eq!(located.store.dir(), git_dir.join(STORE_DIR_NAME));
        assert!(located.notes.is_empty());

        let linked = tempfile::tempdir().unwrap();
        let wt = linked.path().join("wt");
        git(dir.path(), &["worktree", "add", "-q", wt.to_str().unwrap()]);
        let from_worktree = locate(&wt, None).unwrap();
        assert_eq!(from_worktree.store.dir(), located.store.dir());
    }

    #[test]
    fn an_earlier_versions_store_moves_once_with_a_note() {
        let dir = repo();
        old_store(dir.path());
        let located = locate(dir.path(), None).unwrap();
        let store = located.store.dir();
        assert!(store.join("20260101-000000-main.md").is_file());
        assert!(store.join("runs/20260101-000000-main").is_dir());
        assert!(!dir.path().join(LEGACY_DIR).exists());
        assert_eq!(located.notes.len(), 1, "{:?}", located.notes);
        assert!(
            located.notes[0].contains("moved the store of an earlier version")
                && located.notes[0].contains(&store.display().to_string()),
            "{:?}",
            located.notes
        );
        // Once: a second look finds the store where it is, and says nothing.
        assert!(locate(dir.path(), None).unwrap().notes.is_empty());

        // A `.reviews/` that turns up later is not read (and not reviewed), only named.
        old_store(dir.path());
        let later = locate(dir.path(), None).unwrap();
        assert!(later.notes[0].contains("is not read"), "{:?}", later.notes);
        assert!(dir.path().join(LEGACY_DIR).is_dir());
        assert!(later.leave_out.contains(&dir.path().join(LEGACY_DIR)));
    }

    #[test]
    fn a_committed_or_linked_reviews_folder_is_never_moved_or_read() {
        let dir = repo();
        old_store(dir.path());
        git(dir.path(), &["add", "-f", LEGACY_DIR]);
        git(dir.path(), &["commit", "-qm", "records"]);
        let located = locate(dir.path(), None).unwrap();
        assert!(located.notes.is_empty(), "{:?}", located.notes);
        assert!(!located.store.dir().exists());
        assert!(located.store.list().unwrap().is_empty());
        // Committed, then deleted from the index but still in HEAD: still the change's.
        git(dir.path(), &["rm", "-rq", "--cached", LEGACY_DIR]);
        assert!(locate(dir.path(), None).unwrap().notes.is_empty());
        assert!(!located.store.dir().exists());

        let linked = repo();
        let elsewhere = tempfile::tempdir().unwrap();
        old_store(elsewhere.path());
        std::os::unix::fs::symlink(
            elsewhere.path().join(LEGACY_DIR),
            linked.path().join(LEGACY_DIR),
        )
        .unwrap();
        let located = locate(linked.path(), None).unwrap();
        assert!(located.notes.is_empty());
        assert!(!located.store.dir().exists());
    }

    #[test]
    fn a_chosen_store_is_the_folder_itself_and_never_one_git_tracks() {
        let dir = repo();
        let chosen = dir.path().join("records");
        std::fs::create_dir_all(&chosen).unwrap();
        std::fs::write(chosen.join("x.json"), "{}").unwrap();
        let located = locate(dir.path(), Some(&chosen)).unwrap();
        assert_eq!(located.store.dir(), chosen);
        git(dir.path(), &["add", "records/x.json"]);
        let err = locate(dir.path(), Some(&chosen)).unwrap_err().to_string();
        assert!(
            err.contains("--store") && err.contains("git tracks files in it"),
            "{err}"
        );

        // An earlier version's `--store DIR` held `DIR/.reviews`: the note says what to pass.
        let old = tempfile::tempdir().unwrap();
        old_store(old.path());
        let located = locate(dir.path(), Some(old.path())).unwrap();
        assert!(
            located.notes[0].contains(&format!(
                "pass `--store {}`",
                old.path().join(LEGACY_DIR).display()
            )),
            "{:?}",
            located.notes
        );
    }

    #[test]
    fn the_default_store_named_with_store_is_the_same_store() {
        let dir = repo();
        let default = default_dir(dir.path()).unwrap();
        std::fs::create_dir_all(&default).unwrap();
        // Both spellings: the folder as `rev-parse` gives it, and relative to the checkout.
        for chosen in [default.clone(), dir.path().join(".git/deep-review")] {
            let located = locate(dir.path(), Some(&chosen)).unwrap();
            assert_eq!(located.store.dir(), default.as_path());
        }
    }

    #[test]
    fn outside_a_repository_the_error_says_to_pass_store() {
        let dir = tempfile::tempdir().unwrap();
        let err = locate(dir.path(), None).unwrap_err().to_string();
        assert!(
            err.contains("not inside a git repository") && err.contains("--store DIR"),
            "{err}"
        );
    }
}
