//! Stopping a run at any stage: a signal, or the run's deadline.
//!
//! While agents run, the first Ctrl-C (SIGINT), SIGTERM, SIGHUP (the terminal closed) or SIGQUIT
//! stops them gracefully (dispatch stops every agent, removes the checkouts and keeps what they
//! wrote), and the run exits 130; a second one kills every agent at once and exits. At every
//! other stage (resolving the target, writing the brief, parsing, verifying, consolidating,
//! rendering) there is nothing to stop gracefully: the run exits 130 at once, saying where its
//! bundle is and how to finish it. Report files are written atomically, so none is left
//! half-written.
//!
//! The run's deadline (`run --timeout`) bounds the whole run the same way: the agents are given
//! until a little before it (so that their reviews can still be read), and a later stage that is
//! still running at the deadline ends the run with exit 124, as `timeout(1)` does.
//!
//! Signal handlers are installed once per process, before any stage runs, so that no signal
//! meets the default action (exit without cleanup) or is swallowed by a handler nobody listens
//! to any more.

use std::sync::Mutex;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::dispatch::CancelToken;

/// The exit status of a run stopped by a signal.
pub const EXIT_INTERRUPTED: i32 = 130;
/// The exit status of a run that passed its deadline.
pub const EXIT_DEADLINE: i32 = 124;

/// Where the run is, as the watcher needs to know it.
#[derive(Default)]
struct State {
    /// The token of the dispatch running now: a signal cancels it (graceful stop).
    dispatching: Option<CancelToken>,
    /// What the user can do to finish the run once its bundle exists.
    resume_hint: Option<String>,
    /// The deadline has passed (the CLI exits 124 rather than 130).
    deadline_passed: bool,
}

fn state() -> &'static Mutex<State> {
    static STATE: OnceLock<Mutex<State>> = OnceLock::new();
    STATE.get_or_init(|| Mutex::new(State::default()))
}

fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut guard = state().lock().unwrap_or_else(|e| e.into_inner());
    f(&mut guard)
}

/// Installs the run's signal watcher (once per process; later calls do nothing). Returns
/// whether it is installed: dispatch then leaves signals to it.
pub fn install() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        // The handlers are registered on this thread before it returns, so no signal can come
        // between here and the watcher's first wait.
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("deep-review-signals".into())
            .spawn(move || {
                let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    let _ = ready_tx.send(false);
                    return;
                };
                runtime.block_on(async move {
                    let mut signals = crate::dispatch::install_signals();
                    let _ = ready_tx.send(true);
                    watch(&mut signals).await;
                });
            });
        spawned.is_ok() && ready_rx.recv().unwrap_or(false)
    })
}

/// Handles signals until the process exits.
async fn watch(signals: &mut crate::dispatch::Signals) {
    loop {
        crate::dispatch::next_signal(signals).await;
        let cancel = with_state(|s| s.dispatching.clone());
        match cancel {
            Some(cancel) if !cancel.is_cancelled() => cancel.cancel(),
            Some(_) => {
                crate::dispatch::backend::process::kill_all_now();
                crate::say!(
                    "deep-review: stopped at once; checkouts left behind are removed by the next run"
                );
                std::process::exit(EXIT_INTERRUPTED);
            }
            None => stop_now("stopped", EXIT_INTERRUPTED),
        }
    }
}

/// Ends the process at a stage with nothing to stop gracefully.
fn stop_now(what: &str, code: i32) -> ! {
    let hint = with_state(|s| s.resume_hint.clone());
    match hint {
        Some(hint) => crate::say!("deep-review: {what}; {hint}"),
        None => crate::say!("deep-review: {what}; nothing was written"),
    }
    std::process::exit(code);
}

/// Marks the dispatch that `cancel` stops as running until the guard is dropped: a signal in
/// the meantime stops the agents gracefully.
pub fn dispatching(cancel: &CancelToken) -> DispatchGuard {
    with_state(|s| s.dispatching = Some(cancel.clone()));
    DispatchGuard(())
}

/// Ends the dispatch phase when dropped.
pub struct DispatchGuard(());

impl Drop for DispatchGuard {
    fn drop(&mut self) {
        with_state(|s| s.dispatching = None);
    }
}

/// What the user is told when the run stops from now on (the bundle exists: how to finish it).
pub fn set_resume_hint(hint: String) {
    with_state(|s| s.resume_hint = Some(hint));
}

/// Whether the run's deadline has passed.
pub fn deadline_passed() -> bool {
    with_state(|s| s.deadline_passed)
}

/// The run's deadline: at `at`, a dispatch still running is stopped (gracefully, as by a first
/// signal) and any other stage ends the run with exit 124. `what` names the limit for the
/// message (`--timeout 35m`).
pub fn watch_deadline(at: Instant, what: String) {
    let _ = std::thread::Builder::new()
        .name("deep-review-deadline".into())
        .spawn(move || {
            if let Some(wait) = at.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            let cancel = with_state(|s| {
                s.deadline_passed = true;
                s.dispatching.clone()
            });
            match cancel {
                Some(cancel) => cancel.cancel(),
                None => stop_now(
                    &format!("the run passed its deadline ({what}) and was stopped"),
                    EXIT_DEADLINE,
                ),
            }
        });
}

/// The time the agents get within a run deadline `total` long: all but a reserve in which their
/// reviews are read, verified and consolidated (a tenth of it, at most a minute).
pub fn agents_share(total: Duration) -> Duration {
    let reserve = (total / 10).min(Duration::from_secs(60));
    total.saturating_sub(reserve)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agents_leave_room_to_read_their_reviews() {
        assert_eq!(
            agents_share(Duration::from_secs(3600)),
            Duration::from_secs(3540)
        );
        assert_eq!(
            agents_share(Duration::from_secs(100)),
            Duration::from_secs(90)
        );
        assert_eq!(agents_share(Duration::ZERO), Duration::ZERO);
    }
}
