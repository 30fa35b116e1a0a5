//! Store stage: deep-review's record of its reviews, written and read by this module only.
//!
//! ```text
//! <store>/<id>.md            the report (the reference layout)
//! <store>/<id>.json          the report as JSON: the machine record `list`, `show` and later
//!                            rounds read (`schema_version`)
//! <store>/<id>.<ext>         other formats asked for (html, sarif)
//! <store>/index.html         every report with an HTML page, newest first
//! <store>/runs/<id>/         the run bundle (see [`crate::bundle`]): what a run was given and what
//!                            each agent produced, read back by `consolidate --bundle` and
//!                            `run --resume`
//! ```
//!
//! `<store>` is `$(git rev-parse --git-common-dir)/deep-review/` (see [`locate`]): in the
//! repository's git directory, shared by its worktrees, never committed and never part of a
//! change, so nothing a change commits is read as a record. `--store DIR` names another folder
//! (the store folder itself). `<id>` is `YYYYMMDD-HHMMSS-<label>` in local time, as the
//! reference reports are named.
//!
//! A path of the store with a symlink in it is refused: the store's files are written where the
//! store is, never where a link points.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use chrono::{DateTime, Local};
use serde::Serialize;

use crate::bundle;
use crate::types::Brief;

pub mod locate;
pub mod publish;
pub mod reports;

pub use locate::{Located, locate};
pub use reports::ReportEntry;

/// The run bundles, under the store.
pub const RUNS_DIR: &str = "runs";

/// `YYYYMMDD-HHMMSS-<label>`; `label` should already be safe for a file name
/// ([`crate::target::safe_label`]).
pub fn run_id(at: DateTime<Local>, label: &str) -> String {
    format!("{}-{}", at.format("%Y%m%d-%H%M%S"), label)
}

/// The store folder: reports and run bundles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    dir: PathBuf,
}

/// One run's bundle directory, created and named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunBundle {
    /// The run id, which also names the report files.
    pub id: String,
    /// `<store>/runs/<id>/`.
    pub dir: PathBuf,
}

impl Store {
    /// The store in folder `dir` (`--store DIR`, or [`locate::default_dir`]). Nothing is
    /// created until something is written.
    pub fn new(dir: &Path) -> Store {
        Store {
            dir: dir.to_path_buf(),
        }
    }

    /// The store folder itself.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the bundle of run `id` lives (whether or not it exists yet).
    pub fn bundle_dir(&self, id: &str) -> PathBuf {
        self.dir.join(RUNS_DIR).join(id)
    }

    /// `<store>/<id>.<ext>`.
    pub fn report_path(&self, id: &str, ext: &str) -> PathBuf {
        self.dir.join(format!("{id}.{ext}"))
    }

    /// Creates `<store>/runs/` (refusing symlinks on the way) and returns it.
    fn runs_dir(&self) -> anyhow::Result<PathBuf> {
        let runs = self.dir.join(RUNS_DIR);
        for dir in [&self.dir, &runs] {
            refuse_symlink(dir)?;
            std::fs::create_dir_all(dir).with_context(|| {
                format!(
                    "cannot create {}: check the permissions or pass `--store DIR`",
                    dir.display()
                )
            })?;
            refuse_symlink(dir)?;
        }
        Ok(runs)
    }

    /// Creates the bundle directory of a new run named for `label` at time `at`. Two runs started
    /// in the same second get `-2`, `-3` ... rather than sharing a directory.
    pub fn create_run(&self, label: &str, at: DateTime<Local>) -> anyhow::Result<RunBundle> {
        let runs = self.runs_dir()?;
        let base = run_id(at, label);
        for n in 1..1000 {
            let id = if n == 1 {
                base.clone()
            } else {
                format!("{base}-{n}")
            };
            let dir = runs.join(&id);
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(RunBundle { id, dir }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot create {}", dir.display()));
                }
            }
        }
        anyhow::bail!("too many runs named {base} in {}", runs.display())
    }

    /// The bundle of an existing run, by id (`latest` for the newest).
    pub fn open_run(&self, id: &str) -> anyhow::Result<RunBundle> {
        let id = if id == "latest" {
            self.latest_run()?
        } else {
            id.to_string()
        };
        if id.is_empty() || id.contains('/') || id.starts_with('.') {
            anyhow::bail!("`{id}` is not a run id: give one as `deep-review list` shows it");
        }
        let dir = self.bundle_dir(&id);
        refuse_symlink(&self.dir)?;
        refuse_symlink(&dir)?;
        if !dir.join(bundle::RUN_FILE).is_file() && !dir.join(bundle::TARGET_FILE).is_file() {
            anyhow::bail!(
                "no run bundle `{id}` in {}: `deep-review list` shows the runs there",
                self.dir.join(RUNS_DIR).display()
            );
        }
        Ok(RunBundle { id, dir })
    }

    /// The newest run's id.
    fn latest_run(&self) -> anyhow::Result<String> {
        let runs = self.dir.join(RUNS_DIR);
        let mut ids: Vec<String> = std::fs::read_dir(&runs)
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| e.path().join(bundle::RUN_FILE).is_file())
                    .filter_map(|e| e.file_name().to_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        ids.sort_by(|a, b| reports::id_order(a, b));
        ids.pop().ok_or_else(|| {
            anyhow::anyhow!("no run in {}: run `deep-review run` first", runs.display())
        })
    }

    /// Writes the report text to `<store>/<id>.<ext>` (whole or not at all, secrets redacted)
    /// and returns its path.
    pub fn write_report(&self, id: &str, ext: &str, contents: &str) -> anyhow::Result<PathBuf> {
        refuse_symlink(&self.dir)?;
        let path = self.report_path(id, ext);
        refuse_symlink(&path)?;
        write_atomic(&path, crate::redact::redact(contents).as_bytes())?;
        Ok(path)
    }
}

impl RunBundle {
    /// Saves the brief as `brief.md`, exactly the bytes the agents get.
    pub fn save_brief(&self, brief: &Brief) -> anyhow::Result<PathBuf> {
        self.save_text(bundle::BRIEF_FILE, &brief.text)
    }

    /// Saves `value` as pretty JSON under `name` in the bundle (e.g. `target.json`).
    pub fn save_json<T: Serialize>(&self, name: &str, value: &T) -> anyhow::Result<PathBuf> {
        let mut text = serde_json::to_string_pretty(value)
            .with_context(|| format!("cannot serialise {name}"))?;
        text.push('\n');
        self.save_text(name, &text)
    }

    /// Saves `text` under `name` in the bundle, secrets redacted.
    pub fn save_text(&self, name: &str, text: &str) -> anyhow::Result<PathBuf> {
        let path = self.dir.join(name);
        refuse_symlink(&path)?;
        write_atomic(&path, crate::redact::redact(text).as_bytes())?;
        Ok(path)
    }
}

/// An error when `path` is a symlink: the store's files are written where the store is, never
/// where a link (made by whoever could write there) points.
fn refuse_symlink(path: &Path) -> anyhow::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => anyhow::bail!(
            "{} is a symlink: deep-review does not write through symlinks in its store; remove it \
             or pass `--store DIR` (the store folder)",
            path.display()
        ),
        _ => Ok(()),
    }
}

/// The process's file-creation mask, read from `/proc/self/status` (setting it to read it back
/// would race with other threads creating files); the common 022 where that is unavailable.
fn current_umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

/// Writes via a temporary file in the same directory and a rename, so a crash never leaves a
/// half-written report where a whole one was expected.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    tmp.write_all(bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    // A temporary file is private (0600); a report is as readable as any file the user writes.
    let mode = 0o666 & !current_umask();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot write {}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at() -> DateTime<Local> {
        Local
            .with_ymd_and_hms(2026, 3, 24, 13, 10, 47)
            .single()
            .unwrap()
    }

    #[test]
    fn reports_are_as_readable_as_other_files_the_user_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.md");
        write_atomic(&path, b"x").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        // Not the 0600 of the temporary file it was written through (unless the umask says so).
        assert_eq!(mode, 0o666 & !current_umask());
    }

    #[test]
    fn ids_follow_the_reference_naming() {
        assert_eq!(run_id(at(), "pr-236"), "20260324-131047-pr-236");
    }

    #[test]
    fn runs_get_their_own_bundles_and_reports() {
        let out = tempfile::tempdir().unwrap();
        let store = Store::new(out.path());
        let a = store.create_run("feat", at()).unwrap();
        let b = store.create_run("feat", at()).unwrap();
        assert_eq!(a.id, "20260324-131047-feat");
        assert_eq!(b.id, "20260324-131047-feat-2");
        assert_eq!(a.dir, out.path().join("runs/20260324-131047-feat"));
        assert!(a.dir.is_dir() && b.dir.is_dir());

        let p = a.save_text("brief.md", "hello").unwrap();
        assert_eq!(std::fs::read_to_string(p).unwrap(), "hello");
        let md = store.write_report(&a.id, "md", "# Deep Review\n").unwrap();
        assert_eq!(md, out.path().join("20260324-131047-feat.md"));
        // Overwriting is whole-file.
        store.write_report(&a.id, "md", "v2").unwrap();
        assert_eq!(std::fs::read_to_string(md).unwrap(), "v2");
    }

    #[test]
    fn unwritable_out_dir_is_a_clear_error() {
        let out = tempfile::tempdir().unwrap();
        let file = out.path().join("not-a-dir");
        std::fs::write(&file, "x").unwrap();
        let err = Store::new(&file)
            .create_run("x", at())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cannot create") && err.contains("--store DIR"),
            "{err}"
        );
    }

    #[test]
    fn a_symlinked_store_dir_is_refused() {
        let out = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let link = out.path().join("store");
        std::os::unix::fs::symlink(elsewhere.path(), &link).unwrap();
        let store = Store::new(&link);
        let err = store.create_run("x", at()).unwrap_err().to_string();
        assert!(err.contains("is a symlink"), "{err}");
        let err = store.write_report("x", "md", "r").unwrap_err().to_string();
        assert!(err.contains("is a symlink"), "{err}");
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }
}
