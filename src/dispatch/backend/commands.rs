//! The agent CLIs' command lines: how each CLI is started headless and read-only.
//!
//! The argument layout is picked by the agent's *kind* (`AgentSpec::kind`, from config),
//! never by the executable, so a stand-in script (tests) or a wrapper (`command =
//! "/opt/bin/my-claude"`) still gets the layout of the agent it stands for. The prompt always goes to standard input: one argument
//! is limited to 128 KiB on Linux and a brief with a real diff is bigger (see AGENT_CLIS.md).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::redact;
use crate::types::{AgentKind, AgentSpec};

/// Turn limit given to the CLIs that have one. A review of a large change reads many files;
/// a limit that is too low loses the whole review (Claude ends with `error_max_turns`).
/// Extra args come last, so `--max-turns N` in config overrides it.
pub const DEFAULT_MAX_TURNS: u32 = 80;

/// Tools Claude may use: read and search, plus git commands that only read.
const CLAUDE_TOOLS: &str = "Read,Grep,Glob,Bash";
/// Claude's pre-approved rules; with `--permission-mode dontAsk` anything else is denied.
const CLAUDE_ALLOWED: &str = "Read,Grep,Glob,Bash(git diff:*),Bash(git log:*),Bash(git show:*)";

/// Rules Claude must never run although they match [`CLAUDE_ALLOWED`]: `git diff`, `git log`
/// and `git show` all take `--output FILE` (git accepts no abbreviation of it), which writes anywhere on the
/// machine, out of sight of the worktree check; a shell redirection does the same.
const CLAUDE_DENIED: &str =
    "Bash(*--output*),Bash(*>*),Bash(*|*),Bash(*;*),Bash(*&*),Bash(*`*),Bash(*$(*)";

/// A fully resolved command line for one agent run. The prompt is not part of it: it is
/// written to the child's standard input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCommand {
    pub program: String,
    pub args: Vec<String>,
    /// Variables set on top of the allowed inherited ones
    /// ([`crate::dispatch::environment`]).
    pub env: BTreeMap<String, String>,
    /// The agent's checkout: it runs there.
    pub cwd: PathBuf,
    /// Where the CLI writes its last message itself (Codex `-o`), if it does.
    pub last_message_file: Option<PathBuf>,
}

impl AgentCommand {
    /// A shell-like one-line rendering with secrets redacted, for `run --dry-run` and the run
    /// bundle's `command.txt`. Not meant to be pasted into a shell verbatim (the prompt goes on
    /// stdin and is shown as `< brief`).
    pub fn display(&self) -> String {
        let mut out = String::new();
        let _ = write!(
            out,
            "cd {} && env -i [allowed variables]",
            shell_quote(&self.cwd.to_string_lossy())
        );
        for (key, value) in &self.env {
            let shown = if redact::is_secret_name(key) {
                redact::REDACTED.to_string()
            } else {
                redact::redact(value).into_owned()
            };
            let _ = write!(out, " {}", shell_quote(&format!("{key}={shown}")));
        }
        let _ = write!(out, " {}", shell_quote(&self.program));
        for arg in redact::redact_args(&self.args) {
            let _ = write!(out, " {}", shell_quote(&arg));
        }
        out.push_str(" < brief");
        out
    }
}

/// Builds the command line for one agent that runs in `checkout`, with `scratch` as its private
/// directory for files the CLI writes itself (Codex's last message): the only place besides
/// its own state it may write in the sandbox.
pub fn command_for(spec: &AgentSpec, checkout: &Path, scratch: &Path) -> AgentCommand {
    let kind = spec.kind;
    let scratch = absolute(scratch);
    let mut args: Vec<String> = Vec::new();
    let mut env = BTreeMap::new();
    let mut last_message_file = None;
    let push = |args: &mut Vec<String>, items: &[&str]| {
        args.extend(items.iter().map(|s| s.to_string()));
    };
    match kind {
        AgentKind::Claude => {
            push(
                &mut args,
                &[
                    "-p",
                    "--output-format",
                    "stream-json",
                    "--verbose",
                    "--tools",
                    CLAUDE_TOOLS,
                    "--allowedTools",
                    CLAUDE_ALLOWED,
                    "--disallowedTools",
                    CLAUDE_DENIED,
                    "--permission-mode",
                    "dontAsk",
                    "--max-turns",
                ],
            );
            args.push(DEFAULT_MAX_TURNS.to_string());
            args.push("--no-session-persistence".into());
            if let Some(model) = &spec.model {
                push(&mut args, &["--model", model]);
            }
            if let Some(effort) = &spec.effort {
                push(&mut args, &["--effort", effort]);
            }
            args.extend(spec.extra_args.iter().cloned());
        }
        AgentKind::Codex => {
            let last = scratch.join("last-message.txt");
            push(&mut args, &["exec", "--json", "--ephemeral", "-C"]);
            args.push(checkout.to_string_lossy().into_owned());
            push(&mut args, &["-s", "read-only", "-o"]);
            args.push(last.to_string_lossy().into_owned());
            if let Some(model) = &spec.model {
                push(&mut args, &["-m", model]);
            }
            if let Some(effort) = &spec.effort {
                args.push("-c".into());
                args.push(format!("model_reasoning_effort={effort}"));
            }
            args.extend(spec.extra_args.iter().cloned());
            // `-` last: read the prompt from stdin (a positional prompt whose first word is a
            // subcommand would run that subcommand).
            args.push("-".into());
            last_message_file = Some(last);
        }
        AgentKind::Gemini => {
            push(&mut args, &["-o", "stream-json"]);
            // Without -m a router model is asked first to pick one: one more call and a
            // different model than configured.
            if let Some(model) = &spec.model {
                push(&mut args, &["-m", model]);
            }
            push(&mut args, &["--approval-mode", "default", "--skip-trust"]);
            args.extend(spec.extra_args.iter().cloned());
            // No relaunch in a child node with a bigger heap: one process fewer to track.
            env.insert("GEMINI_CLI_NO_RELAUNCH".into(), "true".into());
        }
        // A model API is no process: nothing runs it, but a command line is still described.
        _ => args.extend(spec.extra_args.iter().cloned()),
    }
    for (key, value) in &spec.env {
        env.insert(key.clone(), value.clone());
    }
    AgentCommand {
        program: spec.command.clone(),
        args,
        env,
        cwd: checkout.to_path_buf(),
        last_message_file,
    }
}

/// An agent name made safe as one path component (bundle and worktree directories).
pub fn safe_name(name: &str) -> String {
    crate::text::safe_file_name(&name.to_ascii_lowercase(), "agent")
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    }
}

/// Quotes a word for a POSIX shell when it needs it (shlex); control characters are shown
/// escaped, so a hostile path or argument cannot act on the terminal that prints it.
fn shell_quote(word: &str) -> String {
    let word = crate::text::printable(word);
    match shlex::try_quote(&word) {
        Ok(quoted) => quoted.into_owned(),
        Err(_) => format!("'{}'", word.replace('\0', "\\0").replace('\'', r"'\''")),
    }
}

/// Where `program` is: itself (when it contains a `/`, resolved against the current directory)
/// or the first executable of that name in an absolute directory of `PATH`.
pub fn find_program(program: &str) -> Option<PathBuf> {
    if program.trim().is_empty() {
        return None;
    }
    let cwd = std::env::current_dir().ok()?;
    let path = absolute_path(std::env::var_os("PATH").as_deref());
    which::which_in(program, path, cwd).ok()
}

/// `PATH` with only its absolute directories. A relative entry (`node_modules/.bin`, `.`, an
/// empty entry, which means `.`) is resolved against the current directory, which is often a
/// checkout of the change under review: a program found there is the change's, run outside any
/// sandbox (as Go's `exec.LookPath` refuses the current directory since 1.19). `None` when no
/// entry is left.
pub fn absolute_path(path: Option<&std::ffi::OsStr>) -> Option<std::ffi::OsString> {
    let kept: Vec<PathBuf> = std::env::split_paths(path?)
        .filter(|dir| dir.is_absolute())
        .collect();
    if kept.is_empty() {
        return None;
    }
    std::env::join_paths(kept).ok()
}

/// Makes this process's own `PATH` hold only absolute directories ([`absolute_path`]), so every
/// program it starts by name (`git`, `gh`, an agent CLI, and what those start in turn) is never
/// the change's.
///
/// # Safety
///
/// Sets an environment variable: call it before any other thread runs (first thing in `main`).
pub unsafe fn keep_absolute_path_entries() {
    let path = std::env::var_os("PATH");
    let kept = absolute_path(path.as_deref());
    if kept != path {
        // SAFETY: the caller guarantees no other thread reads or writes the environment.
        unsafe {
            match kept {
                Some(kept) => std::env::set_var("PATH", kept),
                None => std::env::remove_var("PATH"),
            }
        }
    }
}

/// How long `--version` may take (a node CLI starts in a second or two).
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(20);

/// The first line `program --version` prints, or why there is none.
pub fn probe_version(program: &Path, timeout: Duration) -> Result<String, String> {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not run it: {e}"))?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "`--version` did not answer within {}s",
                    timeout.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("could not wait for it: {e}")),
        }
    };
    let mut out = String::new();
    let mut err = String::new();
    if let Some(mut s) = child.stdout.take() {
        let _ = s.read_to_string(&mut out);
    }
    if let Some(mut s) = child.stderr.take() {
        let _ = s.read_to_string(&mut err);
    }
    let first = |t: &str| {
        t.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_string)
    };
    if status.success() {
        first(&out)
            .or_else(|| first(&err))
            .ok_or_else(|| "`--version` printed nothing".to_string())
    } else {
        Err(format!(
            "`--version` failed ({status}){}",
            first(&err)
                .or_else(|| first(&out))
                .map(|l| format!(": {l}"))
                .unwrap_or_default()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn spec(name: &str) -> AgentSpec {
        AgentSpec {
            timeout: Duration::from_secs(60),
            ..AgentSpec::new(name, name)
        }
    }

    #[test]
    fn claude_is_read_only_with_stream_output_and_prompt_on_stdin() {
        let mut s = spec("claude");
        s.model = Some("claude-opus-4-6".into());
        s.effort = Some("high".into());
        s.extra_args = vec!["--max-turns".into(), "10".into()];
        let cmd = command_for(&s, Path::new("/tmp/wt/claude"), Path::new("/tmp/b"));
        let a = cmd.args.join(" ");
        assert!(
            a.starts_with("-p --output-format stream-json --verbose"),
            "{a}"
        );
        assert!(a.contains("--permission-mode dontAsk"), "{a}");
        assert!(
            a.contains("--allowedTools Read,Grep,Glob,Bash(git diff:*)"),
            "{a}"
        );
        assert!(a.contains("--no-session-persistence"), "{a}");
        assert!(a.contains("--model claude-opus-4-6 --effort high"), "{a}");
        assert!(a.ends_with("--max-turns 10"), "extra args come last: {a}");
        assert_eq!(cmd.cwd, Path::new("/tmp/wt/claude"));
    }

    #[test]
    fn codex_reads_stdin_and_writes_last_message_to_an_absolute_path() {
        let mut s = spec("codex");
        s.effort = Some("xhigh".into());
        s.extra_args = vec!["-c".into(), "model_provider=fake".into()];
        let cmd = command_for(&s, Path::new("/tmp/wt/codex"), Path::new("rel/scratch"));
        assert_eq!(cmd.args.last().map(String::as_str), Some("-"));
        let a = cmd.args.join(" ");
        assert!(
            a.starts_with("exec --json --ephemeral -C /tmp/wt/codex -s read-only -o /"),
            "{a}"
        );
        assert!(
            a.contains("-c model_reasoning_effort=xhigh -c model_provider=fake -"),
            "{a}"
        );
        let last = cmd.last_message_file.expect("codex has -o");
        assert!(last.is_absolute());
        assert!(last.ends_with("rel/scratch/last-message.txt"));
    }

    #[test]
    fn gemini_uses_default_approval_and_skips_trust() {
        let mut s = spec("gemini");
        s.model = Some("gemini-2.5-pro".into());
        s.pass_forge_tokens = true;
        let cmd = command_for(&s, Path::new("/w"), Path::new("/b"));
        assert_eq!(
            cmd.args,
            [
                "-o",
                "stream-json",
                "-m",
                "gemini-2.5-pro",
                "--approval-mode",
                "default",
                "--skip-trust"
            ]
        );
        assert_eq!(
            cmd.env.get("GEMINI_CLI_NO_RELAUNCH").map(String::as_str),
            Some("true")
        );
    }

    #[test]
    fn a_script_stand_in_gets_the_layout_of_its_name() {
        let mut s = spec("Claude");
        s.command = "/tmp/fake-claude.sh".into();
        let cmd = command_for(&s, Path::new("/w"), Path::new("/b"));
        assert_eq!(cmd.program, "/tmp/fake-claude.sh");
        assert_eq!(cmd.args[0], "-p");
    }

    #[test]
    fn relative_path_entries_are_never_searched() {
        let path = std::ffi::OsString::from("node_modules/.bin::.:/usr/bin:bin:/bin:");
        assert_eq!(
            absolute_path(Some(&path)),
            Some(std::ffi::OsString::from("/usr/bin:/bin"))
        );
        assert_eq!(absolute_path(Some(std::ffi::OsStr::new(".:tools"))), None);
        assert_eq!(absolute_path(None), None);
    }

    #[test]
    fn display_redacts_keys_and_tokens() {
        let mut s = spec("codex");
        s.env
            .insert("OPENAI_API_KEY".into(), "sk-abcdefghijklmnop".into());
        s.env.insert("HOME".into(), "/home/me".into());
        s.env
            .insert("GH_TOKEN".into(), "ghp_abcdefghijklmnopqrstuvwx".into());
        s.extra_args = vec![
            "--api-key".into(),
            "plainsecret".into(),
            "-c".into(),
            "model_providers.fake.env_key=FAKE_API_KEY".into(),
            "-c".into(),
            "model_providers.x.api_key=hunter2".into(),
            "--note=Bearer abcdefghijkl".into(),
        ];
        let shown = command_for(&s, Path::new("/w"), Path::new("/b")).display();
        for secret in [
            "sk-abcdefghijklmnop",
            "ghp_abc",
            "plainsecret",
            "hunter2",
            "abcdefghijkl",
        ] {
            assert!(!shown.contains(secret), "{secret} leaked: {shown}");
        }
        assert!(shown.contains("HOME=/home/me"), "{shown}");
        assert!(shown.contains("env_key=FAKE_API_KEY"), "{shown}");
        assert!(shown.contains("env -i [allowed variables]"), "{shown}");
        assert!(shown.ends_with("- < brief"), "{shown}");
    }

    #[test]
    fn names_become_safe_path_components() {
        assert_eq!(safe_name("Claude Opus"), "claude-opus");
        assert_eq!(safe_name("../x"), "x");
        assert_eq!(safe_name(""), "agent");
    }
}
