//! `deep-review run` as a new user would run it: the built binary, in a fresh two-commit git
//! repository, with the three real agent CLIs pointed at the fake model server.
//!
//! The agents inherit the run's environment (HOME, the base-URL variables, the Codex provider in
//! `$CODEX_HOME/config.toml`), exactly as they inherit a real user's logins. Every process of a
//! run carries a unique `DEEP_REVIEW_TEST_TAG` in its environment, so a test can find any agent
//! process left behind by scanning `/proc`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

use super::agents::AgentHome;
use super::fake_model::{Api, FakeModel, Script};
use super::git;

/// The built `deep-review` binary (set by cargo for integration tests and benchmarks).
pub const BIN: &str = env!("CARGO_BIN_EXE_deep-review");

/// A fake server, a HOME for the agents and a fresh repository on branch `feature`.
pub struct RunFixture {
    pub server: FakeModel,
    pub home: AgentHome,
    pub repo: TempDir,
    pub tag: String,
    /// HEAD of the checkout before the run: the run must leave it where it was.
    pub head: String,
}

impl RunFixture {
    pub fn new() -> RunFixture {
        let server = FakeModel::start();
        let home = AgentHome::new(&server);
        let repo = tempfile::Builder::new()
            .prefix("deep-review-e2e-repo-")
            .tempdir()
            .expect("temp repo");
        git::two_commit_branch(repo.path());
        let head = git::git(repo.path(), &["rev-parse", "HEAD"]);
        let tag = format!(
            "{}-{}",
            std::process::id(),
            repo.path()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        );
        RunFixture {
            server,
            home,
            repo,
            tag,
            head,
        }
    }

    pub fn script(&self, api: Api, script: Script) {
        self.server.script(api, script);
    }

    pub fn path(&self) -> &Path {
        self.repo.path()
    }

    /// The repository's store: `deep-review/` in its git directory.
    pub fn store(&self) -> PathBuf {
        self.path().join(".git/deep-review")
    }

    /// Writes the user's config (`$HOME/.config/deep-review/config.toml` of the agents' HOME,
    /// which is the run's HOME): trusted, as a user's own file is.
    pub fn config(&self, toml: &str) {
        let dir = self.home.path().join(".config/deep-review");
        std::fs::create_dir_all(&dir).expect("create the user config directory");
        std::fs::write(dir.join("config.toml"), toml).expect("write the user config");
    }

    /// `deep-review ARGS` in the repository, with only the agents' environment (nothing of the
    /// test's own, so no real key or config can leak in).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.args(args).current_dir(self.path());
        self.home.apply(&mut cmd);
        cmd.env("DEEP_REVIEW_TEST_TAG", &self.tag)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("NO_COLOR", "1");
        cmd
    }

    /// Runs `deep-review ARGS` to the end (killed after `limit`, so a hang fails the test).
    pub fn run(&self, args: &[&str], limit: Duration) -> RunOutput {
        let started = Instant::now();
        let child = self.spawn(args);
        let (status, timed_out) = wait_limited(child, limit);
        RunOutput {
            status,
            timed_out,
            stdout: self.read_log("stdout"),
            stderr: self.read_log("stderr"),
            elapsed: started.elapsed(),
        }
    }

    /// Starts `deep-review ARGS` with its output going to files beside the repository.
    pub fn spawn(&self, args: &[&str]) -> Child {
        use std::os::unix::process::CommandExt;
        let stdout = std::fs::File::create(self.log_path("stdout")).expect("stdout log");
        let stderr = std::fs::File::create(self.log_path("stderr")).expect("stderr log");
        self.command(args)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .expect("start deep-review")
    }

    fn log_path(&self, stream: &str) -> PathBuf {
        self.home.path().join(format!("deep-review.{stream}"))
    }

    pub fn read_log(&self, stream: &str) -> String {
        std::fs::read_to_string(self.log_path(stream)).unwrap_or_default()
    }

    /// Files of the store (not under `runs/`) with extension `ext`.
    pub fn reports(&self, ext: &str) -> Vec<PathBuf> {
        let dir = self.store();
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == ext))
            .collect();
        found.sort();
        found
    }

    /// The one Markdown report of the run, with a message naming what was found otherwise.
    pub fn the_report(&self, out: &RunOutput) -> String {
        let reports = self.reports("md");
        assert_eq!(
            reports.len(),
            1,
            "expected one <store>/<id>.md, found {reports:?}\n{}",
            self.context(out)
        );
        std::fs::read_to_string(&reports[0]).expect("read the report")
    }

    /// `(agent, meta.json)` of every agent in every run bundle under `<store>/runs/`.
    pub fn agent_metas(&self) -> Vec<(String, Value)> {
        let mut metas = Vec::new();
        let runs = self.store().join("runs");
        for run in std::fs::read_dir(runs).into_iter().flatten().flatten() {
            for agent in std::fs::read_dir(run.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let meta = agent.path().join("meta.json");
                let Ok(text) = std::fs::read_to_string(&meta) else {
                    continue;
                };
                let value = serde_json::from_str(&text).unwrap_or(Value::Null);
                metas.push((agent.file_name().to_string_lossy().into_owned(), value));
            }
        }
        metas
    }

    /// Processes still running with this fixture's tag: agents (or their children) left behind.
    pub fn leftover_processes(&self) -> Vec<String> {
        processes_with_env("DEEP_REVIEW_TEST_TAG", &self.tag)
    }

    /// Linked worktrees git still knows of (the checkout itself excluded).
    pub fn linked_worktrees(&self) -> Vec<PathBuf> {
        let list = git::git(self.path(), &["worktree", "list", "--porcelain"]);
        let main = std::fs::canonicalize(self.path()).unwrap_or_else(|_| self.path().into());
        list.lines()
            .filter_map(|l| l.strip_prefix("worktree "))
            .map(PathBuf::from)
            .filter(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()) != main)
            .collect()
    }

    /// The agents' checkouts of run process `pid`: linked worktrees git knows of (each agent's,
    /// unsandboxed) and the one checkout sandboxed agents share, a repository of its own in the
    /// run's temporary directory (`deep-review-run-<pid>-*/checkout`).
    pub fn agent_checkouts(&self, pid: u32) -> Vec<PathBuf> {
        let mut all = self.linked_worktrees();
        let prefix = format!("deep-review-run-{pid}-");
        if let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) {
            all.extend(
                entries
                    .flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                    .map(|e| e.path().join("checkout"))
                    .filter(|p| p.is_dir()),
            );
        }
        all
    }

    /// The user's checkout is as it was: same HEAD, no tracked file changed, no stray file the
    /// models asked for.
    pub fn assert_checkout_untouched(&self) {
        assert_eq!(
            git::git(self.path(), &["rev-parse", "HEAD"]),
            self.head,
            "the run moved HEAD of the checkout"
        );
        assert_eq!(
            git::git(
                self.path(),
                &["status", "--porcelain", "--untracked-files=no"]
            ),
            "",
            "the run changed tracked files of the checkout"
        );
        assert!(
            !self.path().join("pwned.txt").exists(),
            "an agent wrote pwned.txt into the checkout"
        );
    }

    /// Everything a failing assertion should show.
    pub fn context(&self, out: &RunOutput) -> String {
        format!(
            "deep-review exit {:?} after {:.1?} (timed out: {})\nstdout:\n{}\nstderr:\n{}\nmodel server saw:\n{}",
            out.status,
            out.elapsed,
            out.timed_out,
            out.stdout,
            out.stderr,
            self.server.summary()
        )
    }
}

impl Drop for RunFixture {
    /// A failed test must not leave agents running: kill whatever still carries the tag.
    fn drop(&mut self) {
        for line in self.leftover_processes() {
            if let Some(pid) = line.split_whitespace().next().and_then(|p| p.parse().ok()) {
                // SAFETY: kill(2) on a pid this fixture's run started; no memory is involved.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
    }
}

/// What one `deep-review` run gave.
#[derive(Debug)]
pub struct RunOutput {
    pub status: std::process::ExitStatus,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// Waits for `child`, killing its process group after `limit`.
pub fn wait_limited(mut child: Child, limit: Duration) -> (std::process::ExitStatus, bool) {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait for deep-review") {
            return (status, false);
        }
        if Instant::now() >= deadline {
            super::agents::kill_group(child.id());
            return (child.wait().expect("wait for killed deep-review"), true);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `pid cmdline` of every process whose environment holds `key=value`.
pub fn processes_with_env(key: &str, value: &str) -> Vec<String> {
    let needle = format!("{key}={value}");
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.chars().all(|c| c.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ
            .split(|b| *b == 0)
            .any(|var| var == needle.as_bytes())
        {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            found.push(format!("{pid} {}", cmdline.trim()));
        }
    }
    found
}

/// The part of a report before its appendix of original reviews: what the tool itself wrote.
/// A finding that shows up here was carried into the consolidated report, not just quoted.
pub fn consolidated_part(report: &str) -> &str {
    match report.find("## Appendix") {
        Some(at) => &report[..at],
        None => report,
    }
}

/// Every JSON object (at any depth) that has a `status` key: the per-agent entries of the JSON
/// report, whatever shape holds them.
pub fn agent_entries(json: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    walk(json, &mut out);
    out
}

fn walk<'a>(value: &'a Value, out: &mut Vec<&'a Value>) {
    match value {
        Value::Object(map) => {
            if map.get("status").is_some_and(Value::is_string) {
                out.push(value);
            }
            map.values().for_each(|v| walk(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
        _ => {}
    }
}

/// A raw review in the layout of the reference reports with one finding.
pub fn review(title: &str, location: &str, severity: &str, body: &str) -> String {
    let heading = match severity {
        "critical" => "Critical Issues",
        "important" => "Important Issues",
        _ => "Suggestions",
    };
    format!(
        "## Executive Summary\n\nThe branch adds a number parser and switches addition to \
         wrapping arithmetic.\n\n## Findings\n\n### {heading}\n\n\
         1. **{title}** — `{location}` ({severity}, regression)\n\n   {body}\n\n\
         ## Verdict\n\nMerge with fixes\n"
    )
}

/// The three scripted reviews: one finding each, on different code, with different titles and
/// words, so that consolidation keeps them apart.
pub fn three_reviews() -> [(Api, &'static str, String); 3] {
    [
        (
            Api::Anthropic,
            "Parser panics on malformed input",
            review(
                "Parser panics on malformed input",
                "src/parse.rs:4",
                "important",
                "`unwrap()` on user-supplied text aborts the process; return a `Result` instead.",
            ),
        ),
        (
            Api::OpenAi,
            "Wrapping addition hides overflow",
            review(
                "Wrapping addition hides overflow",
                "src/lib.rs:4",
                "important",
                "`wrapping_add` turns an overflow into a silently wrong sum where `checked_add` \
                 would report it.",
            ),
        ),
        (
            Api::Gemini,
            "Whitespace-only list items are not skipped",
            review(
                "Whitespace-only list items are not skipped",
                "src/parse.rs:20",
                "suggestion",
                "`parse_list` filters empty items before trimming, so `\"1, ,2\"` still reaches \
                 `parse` with a blank item.",
            ),
        ),
    ]
}

/// Scripts each API of `fixture` with its review of [`three_reviews`], adjusted by `tweak`.
pub fn script_three(fixture: &RunFixture, tweak: impl Fn(Api, Script) -> Script) {
    for (api, _, review) in three_reviews() {
        fixture.script(api, tweak(api, Script::review(review)));
    }
}
