//! The OS sandbox an agent runs in. The agent CLIs' own "read-only" modes are rules the model is
//! asked to follow inside the CLI; they do not confine the process (Claude Code's Read tool read
//! files outside its checkout and `/etc/hostname`). On Linux, Landlock confines the process and
//! everything it starts, enforced by the kernel:
//!
//! - **read** (and execute): the checkout under review, the repository's `.git` (git in a
//!   worktree reads the objects there), the system (`/usr`, `/etc`, `/lib`, `/bin`, `/proc`,
//!   `/sys`, `/dev`, `/opt`, `/run`), and the agent's own installation (the package root of its
//!   command and of `node`);
//! - **write**: the agent's own state directories (`~/.claude`, `~/.codex` or `$CODEX_HOME`,
//!   `~/.gemini`; more per agent with `sandbox_write` in the user config), a private temporary
//!   directory (its `TMPDIR`), and `/dev/null` and `/dev/tty`;
//! - nothing else: no other part of `$HOME` (`~/.ssh`, `~/.aws`), no other repository, no write
//!   to the user's checkout or its `.git` (hooks, `.git/config`).
//!
//! The rules are built in the parent (paths are opened there) and enforced in the child just
//! before `exec` (`pre_exec`), so they hold from the CLI's first instruction. Where the kernel has
//! no Landlock, the agent runs under the CLI's own mode only, and the report says so.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, path_beneath_rules,
};

use crate::types::{AgentKind, AgentSpec};

/// The Landlock ABI whose rights are asked for; a kernel with less enforces what it has.
const ABI_WANTED: ABI = ABI::V5;

/// Which sandbox an agent runs under, as the report names it.
pub fn kind_name(available: bool) -> &'static str {
    if available {
        "landlock"
    } else {
        "none (the agent CLI's own read-only mode only)"
    }
}

/// Whether this kernel enforces Landlock (probed once).
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(ABI::V1))
            .and_then(|r| r.create())
            .is_ok()
    })
}

/// What one agent may read and write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    pub read: Vec<PathBuf>,
    pub write: Vec<PathBuf>,
    /// Single files (not directories) the agent may write: `/dev/null`, `~/.claude.json`.
    pub write_files: Vec<PathBuf>,
}

/// Directories every process reads: the system.
const SYSTEM_READ: &[&str] = &[
    "/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/opt", "/proc", "/sys", "/dev",
    "/run", "/var/lib", "/snap", "/nix",
];

impl Policy {
    /// The policy for `spec` reviewing `checkout` of `repo`, with `tmp` as its private
    /// temporary directory.
    pub fn for_agent(spec: &AgentSpec, checkout: &Path, repo: &Path, tmp: &Path) -> Policy {
        let mut p = Policy::default();
        p.read.extend(SYSTEM_READ.iter().map(PathBuf::from));
        p.read.push(checkout.to_path_buf());
        if let Some(git_dir) = common_git_dir(repo) {
            p.read.push(git_dir);
        }
        for program in [Some(spec.command.as_str()), Some("node")]
            .into_iter()
            .flatten()
        {
            if let Some(root) = install_root(program) {
                p.read.push(root);
            }
        }
        p.write.push(tmp.to_path_buf());
        p.write_files.push(PathBuf::from("/dev/null"));
        p.write_files.push(PathBuf::from("/dev/tty"));
        let home = std::env::var_os("HOME").map(PathBuf::from);
        if let Some(home) = &home {
            // Git fails outright when it may not read the user's git config, and the agents
            // run git to read history.
            p.read.push(home.join(".gitconfig"));
            p.read.push(
                std::env::var_os("XDG_CONFIG_HOME")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| home.join(".config"))
                    .join("git"),
            );
            match spec.kind {
                AgentKind::Claude => {
                    p.write.push(home.join(".claude"));
                    p.write_files.push(home.join(".claude.json"));
                    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR") {
                        p.write.push(PathBuf::from(dir));
                    }
                }
                AgentKind::Codex => {
                    p.write.push(
                        std::env::var_os("CODEX_HOME")
                            .map(PathBuf::from)
                            .unwrap_or_else(|| home.join(".codex")),
                    );
                }
                AgentKind::Gemini => p.write.push(home.join(".gemini")),
                _ => {}
            }
        }
        p.read.extend(spec.sandbox_read.iter().cloned());
        p.write.extend(spec.sandbox_write.iter().cloned());
        p
    }

    /// Creates the directories the agent may write that do not exist yet (a CLI's state
    /// directory on its first run): a path that does not exist has no rule, and the agent could
    /// not create it itself (that needs write access to `$HOME`).
    pub fn ensure_dirs(&self) {
        for dir in &self.write {
            let _ = std::fs::create_dir_all(dir);
        }
    }

    /// The ruleset, with every path opened now (in the parent). Paths that do not exist are
    /// skipped: they cannot be reached anyway.
    pub fn build(&self) -> Result<RulesetCreated, String> {
        let abi = ABI_WANTED;
        let existing = |paths: &[PathBuf]| -> Vec<PathBuf> {
            paths.iter().filter(|p| p.exists()).cloned().collect()
        };
        let file_rights = AccessFs::WriteFile | AccessFs::ReadFile | AccessFs::Truncate;
        Ruleset::default()
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| r.create())
            .and_then(|r| {
                r.add_rules(path_beneath_rules(
                    existing(&self.read),
                    AccessFs::from_read(abi),
                ))
            })
            .and_then(|r| {
                r.add_rules(path_beneath_rules(
                    existing(&self.write),
                    AccessFs::from_all(abi),
                ))
            })
            .and_then(|r| r.add_rules(path_beneath_rules(existing(&self.write_files), file_rights)))
            .map_err(|e| format!("could not build the Landlock rules: {e}"))
    }
}

/// A ruleset ready to be enforced in a child process: `pre_exec` takes it out and applies it.
pub struct Prepared(Mutex<Option<RulesetCreated>>);

impl Prepared {
    pub fn new(ruleset: RulesetCreated) -> Prepared {
        Prepared(Mutex::new(Some(ruleset)))
    }

    /// Enforces the rules on the calling process. Called in the child between `fork` and
    /// `exec`: no allocation beyond the error path, no lock another thread could hold (the
    /// mutex is this child's own copy).
    pub fn enforce(&self) -> std::io::Result<()> {
        let ruleset = self
            .0
            .lock()
            .ok()
            .and_then(|mut r| r.take())
            .ok_or_else(|| std::io::Error::other("the sandbox rules were already used"))?;
        match ruleset.restrict_self() {
            Ok(status) if status.ruleset != landlock::RulesetStatus::NotEnforced => Ok(()),
            Ok(_) => Err(std::io::Error::other(
                "Landlock is not enforced by this kernel",
            )),
            Err(e) => Err(std::io::Error::other(e.to_string())),
        }
    }
}

/// The repository's shared `.git` directory (for a worktree: the main one's).
fn common_git_dir(repo: &Path) -> Option<PathBuf> {
    let dir = crate::git::git_text(
        repo,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )
    .ok()?;
    Some(PathBuf::from(dir))
}

/// Where an agent's program is installed, to be readable in the sandbox: for a file inside a
/// `node_modules` tree, the directory that holds that tree (an npm prefix); else the program's
/// own directory's parent (`/opt/tool/bin/x` → `/opt/tool`). Never the home directory or one
/// above it (`~/bin/tool` would open all of `$HOME`): then the program file alone.
fn install_root(program: &str) -> Option<PathBuf> {
    let found = crate::dispatch::backend::commands::find_program(program)?;
    let real = std::fs::canonicalize(&found).unwrap_or(found);
    let comps: Vec<_> = real.components().collect();
    let root: PathBuf = match comps.iter().position(|c| c.as_os_str() == "node_modules") {
        Some(i) => comps[..i].iter().collect(),
        None => real.parent().and_then(Path::parent)?.to_path_buf(),
    };
    let home = dirs::home_dir().and_then(|h| std::fs::canonicalize(&h).ok().or(Some(h)));
    match home {
        Some(home) if home.starts_with(&root) || root.parent().is_none() => Some(real),
        _ => Some(root),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_install_root_of_an_npm_package_is_its_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("prefix/node_modules/pkg/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let exe = bin.join("tool");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let root = install_root(exe.to_str().unwrap()).unwrap();
        assert_eq!(
            std::fs::canonicalize(root).unwrap(),
            std::fs::canonicalize(dir.path().join("prefix")).unwrap()
        );
    }
}
