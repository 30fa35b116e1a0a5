//! Runs one agent: its worktree, its process group, its timeout, its retries, its bundle.
//!
//! Each child is started in a process group of its own (`process_group(0)`), so killing the
//! group also kills what the CLI started (node workers, shells, MCP servers), and a Ctrl-C in
//! the terminal reaches deep-review only: agents are stopped by deep-review, on purpose, and
//! their worktrees removed. Nothing an agent does can fail another agent: every error ends as
//! a [`RawReview`] with a status and one sentence.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::time::Instant;

use super::agents::{AgentCommand, command_for};
use super::bundle::{self, AttemptRecord, MetaExtra};
use super::output::{RunOutput, StreamReader, one_sentence};
use super::progress::Progress;
use super::transient::transient_reason;
use super::worktree::Worktree;
use super::{AgentSpec, CancelToken};
use crate::text::duration_short as format_duration;
use crate::types::AgentKind;
use crate::types::{RawReview, RunStatus};

/// How much of stderr is kept in memory (the tail) and how much goes to the bundle.
const STDERR_KEEP: usize = 256 * 1024;
const STDERR_TAIL: usize = 8 * 1024;
/// How long the output readers may lag behind the process's exit before they are abandoned
/// (a process that left the group could hold the pipe open forever).
const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// What every agent of one dispatch shares.
pub struct RunContext {
    pub repo: PathBuf,
    /// Full sha of the commit under review.
    pub head: String,
    pub brief: Arc<String>,
    pub bundle_dir: PathBuf,
    /// Where worktrees go (a temporary directory).
    pub work_root: PathBuf,
    pub progress: Arc<Progress>,
    pub cancel: CancelToken,
    pub max_retries: u32,
    pub retry_backoff: Duration,
}

/// How one attempt ended.
enum End {
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
    /// The process could not be started or waited for.
    NotRun(String),
}

struct Attempt {
    end: End,
    output: RunOutput,
    stderr: String,
    elapsed: Duration,
}

/// Runs one agent to the end and writes its bundle. Never fails: a failure is in the result.
pub async fn run_agent(ctx: Arc<RunContext>, spec: AgentSpec, dir_name: String) -> RawReview {
    let kind = spec.kind;
    let agent_dir = bundle::agent_dir(&ctx.bundle_dir, &dir_name);
    let mut review = super::not_yet_run(&spec);
    let mut extra = MetaExtra {
        head: Some(ctx.head.clone()),
        ..MetaExtra::default()
    };

    if let Err(err) = std::fs::create_dir_all(&agent_dir) {
        review.error = Some(format!(
            "could not create the bundle directory {}: {err}",
            agent_dir.display()
        ));
        ctx.progress.finished(&review);
        return review;
    }

    if ctx.cancel.is_cancelled() {
        review.status = RunStatus::Cancelled;
        review.error = Some("cancelled before it started".into());
        finish(&ctx, &agent_dir, &mut review, &extra);
        return review;
    }

    // The worktree: made off the async threads (git can take a moment on a big repo).
    let wt_path = ctx.work_root.join(&dir_name);
    let (repo, head) = (ctx.repo.clone(), ctx.head.clone());
    let setup_started = Instant::now();
    let worktree = tokio::task::spawn_blocking(move || Worktree::add(&repo, &head, &wt_path)).await;
    extra.worktree_setup_s = Some(setup_started.elapsed().as_secs_f64());
    let worktree = match worktree {
        Ok(Ok(wt)) => wt,
        Ok(Err(err)) => {
            review.error = Some(one_sentence(&format!(
                "could not create its worktree: {err:#}"
            )));
            finish(&ctx, &agent_dir, &mut review, &extra);
            return review;
        }
        Err(err) => {
            review.error = Some(format!("could not create its worktree: {err}"));
            finish(&ctx, &agent_dir, &mut review, &extra);
            return review;
        }
    };

    let command = command_for(&spec, worktree.path(), &ctx.bundle_dir);
    if let Err(err) = bundle::write_command(&agent_dir, &command) {
        review.error = Some(one_sentence(&format!("{err:#}")));
        cleanup_worktree(worktree, &mut review).await;
        finish(&ctx, &agent_dir, &mut review, &extra);
        return review;
    }

    ctx.progress.started(&spec.name);
    // The agent's own time starts here: the worktree is ready, the CLI starts now.
    let started = Instant::now();
    let deadline = started + spec.timeout;
    let mut attempt_no = 0u32;
    let last = loop {
        attempt_no += 1;
        if attempt_no > 1 {
            bundle::keep_attempt_stdout(&agent_dir, attempt_no - 1);
            if let Some(path) = &command.last_message_file {
                let _ = std::fs::remove_file(path);
            }
        }
        let attempt = run_attempt(&ctx, &spec, kind, &command, &agent_dir, deadline).await;
        let (status, error) = judge(&attempt, &spec);
        let mut record = AttemptRecord {
            duration_s: attempt.elapsed.as_secs_f64(),
            exit_code: exit_code(&attempt.end),
            outcome: status_name(status).into(),
            error: error.clone(),
            retried_because: None,
        };
        if status == RunStatus::Failed && attempt_no <= ctx.max_retries {
            let haystack = format!("{}\n{}", attempt.stderr, error.as_deref().unwrap_or(""));
            if let Some(reason) = transient_reason(&haystack) {
                let wait = ctx.retry_backoff * 2u32.saturating_pow(attempt_no - 1);
                if Instant::now() + wait < deadline {
                    record.retried_because = Some(reason.clone());
                    extra.attempts.push(record);
                    review.retries += 1;
                    ctx.progress
                        .retry(&spec.name, attempt_no, ctx.max_retries, &reason, wait);
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => continue,
                        _ = ctx.cancel.cancelled() => {
                            break (attempt, RunStatus::Cancelled, Some("cancelled while waiting to retry".to_string()));
                        }
                    }
                }
            }
        }
        extra.attempts.push(record);
        break (attempt, status, error);
    };

    let (attempt, status, error) = last;
    review.status = status;
    review.error = error;
    review.exit_code = exit_code(&attempt.end);
    review.stderr_tail = tail(&attempt.stderr, STDERR_TAIL);
    extra.cli_duration_s = attempt.output.duration_s;
    let RunOutput {
        text,
        tokens,
        cost_usd,
        tool_calls,
        ..
    } = attempt.output;
    review.text = text;
    review.tokens = tokens;
    review.cost_usd = cost_usd;
    review.tool_calls = tool_calls;
    review.duration_s = started.elapsed().as_secs_f64();

    let cleanup_started = Instant::now();
    cleanup_worktree(worktree, &mut review).await;
    extra.worktree_cleanup_s = Some(cleanup_started.elapsed().as_secs_f64());
    finish(&ctx, &agent_dir, &mut review, &extra);
    review
}

/// Records what the agent changed in its worktree, then removes it.
async fn cleanup_worktree(worktree: Worktree, review: &mut RawReview) {
    let result = tokio::task::spawn_blocking(move || {
        let changes = worktree.changes();
        let removed = worktree.remove();
        (changes, removed)
    })
    .await;
    match result {
        Ok((changes, removed)) => {
            review.worktree_changes = changes;
            if let Err(err) = removed {
                review
                    .worktree_changes
                    .push(format!("the worktree could not be removed: {err:#}"));
            }
        }
        Err(err) => review
            .worktree_changes
            .push(format!("the worktree could not be checked: {err}")),
    }
}

/// Writes the bundle's result files and reports the end. A bundle write error is recorded in
/// the review (the review itself is still returned to the caller).
fn finish(ctx: &RunContext, dir: &Path, review: &mut RawReview, extra: &MetaExtra) {
    if let Err(err) = bundle::write_results(dir, review, extra) {
        let note = format!("the run bundle could not be written: {err:#}");
        review.error = Some(match review.error.take() {
            Some(e) => format!("{e}; {note}"),
            None => note,
        });
    }
    ctx.progress.finished(review);
}

/// Decides the status of an attempt and its one-sentence error.
fn judge(attempt: &Attempt, spec: &AgentSpec) -> (RunStatus, Option<String>) {
    match &attempt.end {
        End::Cancelled => (RunStatus::Cancelled, Some("cancelled by the user".into())),
        End::TimedOut => (
            RunStatus::TimedOut,
            Some(format!(
                "timed out after {} (the limit for this agent)",
                format_duration(spec.timeout)
            )),
        ),
        End::NotRun(msg) => (RunStatus::Failed, Some(msg.clone())),
        End::Exited(status) => {
            if let Some(err) = &attempt.output.error {
                return (RunStatus::Failed, Some(err.clone()));
            }
            if !status.success() {
                let how = match status.code() {
                    Some(code) => format!("exited with code {code}"),
                    None => "was killed by a signal".to_string(),
                };
                let why = last_line(&attempt.stderr)
                    .map(|l| format!("{how}: {l}"))
                    .unwrap_or(how);
                return (RunStatus::Failed, Some(one_sentence(&why)));
            }
            if attempt.output.text.trim().is_empty() {
                return (
                    RunStatus::Failed,
                    Some("it exited normally but wrote no review text".into()),
                );
            }
            (RunStatus::Ok, None)
        }
    }
}

fn exit_code(end: &End) -> Option<i32> {
    match end {
        End::Exited(status) => status.code(),
        _ => None,
    }
}

fn status_name(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Ok => "ok",
        RunStatus::Failed => "failed",
        RunStatus::TimedOut => "timed_out",
        RunStatus::Cancelled => "cancelled",
    }
}

/// Kills a whole process group. Harmless when it is already gone.
fn kill_group(pgid: Option<u32>) {
    if let Some(pgid) = pgid.and_then(|p| i32::try_from(p).ok())
        && pgid > 1
    {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory involved.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// Kills the group when dropped: covers a dispatch future that is dropped mid-run.
struct GroupGuard(Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        kill_group(self.0);
    }
}

/// One run of the CLI: spawn in its own group, feed the brief, stream stdout to the bundle
/// and the reader, and stop it at the deadline or on cancel.
async fn run_attempt(
    ctx: &RunContext,
    spec: &AgentSpec,
    kind: AgentKind,
    command: &AgentCommand,
    agent_dir: &Path,
    deadline: Instant,
) -> Attempt {
    let started = Instant::now();
    if ctx.cancel.is_cancelled() {
        return Attempt {
            end: End::Cancelled,
            output: RunOutput::default(),
            stderr: String::new(),
            elapsed: Duration::ZERO,
        };
    }
    let not_run = |msg: String| Attempt {
        end: End::NotRun(msg),
        output: RunOutput::default(),
        stderr: String::new(),
        elapsed: started.elapsed(),
    };
    let stdout_path = agent_dir.join(bundle::STDOUT_FILE);
    let mut stdout_file = match tokio::fs::File::create(&stdout_path).await {
        Ok(f) => f,
        Err(err) => return not_run(format!("could not create {}: {err}", stdout_path.display())),
    };

    let mut cmd = tokio::process::Command::new(&command.program);
    cmd.args(&command.args)
        .current_dir(&command.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    for key in &command.env_remove {
        cmd.env_remove(key);
    }
    cmd.envs(&command.env);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(err) => return not_run(spawn_error(&command.program, kind, &err)),
    };
    let guard = GroupGuard(child.id());

    // The brief on stdin, then EOF. A CLI that exits without reading it all is not an error
    // here: its exit status says what happened.
    let stdin = child.stdin.take();
    let brief = Arc::clone(&ctx.brief);
    let stdin_task = tokio::spawn(async move {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(brief.as_bytes()).await;
            let _ = stdin.shutdown().await;
        }
    });

    let reader = Arc::new(Mutex::new(StreamReader::new(kind)));
    let stdout = child.stdout.take();
    let stdout_task = {
        let reader = Arc::clone(&reader);
        let progress = Arc::clone(&ctx.progress);
        let name = spec.name.clone();
        tokio::spawn(async move {
            let Some(stdout) = stdout else { return };
            let mut lines = BufReader::new(stdout);
            let mut buf = Vec::with_capacity(8192);
            loop {
                buf.clear();
                match lines.read_until(b'\n', &mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                // Raw bytes to disk first: the bundle keeps exactly what the CLI said.
                let _ = stdout_file.write_all(&buf).await;
                let _ = stdout_file.flush().await;
                let line = String::from_utf8_lossy(&buf);
                let (calls, tokens) = match reader.lock() {
                    Ok(mut r) => {
                        r.feed_line(&line);
                        (r.total_tool_calls(), r.tokens_so_far())
                    }
                    Err(_) => continue,
                };
                progress.update(&name, calls, tokens);
            }
            let _ = stdout_file.flush().await;
        })
    };

    let stderr = child.stderr.take();
    let stderr_buf = Arc::new(Mutex::new(Vec::<u8>::new()));
    let stderr_task = {
        let stderr_buf = Arc::clone(&stderr_buf);
        tokio::spawn(async move {
            let Some(mut stderr) = stderr else { return };
            let mut chunk = [0u8; 8192];
            loop {
                match stderr.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if let Ok(mut buf) = stderr_buf.lock() {
                            buf.extend_from_slice(&chunk[..n]);
                            if buf.len() > STDERR_KEEP {
                                let cut = buf.len() - STDERR_KEEP;
                                buf.drain(..cut);
                            }
                        }
                    }
                }
            }
        })
    };

    let end = tokio::select! {
        status = child.wait() => match status {
            Ok(status) => End::Exited(status),
            Err(err) => End::NotRun(format!("could not wait for `{}`: {err}", command.program)),
        },
        _ = tokio::time::sleep_until(deadline) => End::TimedOut,
        _ = ctx.cancel.cancelled() => End::Cancelled,
    };
    // Whatever happened, nothing of this run outlives it.
    kill_group(guard.0);
    if !matches!(end, End::Exited(_)) {
        let _ = tokio::time::timeout(DRAIN_GRACE, child.wait()).await;
    }
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
    drop(guard);

    let stderr = match stderr_buf.lock() {
        Ok(buf) => String::from_utf8_lossy(&buf).into_owned(),
        Err(_) => String::new(),
    };
    let last_message = command
        .last_message_file
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok());
    let reader = match reader.lock() {
        Ok(mut r) => std::mem::replace(&mut *r, StreamReader::new(kind)),
        Err(_) => StreamReader::new(kind),
    };
    let output = reader.finish(&stderr, last_message.as_deref());
    Attempt {
        end,
        output,
        stderr,
        elapsed: started.elapsed(),
    }
}

fn spawn_error(program: &str, kind: AgentKind, err: &std::io::Error) -> String {
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

fn last_line(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// The last `max` bytes of a text, cut at a line start when one is near.
fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let rest = &text[start..];
    match rest.find('\n') {
        Some(nl) if nl < 200 => rest[nl + 1..].to_string(),
        _ => rest.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_end_from_a_line_start() {
        let text = format!("{}\nlast line\n", "x".repeat(100));
        assert_eq!(tail(&text, 15), "last line\n");
        assert_eq!(tail("short", 15), "short");
    }
}
