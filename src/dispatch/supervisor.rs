//! The supervisor: runs one reviewer from start to end, whatever its backend. It owns what is
//! the same for every kind of reviewer: the deadline, retries with backoff (decided by the
//! typed [`Failure`], never by reading text), cancellation, the reviewer's files in the run
//! bundle and its events. Nothing a reviewer does can fail another: every error ends as a
//! [`RawReview`] with a status and one sentence.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::backend::{self, Attempt, AttemptRequest, Shared};
use super::events::EventKind;
use crate::bundle::{self, AttemptRecord, MetaExtra};
use crate::redact::redact;
use crate::types::{AgentSpec, Failure, RawReview, RunStatus};

/// How much of stderr goes into the report's record (the bundle keeps it too).
const STDERR_TAIL: usize = 8 * 1024;
/// The longest wait between attempts, whatever a provider's `retry-after` says: a review is
/// not worth waiting hours for.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(300);

/// Retry policy of one dispatch.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Retries after a transient failure; at most this many.
    pub max_retries: u32,
    /// Wait before the first retry when the provider did not say; doubled for each next one.
    pub backoff: Duration,
}

impl RetryPolicy {
    /// The wait before attempt `next` (2 for the first retry).
    fn wait(&self, failure: &Failure, next: u32) -> Duration {
        failure
            .retry_after()
            .unwrap_or_else(|| {
                self.backoff
                    .saturating_mul(2u32.saturating_pow(next.saturating_sub(2)))
            })
            .min(MAX_RETRY_WAIT)
    }
}

/// One reviewer's record as it is being made: the review and what `meta.json` adds.
struct Record {
    review: RawReview,
    extra: MetaExtra,
}

/// Why a reviewer stopped before its attempts, and whether its bundle folder exists to write
/// its results in.
struct Stopped {
    failure: Failure,
    folder: bool,
}

/// Runs one reviewer to its end and writes its files in the bundle. Never fails.
pub async fn run_reviewer(
    shared: Arc<Shared>,
    mut spec: AgentSpec,
    dir_name: String,
    policy: RetryPolicy,
    admitted: Result<(), Failure>,
) -> RawReview {
    shared.events.agent(&spec.name, EventKind::Queued);
    let agent_dir = bundle::agent_dir(&shared.bundle_dir, &dir_name);
    let mut record = Record {
        review: super::not_yet_run(&spec),
        extra: MetaExtra {
            head: Some(shared.head.clone()),
            ..MetaExtra::default()
        },
    };
    let session = match may_start(&shared, &agent_dir, admitted) {
        Ok(()) => start_session(&shared, &spec, &dir_name, &agent_dir, &mut record).await,
        Err(stopped) => Err(stopped),
    };
    let mut session = match session {
        Ok(session) => session,
        Err(Stopped { failure, folder }) => {
            set_failure(&mut record.review, failure);
            if folder {
                finish(&shared, &agent_dir, &mut record);
            } else {
                announce(&shared, &record.review);
            }
            return record.review;
        }
    };
    // The reviewer's own time starts here: its checkout is ready.
    let started = Instant::now();
    let own_limit = spec.timeout;
    let cut_by_the_run = bound_by_the_run(&shared, &mut spec, started);
    let last = attempts(
        &shared,
        &spec,
        session.as_mut(),
        &agent_dir,
        policy,
        &mut record,
    )
    .await;
    keep_output(&shared, &spec, &mut record, last, started);
    if cut_by_the_run {
        blame_the_run(&mut record.review, own_limit);
    }
    record.review.network = session.network();
    let cleanup_started = Instant::now();
    record.review.worktree_changes = session.close().await;
    record.extra.worktree_cleanup_s = Some(cleanup_started.elapsed().as_secs_f64());
    finish(&shared, &agent_dir, &mut record);
    record.review
}

/// Whether the reviewer may start at all: its bundle folder made, the run not cancelled, and
/// the budget (decided before the run started) letting it in.
fn may_start(
    shared: &Shared,
    agent_dir: &Path,
    admitted: Result<(), Failure>,
) -> Result<(), Stopped> {
    if let Err(err) = std::fs::create_dir_all(agent_dir) {
        return Err(Stopped {
            failure: Failure::CouldNotStart {
                reason: format!(
                    "could not create the bundle directory {}: {err}",
                    agent_dir.display()
                ),
            },
            folder: false,
        });
    }
    if shared.cancel.is_cancelled() {
        return Err(Stopped {
            failure: Failure::Cancelled,
            folder: true,
        });
    }
    admitted.map_err(|failure| Stopped {
        failure,
        folder: true,
    })
}

/// Readies the reviewer's session (its checkout and sandbox, or its endpoint) and records its
/// command line in the bundle.
async fn start_session(
    shared: &Shared,
    spec: &AgentSpec,
    dir_name: &str,
    agent_dir: &Path,
    record: &mut Record,
) -> Result<Box<dyn backend::Session>, Stopped> {
    let backend = backend::for_spec(spec);
    let setup_started = Instant::now();
    let session = backend.prepare(shared, spec, dir_name).await;
    record.extra.worktree_setup_s = Some(setup_started.elapsed().as_secs_f64());
    let session = session.map_err(|failure| Stopped {
        failure,
        folder: true,
    })?;
    record.review.sandbox = Some(session.sandbox());
    if let Err(err) = bundle::write_command(agent_dir, &session.describe()) {
        record.review.worktree_changes = session.close().await;
        return Err(Stopped {
            failure: Failure::CouldNotStart {
                reason: crate::dispatch::output::one_sentence(&format!("{err:#}")),
            },
            folder: true,
        });
    }
    Ok(session)
}

/// The run's deadline, when it comes first, shortens the reviewer's timeout; true when it did
/// (a timeout is then the run's, not the agent's: [`blame_the_run`]).
fn bound_by_the_run(shared: &Shared, spec: &mut AgentSpec, started: Instant) -> bool {
    let Some(run_deadline) = shared.deadline else {
        return false;
    };
    let left = run_deadline.saturating_duration_since(started);
    let cut = left < spec.timeout;
    spec.timeout = spec.timeout.min(left);
    cut
}

/// A reviewer the run's deadline stopped is reported as stopped by it, with its own limit, so
/// the user lengthens `--timeout` rather than the agent's `timeout`.
fn blame_the_run(review: &mut RawReview, own_limit: std::time::Duration) {
    if let Some(Failure::TimedOut { after_s }) = review.failure {
        set_failure(
            review,
            Failure::RunDeadline {
                after_s,
                limit_s: own_limit.as_secs_f64(),
            },
        );
    }
}

/// Runs attempts until one succeeds, fails for good, or the retries, the deadline, the budget
/// or a cancel end them; returns the last.
async fn attempts(
    shared: &Shared,
    spec: &AgentSpec,
    session: &mut dyn backend::Session,
    agent_dir: &Path,
    policy: RetryPolicy,
    record: &mut Record,
) -> Attempt {
    let deadline = Instant::from_std(crate::text::deadline(
        std::time::Instant::now(),
        spec.timeout,
    ));
    let mut attempt_no = 0u32;
    loop {
        attempt_no += 1;
        if attempt_no > 1 {
            bundle::keep_attempt_stdout(agent_dir, attempt_no - 1);
        }
        shared.events.agent(
            &spec.name,
            EventKind::Started {
                attempt: attempt_no,
            },
        );
        let mut attempt = session
            .attempt(AttemptRequest {
                shared,
                spec,
                agent_dir,
                deadline,
            })
            .await;
        let mut tried = AttemptRecord {
            duration_s: attempt.elapsed.as_secs_f64(),
            exit_code: attempt.exit_code,
            outcome: status_of(attempt.failure.as_ref()).as_str().into(),
            error: attempt.failure.as_ref().map(Failure::sentence),
            retried_because: None,
        };
        let Some(wait) = retry_wait(&attempt, attempt_no, policy) else {
            record.extra.attempts.push(tried);
            return attempt;
        };
        // A retry is new work: not once the budget is spent.
        if shared.meter.tripped().is_cancelled() {
            attempt.failure = Some(shared.meter.stop(&shared.meter_key(spec)));
            record.extra.attempts.push(tried);
            return attempt;
        }
        // Nor when its wait alone would pass the deadline.
        if crate::text::deadline(std::time::Instant::now(), wait) >= deadline.into_std() {
            record.extra.attempts.push(tried);
            return attempt;
        }
        let reason = attempt
            .failure
            .as_ref()
            .map(Failure::short)
            .unwrap_or_default();
        tried.retried_because = Some(reason.clone());
        record.extra.attempts.push(tried);
        record.review.retries += 1;
        shared.events.agent(
            &spec.name,
            EventKind::Retry {
                attempt: attempt_no,
                max: policy.max_retries,
                reason,
                wait_s: wait.as_secs_f64(),
            },
        );
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = shared.cancel.cancelled() => {
                attempt.failure = Some(Failure::Cancelled);
                return attempt;
            }
        }
    }
}

/// How long to wait before trying again after `attempt`: only after a transient failure, while
/// retries are left.
fn retry_wait(attempt: &Attempt, attempt_no: u32, policy: RetryPolicy) -> Option<Duration> {
    let failure = attempt.failure.as_ref().filter(|f| f.is_transient())?;
    (attempt_no <= policy.max_retries).then(|| policy.wait(failure, attempt_no + 1))
}

/// Keeps what the last attempt produced in the record: its text (secrets redacted), tokens,
/// cost, tool calls, the end of its stderr and how it ended.
fn keep_output(
    shared: &Shared,
    spec: &AgentSpec,
    record: &mut Record,
    last: Attempt,
    started: Instant,
) {
    let review = &mut record.review;
    review.exit_code = last.exit_code;
    review.stderr_tail = redact(&tail(&last.stderr, STDERR_TAIL)).into_owned();
    review.output_cut_bytes = last.output_cut;
    record.extra.cli_duration_s = last.output.duration_s;
    let output = last.output;
    review.text = match redact(&output.text) {
        std::borrow::Cow::Borrowed(_) => output.text,
        std::borrow::Cow::Owned(redacted) => redacted,
    };
    review.notes.extend(output.notes);
    // The agent's own figures, believed only when they could be true.
    (review.cost_usd, review.tokens) =
        super::numbers::believed(output.cost_usd, output.tokens, &mut review.notes);
    if review.cost_usd.is_some() {
        review.cost_basis = Some("reported by the agent".into());
    }
    count_cost(shared, spec, review);
    shared
        .meter
        .finish(&shared.meter_key(spec), review.cost_usd);
    review.tool_calls = output.tool_calls;
    review.duration_s = started.elapsed().as_secs_f64();
    match last.failure {
        Some(failure) => set_failure(review, failure),
        None => {
            review.status = RunStatus::Ok;
            review.error = None;
            review.failure = None;
        }
    }
}

/// Tokens and cost where the agent reported none: tokens at four bytes a token (the prompt
/// in, the review out, marked estimated), cost from the price table.
fn count_cost(shared: &Shared, spec: &AgentSpec, review: &mut RawReview) {
    if review.tokens.is_none() && !review.text.is_empty() {
        let est = |bytes: usize| crate::types::brief::estimate_tokens(bytes) as u64;
        review.tokens = Some(crate::types::TokenUsage {
            input: est(shared.prompt_for(spec).len()),
            output: est(review.text.len()),
            cached: 0,
            estimated: true,
        });
    }
    if review.cost_usd.is_none()
        && let (Some(tokens), Some(priced)) = (&review.tokens, shared.prices.for_agent(spec))
    {
        let (usd, basis) = crate::cost::price_tokens(&priced, tokens);
        review.cost_usd = Some(usd);
        review.cost_basis = Some(basis);
    }
}

/// The status a failure gives a run.
fn status_of(failure: Option<&Failure>) -> RunStatus {
    match failure {
        None => RunStatus::Ok,
        Some(Failure::TimedOut { .. } | Failure::RunDeadline { .. }) => RunStatus::TimedOut,
        Some(Failure::Cancelled) => RunStatus::Cancelled,
        Some(_) => RunStatus::Failed,
    }
}

fn set_failure(review: &mut RawReview, failure: Failure) {
    review.status = status_of(Some(&failure));
    review.error = Some(redact(&failure.sentence()).into_owned());
    review.failure = Some(failure);
}

/// Writes the bundle's result files and announces the end. A bundle write error is recorded in
/// the review (the review itself is still returned to the caller).
fn finish(shared: &Shared, dir: &Path, record: &mut Record) {
    let Record { review, extra } = record;
    if let Err(err) = bundle::write_results(dir, review, extra) {
        let note = format!("the run bundle could not be written: {err:#}");
        review.error = Some(match review.error.take() {
            Some(e) => format!("{e}; {note}"),
            None => note,
        });
    }
    announce(shared, review);
}

/// The reviewer's last event: finished with a review, or failed with its reason.
pub(super) fn announce(shared: &Shared, review: &RawReview) {
    let kind = match (&review.status, &review.failure) {
        (RunStatus::Ok, _) => EventKind::Finished {
            duration_s: review.duration_s,
            tool_calls: review.total_tool_calls(),
            tokens: review.tokens.clone(),
            retries: review.retries,
        },
        (status, failure) => {
            let failure = failure.clone().unwrap_or(Failure::Reported {
                cause: review
                    .error
                    .clone()
                    .unwrap_or_else(|| "it failed".to_string()),
            });
            EventKind::Failed {
                status: *status,
                message: review.error.clone().unwrap_or_else(|| failure.sentence()),
                failure,
                duration_s: review.duration_s,
                retries: review.retries,
            }
        }
    };
    shared.events.agent(&review.agent, kind);
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

    #[test]
    fn waits_double_unless_the_provider_says_how_long() {
        let policy = RetryPolicy {
            max_retries: 3,
            backoff: Duration::from_secs(5),
        };
        let net = Failure::Network { cause: "x".into() };
        assert_eq!(policy.wait(&net, 2), Duration::from_secs(5));
        assert_eq!(policy.wait(&net, 3), Duration::from_secs(10));
        let limited = Failure::RateLimited {
            cause: "x".into(),
            retry_after_s: Some(42.0),
        };
        assert_eq!(policy.wait(&limited, 2), Duration::from_secs(42));
        let greedy = Failure::RateLimited {
            cause: "x".into(),
            retry_after_s: Some(86_400.0),
        };
        assert_eq!(policy.wait(&greedy, 2), MAX_RETRY_WAIT);
    }
}
