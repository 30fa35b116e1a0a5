//! The real agent CLIs (Claude Code, Codex CLI, Gemini CLI) pointed at the fake model server.
//!
//! How each CLI is pointed at it follows ../shared/AGENT_CLIS.md: a HOME made for the test (and
//! `CODEX_HOME` under it) so no user config leaks in; Claude through `ANTHROPIC_BASE_URL`; Codex
//! through a custom provider in `$CODEX_HOME/config.toml` (it ignores `OPENAI_BASE_URL`); Gemini
//! through `GOOGLE_GEMINI_BASE_URL` and `$HOME/.gemini/settings.json`. The proxy variables point
//! at the fake server too, with 127.0.0.1 exempt, so any other host a CLI tries shows up there as
//! a `CONNECT` instead of leaving the machine.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

use super::fake_model::{Api, FakeModel, MODEL};

/// The three CLIs by executable name, with the API each speaks.
pub const CLIS: [(&str, Api); 3] = [
    ("claude", Api::Anthropic),
    ("codex", Api::OpenAi),
    ("gemini", Api::Gemini),
];

/// The folder `scripts/install-agent-clis.sh` installs into by default.
pub fn default_install_bin() -> Option<PathBuf> {
    let base = match std::env::var_os("DEEP_REVIEW_AGENT_CLIS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => dirs::home_dir()?.join(".cache/deep-review/agent-clis"),
    };
    Some(base.join("node_modules/.bin"))
}

/// Folders searched for the CLIs, in order: `DEEP_REVIEW_AGENT_BIN`, PATH, the install script's
/// default folder (so a developer who ran the script needs no PATH change).
fn search_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(bin) = std::env::var_os("DEEP_REVIEW_AGENT_BIN") {
        dirs.push(PathBuf::from(bin));
    }
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    dirs.extend(default_install_bin());
    dirs
}

/// Where the executable `name` is, if anywhere.
pub fn find_cli(name: &str) -> Option<PathBuf> {
    search_dirs()
        .into_iter()
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The CLIs `names`. A test that calls this is `#[ignore = "needs the agent CLIs ..."]`, so it
/// runs only when asked (`--run-ignored all`, as CI does): a missing CLI then fails it with what
/// to install, never passes it silently.
pub fn require_clis(test: &str, names: &[&str]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for name in names {
        match find_cli(name) {
            Some(path) => found.push(path),
            None => missing.push(*name),
        }
    }
    if missing.is_empty() {
        return found;
    }
    panic!(
        "{test}: agent CLI(s) {} not found on PATH, in DEEP_REVIEW_AGENT_BIN or in {}; install them \
         with `PATH=\"$(scripts/install-agent-clis.sh):$PATH\"` (npm: @anthropic-ai/claude-code \
         @openai/codex @google/gemini-cli)",
        missing.join(", "),
        default_install_bin()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "the install folder".into()),
    );
}

/// All three CLIs (see [`require_clis`]).
pub fn require_all(test: &str) -> Vec<PathBuf> {
    require_clis(test, &["claude", "codex", "gemini"])
}

/// A HOME made for one test, holding the Codex and Gemini settings that point at `server`.
pub struct AgentHome {
    dir: TempDir,
    server_url: String,
}

impl AgentHome {
    pub fn new(server: &FakeModel) -> AgentHome {
        let dir = tempfile::Builder::new()
            .prefix("deep-review-agent-home-")
            .tempdir()
            .expect("create a temp HOME for the agents");
        let home = AgentHome {
            dir,
            server_url: server.url(),
        };
        home.write_codex_config();
        home.write_gemini_settings();
        home
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn codex_home(&self) -> PathBuf {
        self.path().join(".codex")
    }

    /// `$CODEX_HOME/config.toml`: the custom provider `fake` as the default, with no retries of
    /// its own (deep-review retries), no analytics, no plugins.
    fn write_codex_config(&self) {
        let config = format!(
            r#"model_provider = "fake"
model = "{MODEL}"

[model_providers.fake]
name = "fake"
base_url = "{url}/v1"
env_key = "FAKE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
unbounded_connection_retries = false
plugins = false
"#,
            url = self.server_url
        );
        std::fs::create_dir_all(self.codex_home()).expect("create CODEX_HOME");
        std::fs::write(self.codex_home().join("config.toml"), config)
            .expect("write $CODEX_HOME/config.toml");
    }

    /// `$HOME/.gemini/settings.json` as AGENT_CLIS.md gives it: API-key auth, no folder trust
    /// prompt, no telemetry or updates, one attempt per request.
    fn write_gemini_settings(&self) {
        let settings = serde_json::json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false, "maxAttempts": 1},
            "model": {"maxSessionTurns": 40},
        });
        let dir = self.path().join(".gemini");
        std::fs::create_dir_all(&dir).expect("create $HOME/.gemini");
        std::fs::write(dir.join("settings.json"), settings.to_string())
            .expect("write $HOME/.gemini/settings.json");
    }

    /// PATH with the folder of the installed CLIs first.
    pub fn path_var(&self) -> OsString {
        let mut dirs: Vec<PathBuf> = Vec::new();
        if let Some(claude) = find_cli("claude") {
            dirs.extend(claude.parent().map(Path::to_path_buf));
        }
        if let Some(path) = std::env::var_os("PATH") {
            dirs.extend(std::env::split_paths(&path));
        }
        std::env::join_paths(dirs).expect("PATH entries without ':'")
    }

    /// What every agent process gets: this HOME, PATH, the proxy pointed at the fake server.
    pub fn common_env(&self) -> Vec<(String, OsString)> {
        let proxy = OsString::from(&self.server_url);
        let no_proxy = OsString::from("127.0.0.1,localhost");
        vec![
            ("HOME".into(), self.path().into()),
            ("CODEX_HOME".into(), self.codex_home().into()),
            ("PATH".into(), self.path_var()),
            ("LANG".into(), "C.UTF-8".into()),
            ("HTTPS_PROXY".into(), proxy.clone()),
            ("https_proxy".into(), proxy.clone()),
            ("HTTP_PROXY".into(), proxy.clone()),
            ("http_proxy".into(), proxy),
            ("NO_PROXY".into(), no_proxy.clone()),
            ("no_proxy".into(), no_proxy),
        ]
    }

    /// The variables one CLI needs on top of [`AgentHome::common_env`].
    pub fn agent_env(&self, api: Api) -> Vec<(String, String)> {
        let pairs: &[(&str, &str)] = match api {
            Api::Anthropic => &[
                ("ANTHROPIC_API_KEY", "dummy"),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
                ("CLAUDE_CODE_MAX_RETRIES", "0"),
            ],
            Api::OpenAi => &[("FAKE_API_KEY", "dummy")],
            Api::Gemini => &[
                ("GEMINI_API_KEY", "dummy"),
                ("GEMINI_CLI_NO_RELAUNCH", "true"),
            ],
            // No agent CLI speaks chat completions: only deep-review's own reviewers do.
            Api::Chat => &[],
        };
        let mut env: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        match api {
            Api::Anthropic => env.push(("ANTHROPIC_BASE_URL".into(), self.server_url.clone())),
            Api::Gemini => env.push(("GOOGLE_GEMINI_BASE_URL".into(), self.server_url.clone())),
            Api::OpenAi | Api::Chat => {}
        }
        env
    }

    /// Every variable for all three CLIs: what a `deep-review run` process inherits.
    pub fn all_env(&self) -> Vec<(String, OsString)> {
        let mut env = self.common_env();
        for api in Api::ALL {
            env.extend(
                self.agent_env(api)
                    .into_iter()
                    .map(|(k, v)| (k, OsString::from(v))),
            );
        }
        env
    }

    /// Applies a clean environment to `cmd`: nothing from the test's own environment but what
    /// [`AgentHome::all_env`] sets, so no real key or config reaches the CLIs.
    pub fn apply(&self, cmd: &mut Command) {
        cmd.env_clear();
        for (k, v) in self.all_env() {
            cmd.env(k, v);
        }
    }

    /// The read-only headless command of AGENT_CLIS.md for one CLI, streaming JSON, reading the
    /// prompt from stdin, run in `workdir`.
    pub fn command(&self, api: Api, workdir: &Path) -> Command {
        let (name, args): (&str, Vec<String>) = match api {
            Api::Chat => panic!("no agent CLI speaks chat completions"),
            Api::Anthropic => (
                "claude",
                [
                    "-p",
                    "--output-format",
                    "stream-json",
                    "--verbose",
                    "--model",
                    MODEL,
                    "--tools",
                    "Read,Grep,Glob",
                    "--permission-mode",
                    "dontAsk",
                    "--max-turns",
                    "40",
                    "--no-session-persistence",
                ]
                .map(String::from)
                .to_vec(),
            ),
            Api::OpenAi => (
                "codex",
                vec![
                    "exec".into(),
                    "--json".into(),
                    "--ephemeral".into(),
                    "-C".into(),
                    workdir.display().to_string(),
                    "-s".into(),
                    "read-only".into(),
                    "-m".into(),
                    MODEL.into(),
                    "-".into(),
                ],
            ),
            Api::Gemini => (
                "gemini",
                [
                    "-o",
                    "stream-json",
                    "-m",
                    MODEL,
                    "--approval-mode",
                    "default",
                    "--skip-trust",
                ]
                .map(String::from)
                .to_vec(),
            ),
        };
        let exe = find_cli(name).unwrap_or_else(|| PathBuf::from(name));
        let mut cmd = Command::new(exe);
        cmd.args(args).current_dir(workdir);
        cmd.env_clear();
        for (k, v) in self.common_env() {
            cmd.env(k, v);
        }
        for (k, v) in self.agent_env(api) {
            cmd.env(k, v);
        }
        cmd
    }
}

/// What a CLI run gave back.
#[derive(Debug)]
pub struct Ran {
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
}

/// Runs `cmd` with `stdin` as its standard input; kills it after `limit` (a guard against a
/// CLI that waits forever, so a broken test fails instead of hanging the suite).
///
/// The CLI runs in its own process group and the whole group is killed: `codex` is a Node
/// wrapper around a native binary, and killing only the wrapper leaves the binary running with
/// the output pipes open.
pub fn run_with_stdin(mut cmd: Command, stdin: &str, limit: std::time::Duration) -> Ran {
    use std::io::{Read, Write};
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let mut child = cmd
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("could not start {cmd:?}: {e}"));
    let mut input = child.stdin.take().expect("piped stdin");
    let prompt = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(prompt.as_bytes());
    });
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = std::time::Instant::now() + limit;
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the CLI") {
            break status;
        }
        if std::time::Instant::now() >= deadline {
            timed_out = true;
            kill_group(child.id());
            break child.wait().expect("wait for the killed CLI");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let _ = writer.join();
    Ran {
        status,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
        timed_out,
    }
}

/// Sends SIGKILL to the process group `pgid` (a child started with `process_group(0)`).
pub fn kill_group(pgid: u32) {
    if let Ok(pgid) = i32::try_from(pgid) {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// The review text in one CLI's streaming JSON output: Claude's assistant text blocks, Codex's
/// last `agent_message`, Gemini's assistant message deltas.
pub fn review_text(api: Api, stdout: &str) -> String {
    let events = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok());
    let mut text = String::new();
    for event in events {
        match api {
            Api::Anthropic if event["type"] == "assistant" => {
                if let Some(blocks) = event["message"]["content"].as_array() {
                    for block in blocks.iter().filter(|b| b["type"] == "text") {
                        text.push_str(block["text"].as_str().unwrap_or_default());
                    }
                }
            }
            Api::OpenAi
                if event["type"] == "item.completed"
                    && event["item"]["type"] == "agent_message" =>
            {
                text = event["item"]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
            }
            Api::Gemini if event["type"] == "message" && event["role"] == "assistant" => {
                text.push_str(event["content"].as_str().unwrap_or_default());
            }
            _ => {}
        }
    }
    text
}
