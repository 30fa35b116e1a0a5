//! What one agent may take of the machine: processes, memory and CPU time. The agent's timeout
//! bounds its wall time; these bound what it does in that time (a fork bomb, a memory hog, a
//! busy loop steered by the change under review), so that one agent cannot starve the others,
//! deep-review or the user's machine.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The limits of one agent's processes (`max_processes`, `max_memory`, `max_cpu_time` in its
/// config table). The defaults are generous for the real CLIs: node starts a dozen threads and
/// its tools start more; V8 commits a few GiB at most, and reserves far more address space
/// than it commits, so the memory limit bounds committed data, never address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// The most processes and threads the agent may have at once.
    pub processes: u64,
    /// The most memory each of its processes may commit (its data segment), in bytes.
    pub memory_bytes: u64,
    /// The most CPU time each of its processes may use.
    pub cpu: Duration,
}

/// 1,024 processes and threads: tens of times what a CLI with its tools uses.
pub const DEFAULT_MAX_PROCESSES: u64 = 1024;
/// 8 GiB per process: twice what V8's default heap may grow to.
pub const DEFAULT_MAX_MEMORY: u64 = 8 << 30;
/// Two hours per process: more than the default timeout lets it use on two cores.
pub const DEFAULT_MAX_CPU: Duration = Duration::from_secs(2 * 60 * 60);

impl Default for Limits {
    fn default() -> Self {
        Limits {
            processes: DEFAULT_MAX_PROCESSES,
            memory_bytes: DEFAULT_MAX_MEMORY,
            cpu: DEFAULT_MAX_CPU,
        }
    }
}

impl Limits {
    /// `64 processes`: the process limit as the report names it.
    pub fn processes_text(&self) -> String {
        format!("{} processes", self.processes)
    }

    /// `256 MiB`: the memory limit in the largest binary unit that divides it.
    pub fn memory_text(&self) -> String {
        let bytes = self.memory_bytes;
        for (unit, size) in [
            ("TiB", 1u64 << 40),
            ("GiB", 1 << 30),
            ("MiB", 1 << 20),
            ("KiB", 1 << 10),
        ] {
            if bytes >= size && bytes.is_multiple_of(size) {
                return format!("{} {unit}", bytes / size);
            }
        }
        format!("{bytes} bytes")
    }

    /// `90s`: the CPU-time limit as a duration.
    pub fn cpu_text(&self) -> String {
        crate::text::duration_short(self.cpu)
    }

    /// The three limits in one line, for `meta.json`'s readers and `deep-review agents`.
    pub fn describe(&self) -> String {
        format!(
            "{}, {} and {} of CPU per process",
            self.processes_text(),
            self.memory_text(),
            self.cpu_text()
        )
    }
}

/// Which limit an agent hit, as its failure names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    Processes,
    Memory,
    CpuTime,
}

impl LimitKind {
    /// `process limit (64 processes: max_processes)`: the limit, its value and its key.
    pub fn sentence(self, limits: &Limits) -> String {
        match self {
            LimitKind::Processes => {
                format!("process limit ({}: max_processes)", limits.processes_text())
            }
            LimitKind::Memory => format!("memory limit ({}: max_memory)", limits.memory_text()),
            LimitKind::CpuTime => format!("CPU-time limit ({}: max_cpu_time)", limits.cpu_text()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_named_in_their_units() {
        let limits = Limits {
            processes: 64,
            memory_bytes: 256 << 20,
            cpu: Duration::from_secs(1),
        };
        assert_eq!(
            LimitKind::Processes.sentence(&limits),
            "process limit (64 processes: max_processes)"
        );
        assert_eq!(
            LimitKind::Memory.sentence(&limits),
            "memory limit (256 MiB: max_memory)"
        );
        assert_eq!(limits.cpu_text(), "1s");
        assert_eq!(Limits::default().memory_text(), "8 GiB");
        let odd = Limits {
            memory_bytes: 1000,
            ..limits
        };
        assert_eq!(odd.memory_text(), "1000 bytes");
    }
}
