//! Processes found by a marker in their command line. An agent under bubblewrap has a PID
//! namespace of its own, so a pid it writes down means nothing outside: a stand-in starts its
//! child as `sh -c 'sleep 300; true' MARKER` instead, and the test looks for MARKER in every
//! process's `/proc/<pid>/cmdline` on the host.

use std::time::{Duration, Instant};

/// A word no other process has in its command line.
pub fn marker(what: &str) -> String {
    format!(
        "deep-review-test-{what}-{}-{}",
        std::process::id(),
        fastrand::u64(..)
    )
}

/// A shell line that starts a child carrying `marker` and waits for it.
pub fn child_with(marker: &str) -> String {
    format!("sh -c 'sleep 300; true' {marker} &\nwait")
}

/// The live (not zombie) processes whose command line contains `marker`.
pub fn with_marker(marker: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| {
                    s.rsplit(')')
                        .next()
                        .unwrap_or("")
                        .trim_start()
                        .starts_with('Z')
                })
                .unwrap_or(true);
            !zombie
                && cmdline
                    .split(|b| *b == 0)
                    .any(|arg| arg == marker.as_bytes())
        })
        .collect()
}

/// Waits up to `within` for a process with `marker` to appear.
pub fn wait_present(marker: &str, within: Duration) -> bool {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if !with_marker(marker).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    false
}

/// Waits up to `within` for every process with `marker` to be gone.
pub fn wait_gone(marker: &str, within: Duration) -> bool {
    let end = Instant::now() + within;
    loop {
        if with_marker(marker).is_empty() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}
