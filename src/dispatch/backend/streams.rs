//! An agent process's standard streams while it runs: the brief fed to stdin, stdout streamed
//! to the bundle first (raw bytes, redacted) and then to the CLI's stream reader for live
//! counts, and the tail of stderr kept. At most `output_limit` bytes of stdout are kept; the
//! rest is drained and dropped, so an agent that prints 200 MB costs neither memory nor disk.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use super::Shared;
use super::process::DRAIN_GRACE;
use crate::dispatch::events::EventKind;
use crate::dispatch::output::StreamReader;
use crate::redact;
use crate::types::{AgentKind, AgentSpec};

/// How much of stderr is kept in memory (the tail).
const STDERR_KEEP: usize = 256 * 1024;

/// The tasks that feed the brief to the agent and read its stdout and stderr.
pub(super) struct Streams {
    stdin: tokio::task::JoinHandle<()>,
    stdout: tokio::task::JoinHandle<()>,
    stderr: tokio::task::JoinHandle<()>,
    reader: Arc<Mutex<StreamReader>>,
    cut: Arc<Mutex<Option<u64>>>,
    stderr_buf: Arc<Mutex<Vec<u8>>>,
}

impl Streams {
    /// Starts them: the brief on stdin, then EOF (a CLI that exits without reading it all is
    /// not an error here: its exit status says what happened); stdout to the bundle and the
    /// reader; the tail of stderr kept.
    pub(super) fn start(
        child: &mut tokio::process::Child,
        stdout_file: tokio::fs::File,
        shared: &Shared,
        spec: &AgentSpec,
    ) -> Streams {
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
        Streams {
            stdin: stdin_task,
            stdout: stdout_task,
            stderr: stderr_task,
            reader,
            cut,
            stderr_buf,
        }
    }

    /// Once the process is gone: waits a grace period for the readers, then takes the stderr
    /// tail, the stream reader and how much output was cut.
    pub(super) async fn finish(self, kind: AgentKind) -> (String, StreamReader, Option<u64>) {
        let Streams {
            stdin,
            mut stdout,
            mut stderr,
            reader,
            cut,
            stderr_buf,
        } = self;
        stdin.abort();
        let drained = tokio::time::timeout(DRAIN_GRACE, async {
            let _ = (&mut stdout).await;
            let _ = (&mut stderr).await;
        })
        .await;
        if drained.is_err() {
            // A process escaped the group and holds the pipes: what was read so far stands.
            stdout.abort();
            stderr.abort();
        }
        let stderr_text = match stderr_buf.lock() {
            Ok(buf) => String::from_utf8_lossy(&buf).into_owned(),
            Err(_) => String::new(),
        };
        let reader = match reader.lock() {
            Ok(mut r) => std::mem::replace(&mut *r, StreamReader::new(kind)),
            Err(_) => StreamReader::new(kind),
        };
        let output_cut = cut.lock().ok().and_then(|c| *c);
        (stderr_text, reader, output_cut)
    }
}

/// Gives the reader a piece of stdout; returns its tool calls, tokens and last tool after it.
fn feed(reader: &Mutex<StreamReader>, piece: &[u8]) -> Option<(u64, Option<u64>, Option<String>)> {
    let mut r = reader.lock().ok()?;
    r.feed_line(&String::from_utf8_lossy(piece));
    // A count no run could reach is not shown live either ([`crate::dispatch::numbers`]).
    let tokens = r
        .tokens_so_far()
        .filter(|t| *t <= crate::dispatch::numbers::MAX_TOKENS);
    Some((
        r.total_tool_calls(),
        tokens,
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
