//! git runs no program the change under review could choose. A change's `.gitattributes` can
//! name a filter (`filter=x`), a diff driver or a textconv; git then runs the command the
//! user's config (global or the repository's `.git/config`) defines for that name, as the
//! user, on deep-review's own `status`, `add`, `reset --hard` and `checkout`. So every git
//! command deep-review runs on a repository or its checkouts gets:
//!
//! - attributes from nowhere the change reaches: `--attr-source=<the empty tree>` (git 2.40
//!   and later; it replaces the working tree's and the index's `.gitattributes` for every
//!   lookup), `core.attributesFile=/dev/null` and `GIT_ATTR_NOSYSTEM=1` (both set by
//!   [`super::command`]); only the repository's own `$GIT_DIR/info/attributes` is still read,
//!   which the change cannot write;
//! - for git before 2.40 (Apple's is 2.39), and as a second lock on newer ones: every filter
//!   driver the config defines emptied (`-c filter.<name>.clean= -c filter.<name>.smudge=
//!   -c filter.<name>.process= -c filter.<name>.required=false`). git's `apply_filter` runs
//!   nothing for an empty command, and `required=false` keeps an emptied driver from failing
//!   the command (git then keeps the file's bytes as they are);
//! - diff drivers and textconv are left to the diff commands' own `--no-ext-diff
//!   --no-textconv` (an emptied `diff.<name>.command` would be run as an empty command and
//!   fail): `git diff`, `git log -p` and `git show` are the only ones that use them, and
//!   deep-review passes both flags to every diff it asks for.
//!
//! What each repository's config defines is read once per repository per process (one `git
//! config` run), with the object format (the empty tree's name depends on it).

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The empty tree's name in a SHA-1 repository.
const EMPTY_TREE_SHA1: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
/// The empty tree's name in a SHA-256 repository.
const EMPTY_TREE_SHA256: &str = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321";

/// The arguments after `git -C repo` that keep the change's attributes from choosing a
/// program (see the module doc).
pub fn args(repo: &Path) -> Vec<OsString> {
    let config = repo_config(repo);
    let mut args = Vec::new();
    if supports_attr_source() {
        let tree = match config.sha256 {
            true => EMPTY_TREE_SHA256,
            false => EMPTY_TREE_SHA1,
        };
        args.push(format!("--attr-source={tree}").into());
    }
    args.extend(emptied_filters(&config));
    args
}

/// `-c` settings that empty every filter driver `config` defines (what holds on a git without
/// `--attr-source`).
fn emptied_filters(config: &RepoConfig) -> Vec<OsString> {
    let mut args = Vec::new();
    for name in &config.filters {
        for setting in ["clean=", "smudge=", "process=", "required=false"] {
            args.push("-c".into());
            args.push(format!("filter.{name}.{setting}").into());
        }
    }
    args
}

/// What one repository's config says that matters here.
#[derive(Debug, Clone, Default, PartialEq)]
struct RepoConfig {
    /// The names of the filter drivers it defines (global, system and its own config).
    filters: Vec<String>,
    /// Its objects are named with SHA-256.
    sha256: bool,
}

/// [`RepoConfig`] of `repo`, read once per process.
fn repo_config(repo: &Path) -> RepoConfig {
    static SEEN: OnceLock<Mutex<HashMap<PathBuf, RepoConfig>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    if let Some(known) = seen.lock().ok().and_then(|m| m.get(repo).cloned()) {
        return known;
    }
    let Some(config) = read_repo_config(repo) else {
        // Not kept: a directory that does not exist yet (a worktree about to be made) is
        // asked again once it does.
        return RepoConfig::default();
    };
    if let Ok(mut m) = seen.lock() {
        m.insert(repo.to_path_buf(), config.clone());
    }
    config
}

/// Runs `git config -z --get-regexp` for the filter drivers and the object format (exit 1:
/// none defined). A directory that is no repository gives the global ones; `None` when git
/// could not read the config at all (no such directory, no git).
fn read_repo_config(repo: &Path) -> Option<RepoConfig> {
    // git answers `-C` of a missing directory as it does a config with no match.
    if !repo.is_dir() {
        return None;
    }
    let out = super::bare_command(repo)
        .args([
            "config",
            "-z",
            "--get-regexp",
            r"^(filter\..*\.(clean|smudge|process)|extensions\.objectformat)$",
        ])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    matches!(out.status.code(), Some(0 | 1)).then(|| parse_config(&out.stdout))
}

/// `git config -z` output (`key\nvalue\0` per entry) read as a [`RepoConfig`].
fn parse_config(out: &[u8]) -> RepoConfig {
    let mut config = RepoConfig::default();
    for entry in out.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        let entry = String::from_utf8_lossy(entry);
        let (key, value) = entry.split_once('\n').unwrap_or((&entry, ""));
        if key.eq_ignore_ascii_case("extensions.objectformat") {
            config.sha256 = value.trim().eq_ignore_ascii_case("sha256");
            continue;
        }
        let Some(name) = key
            .strip_prefix("filter.")
            .and_then(|rest| rest.rsplit_once('.'))
            .map(|(name, _)| name)
        else {
            continue;
        };
        // A name `-c` cannot carry whole (`=` ends the key there; a line end ends the
        // argument) is left to the attributes being off.
        if !name.contains(['=', '\n']) && !config.filters.iter().any(|f| f == name) {
            config.filters.push(name.to_string());
        }
    }
    config
}

/// Whether this git knows `--attr-source` (2.40 and later), asked once per process.
fn supports_attr_source() -> bool {
    static SUPPORTED: OnceLock<bool> = OnceLock::new();
    *SUPPORTED.get_or_init(|| {
        std::process::Command::new("git")
            .arg("--version")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .and_then(|out| version_at_least(&String::from_utf8_lossy(&out.stdout), (2, 40)))
            .unwrap_or(false)
    })
}

/// Whether `git --version`'s answer (`git version 2.39.5 (Apple Git-154)`) is at least `min`.
fn version_at_least(answer: &str, min: (u32, u32)) -> Option<bool> {
    let version = answer.trim().strip_prefix("git version ")?;
    let mut parts = version.split(|c: char| !c.is_ascii_digit());
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = parts.next()?.parse().ok()?;
    Some((major, minor) >= min)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_from_2_40_read_attributes_from_a_tree() {
        assert_eq!(
            version_at_least("git version 2.47.3\n", (2, 40)),
            Some(true)
        );
        assert_eq!(version_at_least("git version 2.40.0", (2, 40)), Some(true));
        assert_eq!(
            version_at_least("git version 2.39.5 (Apple Git-154)", (2, 40)),
            Some(false)
        );
        assert_eq!(version_at_least("git version 3.0.0", (2, 40)), Some(true));
        assert_eq!(version_at_least("not git", (2, 40)), None);
    }

    /// The second lock alone (as on git 2.39, which has no `--attr-source`): a required
    /// clean and smudge filter the repository's `.gitattributes` selects runs on `add` and
    /// `checkout` without it, and neither runs nor fails them with it.
    #[test]
    fn emptied_filter_drivers_run_nothing_even_where_attributes_select_them() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("r");
        let marker = dir.path().join("ran");
        let git = |args: &[&str], emptied: &[OsString]| {
            let out = super::super::bare_command(&repo)
                .args(emptied)
                .args(args)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {out:?}");
        };
        std::fs::create_dir(&repo).unwrap();
        git(&["init", "-q"], &[]);
        let touch = format!("touch '{}'; cat", marker.display());
        for (key, value) in [
            ("filter.seam.clean", touch.as_str()),
            ("filter.seam.smudge", touch.as_str()),
            ("filter.seam.required", "true"),
            ("user.name", "T"),
            ("user.email", "t@example.com"),
        ] {
            git(&["config", key, value], &[]);
        }
        std::fs::write(repo.join(".gitattributes"), "a.txt filter=seam\n").unwrap();
        std::fs::write(repo.join("a.txt"), "a\n").unwrap();
        let config = read_repo_config(&repo).unwrap();
        assert_eq!(config.filters, ["seam"]);
        let emptied = emptied_filters(&config);
        git(&["add", "."], &emptied);
        git(&["commit", "-q", "-m", "a"], &emptied);
        std::fs::remove_file(repo.join("a.txt")).unwrap();
        git(&["checkout", "--", "a.txt"], &emptied);
        assert!(!marker.exists(), "an emptied driver ran");
        // The driver does run without the lock: the test could fail.
        std::fs::write(repo.join("a.txt"), "b\n").unwrap();
        git(&["add", "a.txt"], &[]);
        assert!(marker.exists(), "the driver never ran");
    }

    #[test]
    fn every_filter_driver_and_the_object_format_are_read_from_the_config() {
        let out = b"filter.lfs.clean\ngit-lfs clean -- %f\0filter.lfs.smudge\nx\0\
            filter.a.b.process\nrun\0filter.bad=name.clean\nx\0extensions.objectformat\nsha256\0";
        let config = parse_config(out);
        assert_eq!(config.filters, ["lfs", "a.b"]);
        assert!(config.sha256);
        assert_eq!(parse_config(b""), RepoConfig::default());
    }
}
