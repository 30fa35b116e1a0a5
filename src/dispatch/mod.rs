//! Dispatch stage: the brief to every reviewer at once.
//!
//! ```text
//! dispatch ── supervisor (per reviewer: deadline, retries, cancellation, bundle, events)
//!               └── backend (how one attempt runs: backend::process for local CLIs)
//!          ── events ──► progress (live or plain lines), events.jsonl, any other sink
//! ```
//!
//! [`dispatch`] starts every reviewer together (so the whole run takes about as long as the
//! slowest one) and returns one [`RawReview`] per reviewer in the order given, whatever
//! happened to the others. The first Ctrl-C (SIGINT), SIGTERM, SIGHUP (the terminal closed) or
//! SIGQUIT stops every reviewer (TERM, a grace period, KILL), removes the checkouts and returns
//! `cancelled: true`: the caller exits 130. A second one kills every agent at once and exits.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub mod agent_file;
pub mod backend;
pub mod budget;
pub mod descriptors;
pub mod environment;
pub mod events;
pub mod failure;
pub mod limit_hit;
pub mod network;
pub mod numbers;
pub mod output;
pub mod progress;
pub mod sandbox;
pub mod stale;
pub mod supervisor;
pub mod worktree;

pub use crate::types::{AgentKind, AgentSpec, DEFAULT_TIMEOUT};
pub use backend::commands::{AgentCommand, command_for};
pub use events::{Event, EventKind, EventSink};
pub use progress::ProgressMode;
pub use tokio_util::sync::CancellationToken as CancelToken;

use crate::types::{Failure, RawReview};
use backend::Shared;
use events::{Emitter, JsonlSink};

/// The most output kept per agent attempt unless configured otherwise: a review is a few
/// hundred KB of events at most; an agent that writes more is looping.
pub const DEFAULT_OUTPUT_LIMIT: u64 = 20 * 1024 * 1024;

/// What a dispatch returns.
#[derive(Debug, Clone, PartialEq)]
pub struct DispatchOutcome {
    /// One per agent, in the order the agents were given.
    pub reviews: Vec<RawReview>,
    /// A signal or the cancel token stopped the run; the caller exits 130.
    pub cancelled: bool,
    /// The whole dispatch, from the first checkout to the last cleanup.
    pub wall_clock_s: f64,
    /// The agents' shared checkout, kept when asked ([`DispatchOptions::keep_checkout`]) for
    /// verification to read; removed when dropped.
    pub checkout: Option<KeptCheckout>,
}

/// The shared checkout of a dispatch, kept after the agents ended: a checkout of the head
/// that deep-review made and no agent could write (they ran in their sandboxes), which
/// verification reads instead of inflating blobs. Dropping it removes it and its temporary
/// directory.
#[derive(Debug, Clone)]
pub struct KeptCheckout(Arc<KeptParts>);

#[derive(Debug)]
struct KeptParts {
    // Dropped in this order: the checkout, then the directory that held it.
    worktree: worktree::Worktree,
    _work_root: stale::WorkRoot,
}

impl KeptCheckout {
    pub fn path(&self) -> &Path {
        self.0.worktree.path()
    }
}

impl PartialEq for KeptCheckout {
    fn eq(&self, other: &Self) -> bool {
        self.path() == other.path()
    }
}

/// Knobs of [`dispatch_with`] that the CLI leaves at their defaults.
#[derive(Clone)]
pub struct DispatchOptions {
    /// Retries after a transient failure (rate limit, server error, network); at most this many.
    pub max_retries: u32,
    /// Wait before the first retry when the provider does not say; doubled for each next one.
    pub retry_backoff: Duration,
    /// Stops the dispatch when cancelled.
    pub cancel: CancelToken,
    /// The most bytes of output kept per attempt ([`DEFAULT_OUTPUT_LIMIT`]).
    pub output_limit: u64,
    /// Sinks that get every event besides the progress display and `events.jsonl`.
    pub sinks: Vec<Arc<dyn EventSink>>,
    /// The OS sandbox agents run under ([`sandbox`]): the strongest this machine has by
    /// default.
    pub sandbox: sandbox::Mode,
    /// deep-review's own executable, run inside bwrap as the sandbox's helper: the running
    /// program when it is deep-review. A program that calls the library must name it, or its
    /// agents get Landlock alone.
    pub sandbox_helper: Option<std::path::PathBuf>,
    /// Prompts of their own by agent name (a model API's packed prompt); the rest get the brief.
    pub prompts: BTreeMap<String, Arc<String>>,
    /// Installs dispatch's own signal handling for its duration (the library's default); off
    /// when the caller watches signals for the whole run ([`crate::pipeline::interrupt`]).
    pub handle_signals: bool,
    /// When every agent must have stopped, whatever its own timeout (the run's deadline less
    /// the time its reviews take to read).
    pub deadline: Option<std::time::Instant>,
    /// Keep the agents' shared checkout after they end, unchanged, for verification
    /// ([`DispatchOutcome::checkout`]); when one changed, it is removed all the same.
    pub keep_checkout: bool,
    /// The run's cost meter (`--budget-usd`), shared by every dispatch of the run.
    pub meter: Arc<budget::CostMeter>,
    /// Prices that turn tokens into dollars.
    pub prices: Arc<crate::cost::PriceTable>,
    /// Counts this dispatch's spending apart in the meter (`synthesis:` for the synthesizer).
    pub meter_scope: String,
}

impl Default for DispatchOptions {
    fn default() -> Self {
        DispatchOptions {
            max_retries: 2,
            retry_backoff: Duration::from_secs(5),
            cancel: CancelToken::new(),
            output_limit: DEFAULT_OUTPUT_LIMIT,
            sinks: Vec::new(),
            sandbox: sandbox::Mode::Auto,
            sandbox_helper: sandbox::default_helper(),
            handle_signals: true,
            deadline: None,
            keep_checkout: false,
            prompts: BTreeMap::new(),
            meter: budget::CostMeter::unlimited(),
            prices: Arc::new(crate::cost::PriceTable::default()),
            meter_scope: String::new(),
        }
    }
}

/// Runs every agent at once on `head` of `repo` with `brief` on stdin, writes each one's files
/// under `bundle_dir/<agent>/`, and stops everything on a signal (see the module doc).
pub async fn dispatch(
    repo: &Path,
    head: &str,
    brief: &str,
    agents: &[AgentSpec],
    bundle_dir: &Path,
    progress: ProgressMode,
) -> DispatchOutcome {
    dispatch_handling_signals(
        repo,
        head,
        brief,
        agents,
        bundle_dir,
        progress,
        DispatchOptions::default(),
    )
    .await
}

/// [`dispatch_with`] with the signal handling of [`dispatch`].
pub async fn dispatch_handling_signals(
    repo: &Path,
    head: &str,
    brief: &str,
    agents: &[AgentSpec],
    bundle_dir: &Path,
    progress: ProgressMode,
    options: DispatchOptions,
) -> DispatchOutcome {
    if !options.handle_signals {
        return dispatch_with(repo, head, brief, agents, bundle_dir, progress, &options).await;
    }
    // Handlers are installed here, before the first checkout exists, so no signal can slip
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
    options: DispatchOptions,
) -> anyhow::Result<DispatchOutcome> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|err| anyhow::anyhow!("could not start the async runtime: {err}"))?;
    Ok(runtime.block_on(dispatch_handling_signals(
        repo, head, brief, agents, bundle_dir, progress, options,
    )))
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
    learn_secrets(agents);
    // Problems shared by every agent fail every agent, each with the reason.
    let prepared = prepare(repo, head, bundle_dir);
    let events = emitter(
        agents,
        progress,
        options,
        prepared.as_ref().ok().map(|p| &p.events_log),
    );
    let Prepared {
        head_sha,
        work_root,
        ..
    } = match prepared {
        Ok(prepared) => prepared,
        Err(reason) => {
            let failure = Failure::CouldNotStart { reason };
            return fail_every_agent(agents, failure, &events, started, &options.cancel);
        }
    };
    let sandbox = sandbox::Plan::new(options.sandbox, options.sandbox_helper.clone());
    let checkout =
        match shared_checkout(repo, &head_sha, work_root.path(), &sandbox, &options.cancel).await {
            Ok(checkout) => checkout,
            Err(failure) => {
                return fail_every_agent(agents, failure, &events, started, &options.cancel);
            }
        };
    let shared = Arc::new(Shared {
        repo: repo.to_path_buf(),
        head: head_sha,
        brief: Arc::new(brief.to_string()),
        bundle_dir: bundle_dir.to_path_buf(),
        work_root: work_root.path().to_path_buf(),
        cancel: options.cancel.clone(),
        events: events.clone(),
        output_limit: options.output_limit,
        checkout: checkout.as_ref().map(|w| w.path().to_path_buf()),
        sandbox,
        prompts: options.prompts.clone(),
        meter: Arc::clone(&options.meter),
        prices: Arc::clone(&options.prices),
        meter_scope: options.meter_scope.clone(),
        deadline: options.deadline.map(tokio::time::Instant::from_std),
    });
    let cancel_note = announce_cancel(&options.cancel, &events);
    let running = start_reviewers(&shared, agents, options);
    let mut reviews = collect_reviews(running, agents).await;
    cancel_note.abort();
    drop(shared);
    let kept = match checkout {
        Some(checkout) => {
            let unchanged = check_shared_checkout(&checkout, &mut reviews).await;
            if unchanged && options.keep_checkout {
                Some(KeptCheckout(Arc::new(KeptParts {
                    worktree: checkout,
                    _work_root: work_root,
                })))
            } else {
                remove_checkout(checkout, &mut reviews).await;
                let _ = work_root.close();
                None
            }
        }
        None => {
            // Every checkout is gone by now; the temporary directory that held them goes too.
            let _ = work_root.close();
            None
        }
    };
    events.emit(
        None,
        EventKind::Done {
            duration_s: started.elapsed().as_secs_f64(),
        },
    );
    DispatchOutcome {
        reviews,
        cancelled: options.cancel.is_cancelled(),
        wall_clock_s: started.elapsed().as_secs_f64(),
        checkout: kept,
    }
}

/// The events of the dispatch go to the progress display, the caller's sinks and, once the
/// bundle exists, its `events.jsonl`.
fn emitter(
    agents: &[AgentSpec],
    progress: ProgressMode,
    options: &DispatchOptions,
    events_log: Option<&Arc<JsonlSink>>,
) -> Emitter {
    let names: Vec<String> = agents.iter().map(|a| a.name.clone()).collect();
    let mut sinks: Vec<Arc<dyn EventSink>> =
        vec![Arc::new(progress::Progress::new(progress, &names))];
    sinks.extend(options.sinks.iter().cloned());
    if let Some(log) = events_log {
        sinks.push(Arc::clone(log) as Arc<dyn EventSink>);
    }
    Emitter::new(sinks)
}

/// Every agent failed with one reason before any could start (no commit to review, no bundle
/// directory, no checkout): each is reported with it.
fn fail_every_agent(
    agents: &[AgentSpec],
    failure: Failure,
    events: &Emitter,
    started: Instant,
    cancel: &CancelToken,
) -> DispatchOutcome {
    let failure = if cancel.is_cancelled() {
        Failure::Cancelled
    } else {
        failure
    };
    let reviews: Vec<RawReview> = agents
        .iter()
        .map(|spec| failed(spec, failure.clone()))
        .collect();
    for r in &reviews {
        events.agent(
            &r.agent,
            EventKind::Failed {
                status: r.status,
                failure: r.failure.clone().unwrap_or(Failure::NoReview),
                message: r.error.clone().unwrap_or_default(),
                duration_s: 0.0,
                retries: 0,
            },
        );
    }
    events.emit(
        None,
        EventKind::Done {
            duration_s: started.elapsed().as_secs_f64(),
        },
    );
    DispatchOutcome {
        reviews,
        cancelled: cancel.is_cancelled(),
        wall_clock_s: started.elapsed().as_secs_f64(),
        checkout: None,
    }
}

/// The one checkout every sandboxed agent shares (they cannot write to it, so one checkout's
/// cost instead of one per agent): a repository of its own that borrows the objects, so that
/// agents read the objects and nothing else of the repository's git directory (its config with
/// CI's token, deep-review's store). `None` where agents are not confined and each gets its own
/// worktree.
async fn shared_checkout(
    repo: &Path,
    head_sha: &str,
    work_root: &Path,
    sandbox: &sandbox::Plan,
    cancel: &CancelToken,
) -> Result<Option<worktree::Worktree>, Failure> {
    if !sandbox.layers.confines_files() {
        return Ok(None);
    }
    let path = work_root.join("checkout");
    worktree::Worktree::borrowing(repo, head_sha, &path, cancel)
        .await
        .map(Some)
        .map_err(|err| Failure::CouldNotStart {
            reason: output::one_sentence(&format!("could not create the checkout: {err:#}")),
        })
}

/// Says on the event stream, once, that the dispatch is being cancelled.
fn announce_cancel(cancel: &CancelToken, events: &Emitter) -> tokio::task::JoinHandle<()> {
    let cancel = cancel.clone();
    let events = events.clone();
    tokio::spawn(async move {
        cancel.cancelled().await;
        events.emit(None, EventKind::Cancelling);
    })
}

/// One reviewer's place in the dispatch: its task, or its result when it could not start.
type Slot = Result<tokio::task::JoinHandle<RawReview>, RawReview>;

/// Starts every reviewer, in the order listed (so the budget lets the first ones start); an
/// agent listed twice fails the second time.
fn start_reviewers(
    shared: &Arc<Shared>,
    agents: &[AgentSpec],
    options: &DispatchOptions,
) -> Vec<Slot> {
    let policy = supervisor::RetryPolicy {
        max_retries: options.max_retries,
        backoff: options.retry_backoff,
    };
    let mut seen = HashSet::new();
    let mut slots = Vec::with_capacity(agents.len());
    for spec in agents {
        let dir_name = backend::commands::safe_name(&spec.name);
        if !seen.insert(dir_name.clone()) {
            let r = failed(
                spec,
                Failure::CouldNotStart {
                    reason: format!(
                        "agent `{}` is listed twice: give each agent its own name",
                        spec.name
                    ),
                },
            );
            supervisor::announce(shared, &r);
            slots.push(Err(r));
            continue;
        }
        let estimate = crate::cost::estimate(
            &shared.prices,
            spec,
            crate::types::brief::estimate_tokens(shared.prompt_for(spec).len()),
        );
        let admitted = shared.meter.admit(&shared.meter_key(spec), estimate);
        let task =
            supervisor::run_reviewer(Arc::clone(shared), spec.clone(), dir_name, policy, admitted);
        slots.push(Ok(tokio::spawn(task)));
    }
    slots
}

/// Every reviewer's result, in the order listed, whatever happened to the others.
async fn collect_reviews(slots: Vec<Slot>, agents: &[AgentSpec]) -> Vec<RawReview> {
    let mut reviews = Vec::with_capacity(slots.len());
    for (slot, spec) in slots.into_iter().zip(agents) {
        let review = match slot {
            Ok(handle) => match handle.await {
                Ok(review) => review,
                Err(err) => failed(
                    spec,
                    Failure::CouldNotStart {
                        reason: format!("its run stopped unexpectedly: {err}"),
                    },
                ),
            },
            Err(review) => review,
        };
        reviews.push(review);
    }
    reviews
}

/// Checks that no agent changed the shared checkout, naming what changed on every agent's
/// record (they all shared it); true when nothing did.
async fn check_shared_checkout(checkout: &worktree::Worktree, reviews: &mut [RawReview]) -> bool {
    let changes = tokio::task::spawn_blocking(checkout.change_probe())
        .await
        .unwrap_or_else(|err| vec![format!("the checkout could not be checked: {err}")]);
    note_checkout_changes(&changes, reviews);
    changes.is_empty()
}

/// Removes the shared checkout, naming a failure on every agent's record.
async fn remove_checkout(checkout: worktree::Worktree, reviews: &mut [RawReview]) {
    let removed = tokio::task::spawn_blocking(move || checkout.remove()).await;
    let problem = match removed {
        Ok(Ok(())) => return,
        Ok(Err(err)) => format!("the checkout could not be removed: {err:#}"),
        Err(err) => format!("the checkout could not be removed: {err}"),
    };
    note_checkout_changes(&[problem], reviews);
}

fn note_checkout_changes(changes: &[String], reviews: &mut [RawReview]) {
    for review in reviews {
        review
            .worktree_changes
            .extend(changes.iter().map(|c| format!("shared checkout: {c}")));
    }
}

/// What every agent of a dispatch needs before any starts.
struct Prepared {
    head_sha: String,
    work_root: stale::WorkRoot,
    events_log: Arc<JsonlSink>,
}

/// Resolves the head commit, creates the bundle directory, the events log and the checkouts'
/// temporary home (first pruning what killed runs left behind).
fn prepare(repo: &Path, head: &str, bundle_dir: &Path) -> Result<Prepared, String> {
    let sha = crate::git::resolve_commit(repo, head).map_err(|e| format!("{e:#}"))?;
    std::fs::create_dir_all(bundle_dir).map_err(|e| {
        format!(
            "could not create the run bundle directory {}: {e}",
            bundle_dir.display()
        )
    })?;
    let events_path = bundle_dir.join(crate::bundle::EVENTS_FILE);
    let jsonl = JsonlSink::append(&events_path)
        .map_err(|e| format!("could not create {}: {e}", events_path.display()))?;
    stale::prune(repo);
    let work_root = stale::WorkRoot::create()
        .map_err(|e| format!("could not create a temporary directory for the checkouts: {e}"))?;
    Ok(Prepared {
        head_sha: sha,
        work_root,
        events_log: Arc::new(jsonl),
    })
}

/// Makes every secret the agents are given known to [`crate::redact`] before anything of
/// theirs is written: the config's `env` values of secret-named variables (the environment's
/// are known already, `pass_env` ones included) and the value of the variable a model API reads
/// its key from, whatever its name. Called again by the pipeline before it saves anything of
/// the run; a second call with the same agents adds nothing.
pub fn learn_secrets(agents: &[AgentSpec]) {
    let keys: Vec<String> = agents
        .iter()
        .filter_map(|spec| spec.http.api_key_env.as_deref())
        .filter_map(|name| std::env::var(name).ok())
        .collect();
    let vars = agents
        .iter()
        .flat_map(|spec| spec.env.iter())
        .map(|(k, v)| (k.as_str(), v.as_str()));
    crate::redact::learn(vars, &keys);
}

fn failed(spec: &AgentSpec, failure: Failure) -> RawReview {
    RawReview {
        model: spec.model.clone(),
        effort: spec.effort.clone(),
        ..RawReview::failed(&spec.name, display_name(spec), Some(failure))
    }
}

/// The record of an agent before its run: failed until the run says otherwise, so an agent
/// that never got to run is reported as such.
pub(crate) fn not_yet_run(spec: &AgentSpec) -> RawReview {
    RawReview {
        model: spec.model.clone(),
        effort: spec.effort.clone(),
        ..RawReview::failed(&spec.name, display_name(spec), None)
    }
}

fn display_name(spec: &AgentSpec) -> Option<String> {
    Some(spec.display.clone()).filter(|d| !d.is_empty())
}

/// The signals that stop a run: Ctrl-C, `kill`, the terminal closing, Ctrl-\\. `None` for one
/// that could not be installed.
pub(crate) type Signals = [Option<tokio::signal::unix::Signal>; 4];

/// Registers the handlers of the signals that stop a run (in the current tokio runtime).
pub(crate) fn install_signals() -> Signals {
    use tokio::signal::unix::{SignalKind, signal};
    [
        SignalKind::interrupt(),
        SignalKind::terminate(),
        SignalKind::hangup(),
        SignalKind::quit(),
    ]
    .map(|kind| signal(kind).ok())
}

/// Completes on the next of any of the signals.
pub(crate) async fn next_signal(signals: &mut Signals) {
    async fn next(sig: &mut Option<tokio::signal::unix::Signal>) {
        match sig {
            Some(sig) => {
                sig.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    }
    let [int, term, hup, quit] = signals;
    tokio::select! {
        _ = next(int) => {}
        _ = next(term) => {}
        _ = next(hup) => {}
        _ = next(quit) => {}
    }
}

/// Cancels on the first signal; on a second one, kills every agent at once and exits 130
/// (the next run prunes the checkouts left behind).
async fn cancel_on_signal(cancel: CancelToken, mut signals: Signals) {
    next_signal(&mut signals).await;
    cancel.cancel();
    next_signal(&mut signals).await;
    backend::process::kill_all_now();
    crate::say!("deep-review: stopped at once; checkouts left behind are removed by the next run");
    std::process::exit(130);
}
