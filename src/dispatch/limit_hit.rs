//! Which of its limits ([`crate::types::Limits`]) a failed agent hit, from how it ended: the
//! kernel says it only for CPU time (`SIGXCPU`); a process or memory limit shows as a failed
//! `fork` or allocation, which the agent's programs report on stderr in their own words. Those
//! words are matched here, and only for an agent that failed: a limit that an agent hit and
//! got over (a tool whose `fork` failed once) is not its failure.

use std::sync::LazyLock;

use regex::Regex;

use crate::types::{Failure, LimitKind, Limits};

/// What shells, libc, Python, node and Rust say when `fork` or `clone` fails at the process
/// limit (`EAGAIN`).
static PROCESSES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)cannot fork|can't fork|fork: retry|fork failed|pthread_create|spawn \S+ EAGAIN|(fork|spawn|clone|thread)[^\n]*resource temporarily unavailable",
    )
    .expect("static regex")
});

/// What they say when an allocation fails at the memory limit (`ENOMEM`).
static MEMORY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)cannot allocate memory|out of memory|MemoryError|bad_alloc|memory allocation of \d+ bytes failed|heap out of memory|out of space|\bENOMEM\b|xmalloc",
    )
    .expect("static regex")
});

/// The exit status bwrap gives for a command killed by `signal`.
fn bwrap_status(signal: i32) -> i32 {
    128 + signal
}

/// The limit an agent that failed with `code` or `signal` and `stderr` hit, as its failure;
/// `None` when nothing says it hit one.
pub fn over_limit(
    code: Option<i32>,
    signal: Option<i32>,
    stderr: &str,
    limits: &Limits,
) -> Option<Failure> {
    let kind = if signal == Some(libc::SIGXCPU) || code == Some(bwrap_status(libc::SIGXCPU)) {
        LimitKind::CpuTime
    } else if PROCESSES.is_match(stderr) {
        LimitKind::Processes
    } else if MEMORY.is_match(stderr) {
        LimitKind::Memory
    } else {
        return None;
    };
    let matching = |line: &&str| match kind {
        LimitKind::Processes => PROCESSES.is_match(line),
        LimitKind::Memory => MEMORY.is_match(line),
        LimitKind::CpuTime => false,
    };
    let cause = stderr
        .lines()
        .map(str::trim)
        .find(matching)
        .map(crate::dispatch::output::one_sentence);
    Some(Failure::OverLimit {
        limit: kind.sentence(limits),
        cause,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_limit_is_recognised_by_what_the_agent_says_of_it() {
        let limits = Limits {
            processes: 64,
            memory_bytes: 256 << 20,
            cpu: std::time::Duration::from_secs(1),
        };
        let fork = over_limit(Some(2), None, "sh: 1: Cannot fork\n", &limits).unwrap();
        assert_eq!(
            fork.sentence(),
            "hit its process limit (64 processes: max_processes): sh: 1: Cannot fork"
        );
        let memory = over_limit(Some(1), None, "Traceback\nMemoryError\n", &limits).unwrap();
        assert!(
            memory
                .sentence()
                .starts_with("hit its memory limit (256 MiB"),
            "{memory:?}"
        );
        let cpu = over_limit(None, Some(libc::SIGXCPU), "", &limits).unwrap();
        assert!(cpu.sentence().contains("CPU-time limit (1s"), "{cpu:?}");
        let under_bwrap = over_limit(Some(128 + libc::SIGXCPU), None, "", &limits).unwrap();
        assert_eq!(under_bwrap, cpu);
        assert_eq!(
            over_limit(Some(1), None, "error: no credentials", &limits),
            None
        );
    }
}
