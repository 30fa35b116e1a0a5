//! Dispatch stage: the brief to every agent at once, each in its own read-only worktree.
//!
//! [`dispatch`] starts every agent together (so the whole run takes about as long as the
//! slowest agent), each in a detached worktree of the head commit, and returns one
//! [`RawReview`] per agent in the order given, whatever happened to the others. Ctrl-C or
//! SIGTERM stops every agent, removes the worktrees and returns `cancelled: true`: the caller
//! exits 130.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::types::{RawReview, RunStatus};

pub mod agents;
pub mod bundle;
pub mod output;
pub mod progress;
pub mod runner;
pub mod transient;
pub mod worktree;

pub use crate::types::{AgentKind, AgentSpec, DEFAULT_TIMEOUT};
pub use agents::{AgentCommand, command_for};
pub use progress::ProgressMode;

/// What a dispatch returns.
#[derive(Debug, Clone, PartialEq)]
pub struct DispatchOutcome {
    /// One per agent, in the order the agents were given.
    pub reviews: Vec<RawReview>,
    /// Ctrl-C, SIGTERM or the cancel token stopped the run; the caller exits 130.
    pub cancelled: bool,
    /// The whole dispatch, from the first worktree to the last cleanup.
    pub wall_clock_s: f64,
}

/// A cancel signal shared by every agent of a dispatch. Cloning shares it.
#[derive(Debug, Clone)]
pub struct CancelToken(Arc<watch::Sender<bool>>);

impl Default for CancelToken {
    fn default() -> Self {
        CancelToken::new()
    }
}

impl CancelToken {
    pub fn new() -> Self {
        CancelToken(Arc::new(watch::Sender::new(false)))
    }

    /// Stops every agent of the dispatch that holds this token.
    pub fn cancel(&self) {
        self.0.send_replace(true);
    }

    pub fn is_cancelled(&self) -> bool {
        *self.0.borrow()
    }

    /// Completes once [`cancel`](Self::cancel) was called.
    pub async fn cancelled(&self) {
        let mut rx = self.0.subscribe();
        let _ = rx.wait_for(|cancelled| *cancelled).await;
    }
}

/// Knobs of [`dispatch_with`] that the CLI leaves at their defaults.
#[derive(Debug, Clone)]
pub struct DispatchOptions {
    /// Retries after a transient failure (HTTP 429/5xx, overloaded, network); at most this many.
    pub max_retries: u32,
    /// Wait before the first retry; doubled for each next one.
    pub retry_backoff: Duration,
    /// Stops the dispatch when cancelled.
    pub cancel: CancelToken,
}

impl Default for DispatchOptions {
    fn default() -> Self {
        DispatchOptions {
            max_retries: 2,
            retry_backoff: Duration::from_secs(5),
            cancel: CancelToken::new(),
        }
    }
}

/// Runs every agent at once on `head` of `repo` with `brief` on stdin, writes each one's files
/// under `bundle_dir/<agent>/`, and stops everything on Ctrl-C or SIGTERM.
pub async fn dispatch(
    repo: &Path,
    head: &str,
    brief: &str,
    agents: &[AgentSpec],
    bundle_dir: &Path,
    progress: ProgressMode,
) -> DispatchOutcome {
    let options = DispatchOptions::default();
    // Handlers are installed here, before the first worktree exists, so no Ctrl-C can slip
    // through to the default action (exit without cleanup).
    let watcher = tokio::spawn(cancel_on_signal(options.cancel.clone(), install_signals()));
    let outcome = dispatch_with(repo, head, brief, agents, bundle_dir, progress, &options).await;
    watcher.abort();
    outcome
}

/// [`dispatch`] for synchronous callers: builds a runtime and blocks on it.
pub fn dispatch_blocking(
    repo: &Path,
    head: &str,
    brief: &str,
    agents: &[AgentSpec],
    bundle_dir: &Path,
    progress: ProgressMode,
) -> anyhow::Result<DispatchOutcome> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|err| anyhow::anyhow!("could not start the async runtime: {err}"))?;
    Ok(runtime.block_on(dispatch(repo, head, brief, agents, bundle_dir, progress)))
}

/// [`dispatch`] with explicit options and no signal handling of its own: cancel through
/// `options.cancel`.
pub async fn dispatch_with(
    repo: &Path,
    head: &str,
    brief: &str,
    agents: &[AgentSpec],
    bundle_dir: &Path,
    progress: ProgressMode,
    options: &DispatchOptions,
) -> DispatchOutcome {
    let started = Instant::now();
    let names: Vec<String> = agents.iter().map(|a| a.name.clone()).collect();
    let progress = Arc::new(progress::Progress::new(progress, &names));

    // Problems shared by every agent fail every agent, each with the reason.
    let shared = prepare(repo, head, bundle_dir);
    let (head_sha, work_root) = match shared {
        Ok(ok) => ok,
        Err(reason) => {
            let reviews = agents
                .iter()
                .map(|spec| failed(spec, reason.clone()))
                .collect::<Vec<_>>();
            for r in &reviews {
                progress.finished(r);
            }
            progress.done();
            return DispatchOutcome {
                reviews,
                cancelled: options.cancel.is_cancelled(),
                wall_clock_s: started.elapsed().as_secs_f64(),
            };
        }
    };

    let ctx = Arc::new(runner::RunContext {
        repo: repo.to_path_buf(),
        head: head_sha,
        brief: Arc::new(brief.to_string()),
        bundle_dir: bundle_dir.to_path_buf(),
        work_root: work_root.path().to_path_buf(),
        progress: Arc::clone(&progress),
        cancel: options.cancel.clone(),
        max_retries: options.max_retries,
        retry_backoff: options.retry_backoff,
    });

    let cancel_note = {
        let cancel = options.cancel.clone();
        let progress = Arc::clone(&progress);
        tokio::spawn(async move {
            cancel.cancelled().await;
            progress.cancelling();
        })
    };

    let mut seen = HashSet::new();
    let mut slots: Vec<Result<tokio::task::JoinHandle<RawReview>, RawReview>> = Vec::new();
    for spec in agents {
        let dir_name = agents::safe_name(&spec.name);
        if !seen.insert(dir_name.clone()) {
            let r = failed(
                spec,
                format!(
                    "agent `{}` is listed twice: give each agent its own name",
                    spec.name
                ),
            );
            progress.finished(&r);
            slots.push(Err(r));
            continue;
        }
        let task = runner::run_agent(Arc::clone(&ctx), spec.clone(), dir_name);
        slots.push(Ok(tokio::spawn(task)));
    }

    let mut reviews = Vec::with_capacity(slots.len());
    for (slot, spec) in slots.into_iter().zip(agents) {
        let review = match slot {
            Ok(handle) => match handle.await {
                Ok(review) => review,
                Err(err) => failed(spec, format!("its run stopped unexpectedly: {err}")),
            },
            Err(review) => review,
        };
        reviews.push(review);
    }
    cancel_note.abort();
    drop(ctx);
    // Every worktree is gone by now; the temporary directory that held them goes too.
    let _ = work_root.close();
    progress.done();
    DispatchOutcome {
        reviews,
        cancelled: options.cancel.is_cancelled(),
        wall_clock_s: started.elapsed().as_secs_f64(),
    }
}

/// Resolves the head commit, creates the bundle directory and the worktrees' temporary home.
fn prepare(
    repo: &Path,
    head: &str,
    bundle_dir: &Path,
) -> Result<(String, tempfile::TempDir), String> {
    let sha = crate::git::resolve_commit(repo, head).map_err(|e| format!("{e:#}"))?;
    std::fs::create_dir_all(bundle_dir).map_err(|e| {
        format!(
            "could not create the run bundle directory {}: {e}",
            bundle_dir.display()
        )
    })?;
    let work_root = tempfile::Builder::new()
        .prefix("deep-review-")
        .tempdir()
        .map_err(|e| format!("could not create a temporary directory for the worktrees: {e}"))?;
    Ok((sha, work_root))
}

fn failed(spec: &AgentSpec, error: String) -> RawReview {
    RawReview {
        error: Some(error),
        ..not_yet_run(spec)
    }
}

/// The record of an agent before its run: failed until the run says otherwise, so an agent
/// that never got to run is reported as such.
pub(crate) fn not_yet_run(spec: &AgentSpec) -> RawReview {
    RawReview {
        agent: spec.name.clone(),
        display_name: Some(spec.display.clone()).filter(|d| !d.is_empty()),
        model: spec.model.clone(),
        effort: spec.effort.clone(),
        status: RunStatus::Failed,
        text: String::new(),
        exit_code: None,
        duration_s: 0.0,
        tokens: None,
        cost_usd: None,
        tool_calls: BTreeMap::new(),
        stderr_tail: String::new(),
        error: None,
        retries: 0,
        worktree_changes: Vec::new(),
    }
}

type Signals = (
    Option<tokio::signal::unix::Signal>,
    Option<tokio::signal::unix::Signal>,
);

/// SIGINT and SIGTERM streams; `None` for one that could not be installed.
fn install_signals() -> Signals {
    use tokio::signal::unix::{SignalKind, signal};
    (
        signal(SignalKind::interrupt()).ok(),
        signal(SignalKind::terminate()).ok(),
    )
}

/// Cancels on the first Ctrl-C (SIGINT) or SIGTERM.
async fn cancel_on_signal(cancel: CancelToken, (int, term): Signals) {
    async fn next(sig: Option<tokio::signal::unix::Signal>) {
        match sig {
            Some(mut sig) => {
                sig.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    }
    tokio::select! {
        _ = next(int) => {}
        _ = next(term) => {}
    }
    cancel.cancel();
}
