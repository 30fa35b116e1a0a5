//! The local-process backend: an agent CLI (or a custom command) run in a checkout of the head
//! commit, in its sandbox ([`crate::dispatch::sandbox`]), in a session of its own.
//!
//! Each child starts a new session (`setsid`, which also makes it a process group leader with no
//! controlling terminal), so stopping the group also stops what the CLI started (node workers,
//! shells, MCP servers), and a Ctrl-C in the terminal reaches deep-review only: agents are stopped
//! by deep-review, on purpose. Stopping is TERM to the group, a grace period for it to flush and
//! exit, then KILL (under bubblewrap the group holds bwrap, which ignores the TERM, and the
//! agent's processes inside it, which get it; bwrap's death at the KILL takes the agent's whole
//! PID namespace with it, daemons that left the group included). Every live group is also
//! recorded in [`LIVE_GROUPS`], so a second Ctrl-C can kill them all at once
//! ([`kill_all_now`]).
//!
//! Output is read as it streams: raw bytes go to the bundle first (nothing is lost to a parser
//! bug), then to the CLI's stream reader for live counts. At most `output_limit` bytes are kept;
//! the rest is drained and dropped, so an agent that prints 200 MB costs neither memory nor disk.

use std::collections::BTreeSet;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::time::Instant;

use super::commands::{AgentCommand, command_for};
use super::{Attempt, AttemptRequest, Backend, BoxFuture, Session, Shared};
use crate::bundle;
use crate::dispatch::events::EventKind;
use crate::dispatch::output::StreamReader;
use crate::dispatch::sandbox::launch::{self, AgentSandbox};
use crate::dispatch::worktree::Worktree;
use crate::dispatch::{environment, failure, sandbox};
use crate::redact;
use crate::types::{AgentKind, AgentSpec, Failure};

/// How much of stderr is kept in memory (the tail).
const STDERR_KEEP: usize = 256 * 1024;
/// How long a stopped agent gets to exit after TERM before its group is killed.
const TERM_GRACE: Duration = Duration::from_secs(3);
/// How long the output readers may lag behind the process's exit before they are abandoned
/// (a process that left the group could hold the pipe open forever).
const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// Process groups of agents that are running now.
static LIVE_GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// Kills every agent process group this process started and that is still running: what a
/// second Ctrl-C does before deep-review exits at once.
pub fn kill_all_now() {
    let groups: Vec<i32> = LIVE_GROUPS
        .lock()
        .map(|g| g.iter().copied().collect())
        .unwrap_or_default();
    for pgid in groups {
        signal_group(pgid, libc::SIGKILL);
    }
}

fn signal_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory involved.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// A running agent's process group: registered while it lives, killed when dropped (covers a
/// dispatch future that is dropped mid-run).
struct Group(Option<i32>);

impl Group {
    fn new(pid: Option<u32>) -> Group {
        let pgid = pid.and_then(|p| i32::try_from(p).ok()).filter(|p| *p > 1);
        if let (Some(pgid), Ok(mut live)) = (pgid, LIVE_GROUPS.lock()) {
            live.insert(pgid);
        }
        Group(pgid)
    }

    fn signal(&self, signal: i32) {
        if let Some(pgid) = self.0 {
            signal_group(pgid, signal);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            signal_group(pgid, libc::SIGKILL);
            if let Ok(mut live) = LIVE_GROUPS.lock() {
                live.remove(&pgid);
            }
        }
    }
}

/// Runs agent CLIs and custom commands as local processes.
pub struct ProcessBackend;

impl Backend for ProcessBackend {
    fn prepare<'a>(
        &'a self,
        shared: &'a Shared,
        spec: &'a AgentSpec,
        dir_name: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn Session>, Failure>> {
        Box::pin(async move {
            let could_not = |what: String| Failure::CouldNotStart {
                reason: crate::dispatch::output::one_sentence(&what),
            };
            // The agent's private scratch directory: its TMPDIR, and where a CLI writes files of
            // its own (Codex's last message). The only place outside its state it may write.
            let scratch = shared.work_root.join(format!("scratch-{dir_name}"));
            std::fs::create_dir_all(&scratch)
                .map_err(|e| could_not(format!("could not create {}: {e}", scratch.display())))?;
            let checkout = match &shared.checkout {
                Some(path) => Checkout::Shared(path.clone()),
                None => {
                    let path = shared.work_root.join(dir_name);
                    let worktree = Worktree::add(&shared.repo, &shared.head, &path, &shared.cancel)
                        .await
                        .map_err(|err| {
                            if shared.cancel.is_cancelled() {
                                Failure::Cancelled
                            } else {
                                could_not(format!("could not create its worktree: {err:#}"))
                            }
                        })?;
                    Checkout::Own(worktree)
                }
            };
            let mut command = command_for(spec, checkout.path(), &scratch);
            // Never a relative program: it would be looked up in the checkout, which is the
            // change under review.
            if let Some(found) = crate::dispatch::backend::commands::find_program(&command.program)
            {
                command.program = found.display().to_string();
            }
            let agent_dir = crate::bundle::agent_dir(&shared.bundle_dir, dir_name);
            let home = launch::home_dir(&shared.work_root, dir_name);
            let places = sandbox::AgentPlaces {
                spec,
                checkout: checkout.path(),
                repo: &shared.repo,
                scratch: &scratch,
                home: &home,
                helper: shared.sandbox.helper.as_deref(),
            };
            // The allowlist reads the base URLs the agent's environment will name.
            let env = environment::agent_env(spec, std::env::vars_os(), &command.env);
            let sandbox =
                AgentSandbox::prepare(shared.sandbox.layers.clone(), &places, &env, &agent_dir)
                    .map_err(|e| could_not(format!("could not prepare its sandbox: {e}")))?;
            Ok(Box::new(ProcessSession {
                checkout,
                command,
                scratch,
                sandbox,
            }) as Box<dyn Session>)
        })
    }
}

/// Where the agent runs: its own worktree, or the checkout every sandboxed agent shares (they
/// cannot write to it).
enum Checkout {
    Own(Worktree),
    Shared(std::path::PathBuf),
}

impl Checkout {
    fn path(&self) -> &std::path::Path {
        match self {
            Checkout::Own(w) => w.path(),
            Checkout::Shared(p) => p,
        }
    }
}

/// One agent's checkout, command line and sandbox.
struct ProcessSession {
    checkout: Checkout,
    command: AgentCommand,
    scratch: std::path::PathBuf,
    sandbox: AgentSandbox,
}

impl Session for ProcessSession {
    fn describe(&self) -> String {
        self.command.display()
    }

    fn sandbox(&self) -> String {
        self.sandbox.layers().name()
    }

    fn network(&self) -> Option<crate::types::NetworkRecord> {
        Some(self.sandbox.network_record())
    }

    fn attempt<'a>(&'a mut self, request: AttemptRequest<'a>) -> BoxFuture<'a, Attempt> {
        Box::pin(async move {
            if let Some(path) = &self.command.last_message_file {
                let _ = std::fs::remove_file(path);
            }
            let agent_dir = request.agent_dir.to_path_buf();
            let attempt = run_attempt(&self.command, &self.scratch, &self.sandbox, request).await;
            // The CLI's own last-message file goes into the bundle beside its raw output.
            if let Some(path) = &self.command.last_message_file
                && let Ok(text) = std::fs::read_to_string(path)
            {
                let _ = std::fs::write(
                    agent_dir.join("last-message.txt"),
                    redact::redact(&text).as_bytes(),
                );
            }
            attempt
        })
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, Vec<String>> {
        let ProcessSession { checkout, .. } = *self;
        Box::pin(async move {
            let Checkout::Own(worktree) = checkout else {
                // The shared checkout is checked and removed once, after every agent.
                return Vec::new();
            };
            let result = tokio::task::spawn_blocking(move || {
                let mut changes = worktree.changes();
                if let Err(err) = worktree.remove() {
                    changes.push(format!("the worktree could not be removed: {err:#}"));
                }
                changes
            })
            .await;
            result.unwrap_or_else(|err| vec![format!("the worktree could not be checked: {err}")])
        })
    }
}

/// How the process ended.
enum End {
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
    /// It could not be started or waited for.
    NotRun(Failure),
}

/// One run of the command: spawn in its own group with the allowed environment and in its
/// sandbox, feed the brief, stream stdout to the bundle and the reader, and stop it at the
/// deadline or on cancel.
async fn run_attempt(
    command: &AgentCommand,
    scratch: &std::path::Path,
    sandbox: &AgentSandbox,
    request: AttemptRequest<'_>,
) -> Attempt {
    let AttemptRequest {
        shared,
        spec,
        agent_dir,
        deadline,
    } = request;
    let started = Instant::now();
    if shared.cancel.is_cancelled() {
        return Attempt::not_run(Failure::Cancelled);
    }
    let stdout_path = agent_dir.join(bundle::STDOUT_FILE);
    let stdout_file = match tokio::fs::File::create(&stdout_path).await {
        Ok(f) => f,
        Err(err) => {
            return Attempt::not_run(Failure::CouldNotStart {
                reason: format!("could not create {}: {err}", stdout_path.display()),
            });
        }
    };

    // A program that is not there fails here, with how to install it: inside the sandbox the
    // helper could only say that its `exec` failed.
    if let Err(err) = std::fs::metadata(&command.program) {
        return Attempt::not_run(Failure::CouldNotStart {
            reason: spawn_error(&command.program, spec.kind, &err),
        });
    }
    let mut set = command.env.clone();
    set.insert("TMPDIR".into(), scratch.display().to_string());
    set.extend(sandbox.home_env().clone());
    let env = environment::agent_env(spec, std::env::vars_os(), &set);
    let launch = match sandbox
        .launch(&command.program, &command.args, &command.cwd, env)
        .await
    {
        Ok(launch) => launch,
        Err(err) => {
            return Attempt::not_run(Failure::CouldNotStart {
                reason: format!("could not set up its sandbox: {err}"),
            });
        }
    };
    let mut cmd = tokio::process::Command::new(&launch.program);
    cmd.args(&launch.args)
        .current_dir(&command.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .env_clear()
        .envs(&launch.env);
    let setup = launch.setup;
    // SAFETY: runs in the child between fork and exec: setsid, prctl, dup2 and the Landlock
    // and capability system calls, on values prepared in the parent (ChildSetup::run).
    unsafe {
        cmd.pre_exec(move || setup.run());
    }
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(err) => {
            return Attempt {
                elapsed: started.elapsed(),
                ..Attempt::not_run(Failure::CouldNotStart {
                    reason: spawn_error(&command.program, spec.kind, &err),
                })
            };
        }
    };
    // The child started a session of its own (setsid): its group is its pid.
    let group = Group::new(child.id());

    // The brief on stdin, then EOF. A CLI that exits without reading it all is not an error
    // here: its exit status says what happened.
    let stdin = child.stdin.take();
    let brief = shared.prompt_for(spec);
    let stdin_task = tokio::spawn(async move {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(brief.as_bytes()).await;
            let _ = stdin.shutdown().await;
        }
    });

    let reader = Arc::new(Mutex::new(StreamReader::new(spec.kind)));
    let cut = Arc::new(Mutex::new(None::<u64>));
    let stdout_task = tokio::spawn(read_stdout(
        child.stdout.take(),
        stdout_file,
        Arc::clone(&reader),
        Arc::clone(&cut),
        shared.output_limit,
        shared.events.clone(),
        spec.name.clone(),
    ));
    let stderr_buf = Arc::new(Mutex::new(Vec::<u8>::new()));
    let stderr_task = tokio::spawn(read_stderr_tail(
        child.stderr.take(),
        Arc::clone(&stderr_buf),
    ));
    // The agent's network: served while it runs, stopped with it.
    let serving = sandbox.serve(launch.network).await;

    let end = tokio::select! {
        status = child.wait() => match status {
            Ok(status) => End::Exited(status),
            Err(err) => End::NotRun(Failure::CouldNotStart {
                reason: format!("could not wait for `{}`: {err}", command.program),
            }),
        },
        _ = tokio::time::sleep_until(deadline) => End::TimedOut,
        _ = shared.cancel.cancelled() => End::Cancelled,
    };
    if matches!(end, End::TimedOut | End::Cancelled) {
        // Stopped on purpose: TERM first, so the CLI can flush what it has, then KILL.
        group.signal(libc::SIGTERM);
        if tokio::time::timeout(TERM_GRACE, child.wait())
            .await
            .is_err()
        {
            group.signal(libc::SIGKILL);
            let _ = tokio::time::timeout(DRAIN_GRACE, child.wait()).await;
        }
    }
    // Whatever happened, nothing of this run outlives it.
    drop(group);
    drop(serving);
    stdin_task.abort();
    let (mut stdout_task, mut stderr_task) = (stdout_task, stderr_task);
    let drained = tokio::time::timeout(DRAIN_GRACE, async {
        let _ = (&mut stdout_task).await;
        let _ = (&mut stderr_task).await;
    })
    .await;
    if drained.is_err() {
        // A process escaped the group and holds the pipes: what was read so far stands.
        stdout_task.abort();
        stderr_task.abort();
    }

    let stderr = match stderr_buf.lock() {
        Ok(buf) => String::from_utf8_lossy(&buf).into_owned(),
        Err(_) => String::new(),
    };
    let last_message = command
        .last_message_file
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok());
    let reader = match reader.lock() {
        Ok(mut r) => std::mem::replace(&mut *r, StreamReader::new(spec.kind)),
        Err(_) => StreamReader::new(spec.kind),
    };
    let output = reader.finish(&stderr, last_message.as_deref());
    let output_cut = cut.lock().ok().and_then(|c| *c);
    let (failure, exit_code) = judge(&end, &output, &stderr, spec, output_cut, shared);
    Attempt {
        output,
        failure,
        exit_code,
        stderr,
        elapsed: started.elapsed(),
        output_cut,
    }
}

/// Why the attempt failed, if it did, and its exit code.
fn judge(
    end: &End,
    output: &crate::dispatch::output::RunOutput,
    stderr: &str,
    spec: &AgentSpec,
    output_cut: Option<u64>,
    shared: &Shared,
) -> (Option<Failure>, Option<i32>) {
    match end {
        End::Cancelled => (Some(Failure::Cancelled), None),
        End::TimedOut => (
            Some(Failure::TimedOut {
                after_s: spec.timeout.as_secs_f64(),
            }),
            None,
        ),
        End::NotRun(failure) => (Some(failure.clone()), None),
        End::Exited(status) => {
            use std::os::unix::process::ExitStatusExt;
            let code = status.code();
            let failure = if let Some(reported) = &output.error {
                Some(match code {
                    Some(c) if c != 0 && output.http_status.is_none() => {
                        failure::from_exit(c, stderr, Some(reported))
                    }
                    _ => failure::from_report(reported, output.http_status),
                })
            } else if let Some(code) = code.filter(|c| *c != 0) {
                Some(failure::from_exit(code, stderr, None))
            } else if let Some(signal) = status.signal() {
                Some(Failure::Signalled { signal })
            } else if output.text.trim().is_empty() {
                Some(match output_cut {
                    Some(_) => Failure::OutputOverLimit {
                        limit_bytes: shared.output_limit,
                    },
                    None => Failure::NoReview,
                })
            } else {
                None
            };
            (failure, code)
        }
    }
}

/// Gives the reader a piece of stdout; returns its tool calls, tokens and last tool after it.
fn feed(reader: &Mutex<StreamReader>, piece: &[u8]) -> Option<(u64, Option<u64>, Option<String>)> {
    let mut r = reader.lock().ok()?;
    r.feed_line(&String::from_utf8_lossy(piece));
    Some((
        r.total_tool_calls(),
        r.tokens_so_far(),
        r.last_tool().map(str::to_string),
    ))
}

/// Streams stdout: raw bytes to the bundle first, then each line to the reader, with live
/// counts as events. Beyond `limit` bytes nothing is kept; the pipe is still drained so the
/// agent is never blocked on a full pipe.
async fn read_stdout(
    stdout: Option<tokio::process::ChildStdout>,
    file: tokio::fs::File,
    reader: Arc<Mutex<StreamReader>>,
    cut: Arc<Mutex<Option<u64>>>,
    limit: u64,
    events: crate::dispatch::events::Emitter,
    agent: String,
) {
    let Some(stdout) = stdout else { return };
    let mut lines = BufReader::new(stdout);
    // Written through a buffer, flushed whenever the agent has nothing more for now: a slow
    // stream is on disk line by line, a flood costs one write per 64 KB, not one per line.
    let mut file = tokio::io::BufWriter::with_capacity(64 * 1024, file);
    let mut buf = Vec::with_capacity(8192);
    // A secret cut between two reads of a line with no end is still found.
    let mut redactor = redact::StreamRedactor::default();
    let mut kept: u64 = 0;
    let mut dropped: u64 = 0;
    let (mut calls, mut tokens) = (0u64, None::<u64>);
    loop {
        buf.clear();
        // A line is read in bounded pieces (8 MB, more than any event line a CLI writes): a
        // newline-free flood is cut, not buffered whole.
        let room = if kept >= limit {
            // Past the limit: drain in big pieces, keeping nothing.
            8 << 20
        } else {
            (limit - kept).min(8 << 20) as usize
        };
        let read = (&mut lines)
            .take(room as u64)
            .read_until(b'\n', &mut buf)
            .await;
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if kept >= limit {
            if dropped == 0 {
                events.agent(&agent, EventKind::OutputCut { limit_bytes: limit });
            }
            dropped += buf.len() as u64;
            continue;
        }
        kept += buf.len() as u64;
        // To disk first: the bundle keeps what the CLI said, byte for byte unless it holds a
        // secret (redacted) or bytes that are not UTF-8 in a line with one.
        // The reader gets the same redacted text, a whole line at a time (a line with no end
        // in pieces of what the redactor lets go), so a secret cut between two reads never
        // reaches the review text in halves.
        let ready = redactor.push(&buf);
        let _ = file.write_all(&ready).await;
        if lines.buffer().is_empty() {
            let _ = file.flush().await;
        }
        if ready.is_empty() {
            continue;
        }
        let Some((new_calls, new_tokens, tool)) = feed(&reader, &ready) else {
            continue;
        };
        if new_calls != calls {
            calls = new_calls;
            events.agent(
                &agent,
                EventKind::ToolCall {
                    name: tool.unwrap_or_default(),
                    total: calls,
                },
            );
        }
        if new_tokens != tokens {
            tokens = new_tokens;
            if let Some(total) = tokens {
                events.agent(&agent, EventKind::Tokens { total });
            }
        }
    }
    let rest = redactor.finish();
    let _ = file.write_all(&rest).await;
    let _ = file.flush().await;
    if !rest.is_empty() {
        feed(&reader, &rest);
    }
    if dropped > 0
        && let Ok(mut c) = cut.lock()
    {
        *c = Some(dropped);
    }
}

/// Keeps the last [`STDERR_KEEP`] bytes of stderr.
async fn read_stderr_tail(stderr: Option<tokio::process::ChildStderr>, buf: Arc<Mutex<Vec<u8>>>) {
    let Some(mut stderr) = stderr else { return };
    let mut chunk = [0u8; 8192];
    loop {
        match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if let Ok(mut buf) = buf.lock() {
                    buf.extend_from_slice(&chunk[..n]);
                    if buf.len() > STDERR_KEEP {
                        let cut = buf.len() - STDERR_KEEP;
                        buf.drain(..cut);
                    }
                }
            }
        }
    }
}

fn spawn_error(program: &str, kind: AgentKind, err: &std::io::Error) -> String {
    let program = crate::text::printable_line(program);
    if err.kind() == std::io::ErrorKind::NotFound {
        match kind.npm_package() {
            Some(pkg) => format!(
                "`{program}` was not found: install it with `npm install -g {pkg}` or set its command in the config"
            ),
            None => format!("`{program}` was not found: check its command in the config"),
        }
    } else if err.kind() == std::io::ErrorKind::PermissionDenied {
        format!("`{program}` could not be started (permission denied): make it executable")
    } else {
        format!("`{program}` could not be started: {err}")
    }
}
