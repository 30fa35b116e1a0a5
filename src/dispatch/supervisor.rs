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
use super::redact::redact;
use crate::store::bundle::{self, AttemptRecord, MetaExtra};
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

/// Runs one reviewer to its end and writes its files in the bundle. Never fails.
pub async fn run_reviewer(
    shared: Arc<Shared>,
    spec: AgentSpec,
    dir_name: String,
    policy: RetryPolicy,
    admitted: Result<(), Failure>,
) -> RawReview {
    let events = shared.events.clone();
    events.agent(&spec.name, EventKind::Queued);
    let agent_dir = bundle::agent_dir(&shared.bundle_dir, &dir_name);
    let mut review = super::not_yet_run(&spec);
    let mut extra = MetaExtra {
        head: Some(shared.head.clone()),
        ..MetaExtra::default()
    };
    if let Err(err) = std::fs::create_dir_all(&agent_dir) {
        let failure = Failure::CouldNotStart {
            reason: format!(
                "could not create the bundle directory {}: {err}",
                agent_dir.display()
            ),
        };
        set_failure(&mut review, failure);
        announce(&shared, &review);
        return review;
    }
    if shared.cancel.is_cancelled() {
        set_failure(&mut review, Failure::Cancelled);
        finish(&shared, &agent_dir, &mut review, &extra);
        return review;
    }
    // The budget decided before the run started whether this reviewer may start.
    if let Err(failure) = admitted {
        set_failure(&mut review, failure);
        finish(&shared, &agent_dir, &mut review, &extra);
        return review;
    }
    let meter_key = shared.meter_key(&spec);

    let backend = backend::for_spec(&spec);
    let setup_started = Instant::now();
    let session = backend.prepare(&shared, &spec, &dir_name).await;
    extra.worktree_setup_s = Some(setup_started.elapsed().as_secs_f64());
    let mut session = match session {
        Ok(session) => session,
        Err(failure) => {
            set_failure(&mut review, failure);
            finish(&shared, &agent_dir, &mut review, &extra);
            return review;
        }
    };
    review.sandbox = Some(session.sandbox());
    if let Err(err) = bundle::write_command(&agent_dir, &session.describe()) {
        review.worktree_changes = session.close().await;
        set_failure(
            &mut review,
            Failure::CouldNotStart {
                reason: crate::dispatch::output::one_sentence(&format!("{err:#}")),
            },
        );
        finish(&shared, &agent_dir, &mut review, &extra);
        return review;
    }

    // The reviewer's own time starts here: its checkout is ready.
    let started = Instant::now();
    let deadline = Instant::from_std(crate::text::deadline(started.into_std(), spec.timeout));
    let mut attempt_no = 0u32;
    let last: Attempt = loop {
        attempt_no += 1;
        if attempt_no > 1 {
            bundle::keep_attempt_stdout(&agent_dir, attempt_no - 1);
        }
        events.agent(
            &spec.name,
            EventKind::Started {
                attempt: attempt_no,
            },
        );
        let mut attempt = session
            .attempt(AttemptRequest {
                shared: &shared,
                spec: &spec,
                agent_dir: &agent_dir,
                deadline,
            })
            .await;
        let mut record = AttemptRecord {
            duration_s: attempt.elapsed.as_secs_f64(),
            exit_code: attempt.exit_code,
            outcome: status_of(attempt.failure.as_ref()).as_str().into(),
            error: attempt.failure.as_ref().map(Failure::sentence),
            retried_because: None,
        };
        if let Some(failure) = attempt.failure.clone()
            && failure.is_transient()
            && attempt_no <= policy.max_retries
        {
            let wait = policy.wait(&failure, attempt_no + 1);
            // A retry is new work: not once the budget is spent.
            if shared.meter.tripped().is_cancelled() {
                attempt.failure = Some(shared.meter.stop(&meter_key));
                extra.attempts.push(record);
                break attempt;
            }
            if crate::text::deadline(std::time::Instant::now(), wait) < deadline.into_std() {
                let reason = failure.short();
                record.retried_because = Some(reason.clone());
                extra.attempts.push(record);
                review.retries += 1;
                events.agent(
                    &spec.name,
                    EventKind::Retry {
                        attempt: attempt_no,
                        max: policy.max_retries,
                        reason,
                        wait_s: wait.as_secs_f64(),
                    },
                );
                tokio::select! {
                    _ = tokio::time::sleep(wait) => continue,
                    _ = shared.cancel.cancelled() => {
                        attempt.failure = Some(Failure::Cancelled);
                        break attempt;
                    }
                }
            }
        }
        extra.attempts.push(record);
        break attempt;
    };

    review.exit_code = last.exit_code;
    review.stderr_tail = redact(&tail(&last.stderr, STDERR_TAIL)).into_owned();
    review.output_cut_bytes = last.output_cut;
    extra.cli_duration_s = last.output.duration_s;
    let output = last.output;
    review.text = match redact(&output.text) {
        std::borrow::Cow::Borrowed(_) => output.text,
        std::borrow::Cow::Owned(redacted) => redacted,
    };
    review.tokens = output.tokens;
    review.cost_usd = output.cost_usd;
    if review.cost_usd.is_some() {
        review.cost_basis = Some("reported by the agent".into());
    }
    count_cost(&shared, &spec, &mut review);
    shared.meter.finish(&meter_key, review.cost_usd);
    review.tool_calls = output.tool_calls;
    review.duration_s = started.elapsed().as_secs_f64();
    match last.failure {
        Some(failure) => set_failure(&mut review, failure),
        None => {
            review.status = RunStatus::Ok;
            review.error = None;
            review.failure = None;
        }
    }

    let cleanup_started = Instant::now();
    review.worktree_changes = session.close().await;
    extra.worktree_cleanup_s = Some(cleanup_started.elapsed().as_secs_f64());
    finish(&shared, &agent_dir, &mut review, &extra);
    review
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
        Some(Failure::TimedOut { .. }) => RunStatus::TimedOut,
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
fn finish(shared: &Shared, dir: &Path, review: &mut RawReview, extra: &MetaExtra) {
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
