//! Reviewer backends: how one reviewer is run. The supervisor ([`super::supervisor`]) owns
//! everything around a run (deadline, retries, cancellation, the bundle, events); a backend
//! only knows how to make one attempt and what it needs before and after.
//!
//! - [`process`]: a local process (an agent CLI or a custom command) in a checkout of the head
//!   commit, in its own process group.
//! - [`http`]: a model API (Anthropic Messages, OpenAI Responses, Gemini, OpenAI-compatible chat
//!   completions), streamed, with the packed prompt.
//!
//! A new kind of reviewer (a remote runner) is a new module here that implements [`Backend`],
//! and one arm in [`for_spec`].

pub mod commands;
pub mod http;
pub mod process;
mod streams;

use std::collections::BTreeMap;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::budget::CostMeter;
use super::events::Emitter;
use super::output::RunOutput;
use crate::cost::PriceTable;
use crate::types::{AgentSpec, BackendKind, Failure};

/// A boxed future: backends are trait objects, chosen per reviewer at run time.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What every reviewer of one dispatch shares.
pub struct Shared {
    /// The repository under review (its top level).
    pub repo: PathBuf,
    /// Full sha of the commit under review.
    pub head: String,
    /// The prompt every reviewer gets.
    pub brief: Arc<String>,
    /// The run bundle's directory.
    pub bundle_dir: PathBuf,
    /// A private temporary directory for checkouts and scratch files, removed at the end.
    pub work_root: PathBuf,
    pub cancel: CancellationToken,
    pub events: Emitter,
    /// The most bytes of output kept per attempt; the rest is drained and dropped.
    pub output_limit: u64,
    /// The checkout every agent shares, when they run sandboxed (they cannot write to it);
    /// `None`: each agent gets its own worktree.
    pub checkout: Option<PathBuf>,
    /// The sandbox agent processes run under.
    pub sandbox: crate::dispatch::sandbox::Plan,
    /// Prompts of their own, by agent name (a model API's packed prompt); the others get
    /// `brief`.
    pub prompts: BTreeMap<String, Arc<String>>,
    /// The run's cost meter and the prices it counts with.
    pub meter: Arc<CostMeter>,
    pub prices: Arc<PriceTable>,
    /// Prefixed to agent names in the meter, so the synthesizer's run is counted apart from the
    /// same agent's review.
    pub meter_scope: String,
    /// When every reviewer must have stopped, whatever its own timeout.
    pub deadline: Option<Instant>,
}

impl Shared {
    /// The prompt `spec` gets: its own, else the brief.
    pub fn prompt_for(&self, spec: &AgentSpec) -> Arc<String> {
        self.prompts
            .get(&spec.name)
            .cloned()
            .unwrap_or_else(|| Arc::clone(&self.brief))
    }

    /// The name `spec`'s spending is counted under.
    pub fn meter_key(&self, spec: &AgentSpec) -> String {
        format!("{}{}", self.meter_scope, spec.name)
    }
}

/// How one attempt ended.
#[derive(Debug)]
pub struct Attempt {
    /// What the reviewer's output said (text, tokens, tool calls, its own errors).
    pub output: RunOutput,
    /// Why it failed; `None` when it produced a review.
    pub failure: Option<Failure>,
    /// The process's exit code, for a process that exited.
    pub exit_code: Option<i32>,
    /// The end of the reviewer's error output.
    pub stderr: String,
    pub elapsed: Duration,
    /// Bytes of output beyond the limit that were dropped.
    pub output_cut: Option<u64>,
}

impl Attempt {
    /// An attempt that ended before the reviewer ran.
    pub fn not_run(failure: Failure) -> Attempt {
        Attempt {
            output: RunOutput::default(),
            failure: Some(failure),
            exit_code: None,
            stderr: String::new(),
            elapsed: Duration::ZERO,
            output_cut: None,
        }
    }
}

/// One reviewer's attempt, as the supervisor asks for it.
pub struct AttemptRequest<'a> {
    pub shared: &'a Shared,
    pub spec: &'a AgentSpec,
    /// The reviewer's directory in the bundle (raw output goes there as it arrives).
    pub agent_dir: &'a std::path::Path,
    /// When the reviewer's time is up.
    pub deadline: Instant,
}

/// A reviewer ready to run: made by [`Backend::prepare`], used for every attempt, closed once.
pub trait Session: Send {
    /// The command line or endpoint as users may see it, secrets redacted (`command.txt`).
    fn describe(&self) -> String;

    /// The sandbox it runs under, as the report names it.
    fn sandbox(&self) -> String;

    /// What its network did (a local process behind deep-review's proxy); `None` for a
    /// reviewer that is not a process.
    fn network(&self) -> Option<crate::types::NetworkRecord> {
        None
    }

    /// Runs one attempt to its end, timeout or cancellation. Never fails: a failure is in the
    /// result.
    fn attempt<'a>(&'a mut self, request: AttemptRequest<'a>) -> BoxFuture<'a, Attempt>;

    /// Cleans up (removes a checkout) and says what the reviewer changed that it should not
    /// have: empty when nothing.
    fn close(self: Box<Self>) -> BoxFuture<'static, Vec<String>>;
}

/// A way of running reviewers.
pub trait Backend: Send + Sync {
    /// Readies `spec` to run (a checkout for a local process). A failure here fails the
    /// reviewer without an attempt.
    fn prepare<'a>(
        &'a self,
        shared: &'a Shared,
        spec: &'a AgentSpec,
        dir_name: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn Session>, Failure>>;
}

/// The backend that runs `spec`, as its kind names it.
pub fn for_spec(spec: &AgentSpec) -> Box<dyn Backend> {
    match spec.kind.backend() {
        BackendKind::Process => Box::new(process::ProcessBackend),
        BackendKind::Http => Box::new(http::HttpBackend),
    }
}
