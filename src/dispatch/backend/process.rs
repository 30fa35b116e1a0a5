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
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use super::commands::{AgentCommand, command_for};
use super::streams::Streams;
use super::{Attempt, AttemptRequest, Backend, BoxFuture, Session, Shared};
use crate::bundle;
use crate::dispatch::sandbox::launch::{self, AgentSandbox};
use crate::dispatch::worktree::Worktree;
use crate::dispatch::{agent_file, environment, failure, limit_hit, sandbox};
use crate::redact;
use crate::types::{AgentKind, AgentSpec, Failure};

/// How long a stopped agent gets to exit after TERM before its group is killed.
const TERM_GRACE: Duration = Duration::from_secs(3);
/// How long the output readers may lag behind the process's exit before they are abandoned
/// (a process that left the group could hold the pipe open forever).
pub(super) const DRAIN_GRACE: Duration = Duration::from_secs(5);

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
            sandbox::watch::register(pgid);
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
            sandbox::watch::unregister(pgid);
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
                trusted: shared.work_root.clone(),
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
    /// The run's work directory, which deep-review made and the agent cannot replace: files
    /// the agent wrote are read from it without following a link ([`agent_file`]).
    trusted: std::path::PathBuf,
    sandbox: AgentSandbox,
}

/// Where an attempt's agent writes its own files, and the directory they are read from.
#[derive(Clone, Copy)]
struct AgentPlaces<'a> {
    scratch: &'a std::path::Path,
    trusted: &'a std::path::Path,
}

/// The most of a CLI's last-message file read: a review is a few hundred KB at most.
const LAST_MESSAGE_CAP: u64 = 8 * 1024 * 1024;

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
                let relative = path.strip_prefix(&self.trusted).unwrap_or(path);
                let _ = agent_file::remove(&self.trusted, relative);
            }
            let places = AgentPlaces {
                scratch: &self.scratch,
                trusted: &self.trusted,
            };
            run_attempt(&self.command, places, &self.sandbox, request).await
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
    places: AgentPlaces<'_>,
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
    let spawned = match spawn(command, places.scratch, sandbox, spec, agent_dir).await {
        Ok(spawned) => spawned,
        Err(failure) => {
            return Attempt {
                elapsed: started.elapsed(),
                ..Attempt::not_run(failure)
            };
        }
    };
    let Spawned {
        mut child,
        stdout_file,
        network,
    } = spawned;
    // The child started a session of its own (setsid): its group is its pid.
    let group = Group::new(child.id());
    let streams = Streams::start(&mut child, stdout_file, shared, spec);
    // The agent's network: served while it runs, stopped with it.
    let serving = sandbox.serve(network).await;
    let end = wait_or_stop(&mut child, &group, deadline, shared, &command.program).await;
    // Whatever happened, nothing of this run outlives it.
    drop(group);
    drop(serving);
    let (stderr, reader, output_cut) = streams.finish(spec.kind).await;
    let (last_message, refused) = read_last_message(command, places, agent_dir);
    let mut output = reader.finish(&stderr, last_message.as_deref());
    output.notes.extend(refused);
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

/// Reads the CLI's last-message file (an agent-written file: [`agent_file`]) and keeps it in
/// the bundle beside the raw output, redacted. Returns its text, or the note saying why it was
/// not read.
fn read_last_message(
    command: &AgentCommand,
    places: AgentPlaces<'_>,
    agent_dir: &std::path::Path,
) -> (Option<String>, Option<String>) {
    let Some(path) = &command.last_message_file else {
        return (None, None);
    };
    let relative = path.strip_prefix(places.trusted).unwrap_or(path);
    match agent_file::read_text(places.trusted, relative, LAST_MESSAGE_CAP) {
        Ok(text) => {
            let _ = std::fs::write(
                agent_dir.join("last-message.txt"),
                redact::redact(&text).as_bytes(),
            );
            (Some(text), None)
        }
        Err(refused) => (None, refused.note().map(str::to_string)),
    }
}

/// A started agent: the process, the bundle file its stdout goes to, and the network to serve.
struct Spawned {
    child: tokio::process::Child,
    stdout_file: tokio::fs::File,
    network: launch::Network,
}

/// Starts `command` in its sandbox, with the allowed environment, in a group of its own.
async fn spawn(
    command: &AgentCommand,
    scratch: &std::path::Path,
    sandbox: &AgentSandbox,
    spec: &AgentSpec,
    agent_dir: &std::path::Path,
) -> Result<Spawned, Failure> {
    let stdout_path = agent_dir.join(bundle::STDOUT_FILE);
    let stdout_file =
        tokio::fs::File::create(&stdout_path)
            .await
            .map_err(|err| Failure::CouldNotStart {
                reason: format!("could not create {}: {err}", stdout_path.display()),
            })?;
    // A program that is not there fails here, with how to install it: inside the sandbox the
    // helper could only say that its `exec` failed.
    if let Err(err) = std::fs::metadata(&command.program) {
        return Err(Failure::CouldNotStart {
            reason: spawn_error(&command.program, spec.kind, &err),
        });
    }
    let mut set = command.env.clone();
    set.insert("TMPDIR".into(), scratch.display().to_string());
    set.extend(sandbox.home_env().clone());
    let env = environment::agent_env(spec, std::env::vars_os(), &set);
    let launch = sandbox
        .launch(&command.program, &command.args, &command.cwd, env)
        .await
        .map_err(|err| Failure::CouldNotStart {
            reason: format!("could not set up its sandbox: {err}"),
        })?;
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
    let child = cmd.spawn().map_err(|err| Failure::CouldNotStart {
        reason: spawn_error(&command.program, spec.kind, &err),
    })?;
    Ok(Spawned {
        child,
        stdout_file,
        network: launch.network,
    })
}

/// Waits for the agent to exit, its deadline or the user's cancel; a stop on purpose is TERM
/// first, so the CLI can flush what it has, then KILL.
async fn wait_or_stop(
    child: &mut tokio::process::Child,
    group: &Group,
    deadline: Instant,
    shared: &Shared,
    program: &str,
) -> End {
    let end = tokio::select! {
        status = child.wait() => match status {
            Ok(status) => End::Exited(status),
            Err(err) => End::NotRun(Failure::CouldNotStart {
                reason: format!("could not wait for `{program}`: {err}"),
            }),
        },
        _ = tokio::time::sleep_until(deadline) => End::TimedOut,
        _ = shared.cancel.cancelled() => End::Cancelled,
    };
    if matches!(end, End::TimedOut | End::Cancelled) {
        group.signal(libc::SIGTERM);
        if tokio::time::timeout(TERM_GRACE, child.wait())
            .await
            .is_err()
        {
            group.signal(libc::SIGKILL);
            let _ = tokio::time::timeout(DRAIN_GRACE, child.wait()).await;
        }
    }
    end
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
            } else if let Some(hit) = (code != Some(0))
                .then(|| limit_hit::over_limit(code, status.signal(), stderr, &spec.limits))
                .flatten()
            {
                Some(hit)
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
