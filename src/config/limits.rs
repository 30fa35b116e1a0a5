//! The per-agent limits in a config file: `max_processes = 256`, `max_memory = "4GiB"`,
//! `max_cpu_time = "1h"`. Each is checked where it is read, with an error that names the
//! value and what to write instead; what a file leaves out is the layer below's (in the end
//! [`crate::types::Limits::default`]).

use std::time::Duration;

use crate::types::Limits;

/// The fewest processes a limit may allow: a CLI with a shell tool needs a handful.
const MIN_PROCESSES: u64 = 8;
/// The least memory a limit may allow: below this not even a shell starts.
const MIN_MEMORY: u64 = 16 << 20;

/// What one file says of an agent's limits; `None` leaves a limit to the layer below.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LimitsLayer {
    pub processes: Option<u64>,
    pub memory_bytes: Option<u64>,
    pub cpu: Option<Duration>,
}

impl LimitsLayer {
    /// Whether the file sets any limit (an untrusted file's are dropped, and named).
    pub fn is_set(&self) -> bool {
        self.processes.is_some() || self.memory_bytes.is_some() || self.cpu.is_some()
    }

    /// This layer over `base`: what it sets wins.
    pub fn over(self, base: LimitsLayer) -> LimitsLayer {
        LimitsLayer {
            processes: self.processes.or(base.processes),
            memory_bytes: self.memory_bytes.or(base.memory_bytes),
            cpu: self.cpu.or(base.cpu),
        }
    }

    /// The limits an agent runs with: these, and the defaults for the rest.
    pub fn resolve(&self) -> Limits {
        let default = Limits::default();
        Limits {
            processes: self.processes.unwrap_or(default.processes),
            memory_bytes: self.memory_bytes.unwrap_or(default.memory_bytes),
            cpu: self.cpu.unwrap_or(default.cpu),
        }
    }
}

/// `max_processes`: a whole number of at least [`MIN_PROCESSES`].
pub fn parse_processes(value: i64) -> Result<u64, String> {
    u64::try_from(value)
        .ok()
        .filter(|n| *n >= MIN_PROCESSES)
        .ok_or_else(|| {
            format!(
                "`{value}` is not a process limit: write a whole number of at least \
                 {MIN_PROCESSES} (the default is {})",
                crate::types::limits::DEFAULT_MAX_PROCESSES
            )
        })
}

/// `max_memory`: a size with its unit (`512MiB`, `4GiB`), of at least 16 MiB.
pub fn parse_memory(text: &str) -> Result<u64, String> {
    let hint = "write a size like `512MiB` or `4GiB` (the default is 8GiB)";
    let bytes = text
        .trim()
        .parse::<bytesize::ByteSize>()
        .map_err(|_| format!("`{text}` is not a size: {hint}"))?
        .as_u64();
    if bytes < MIN_MEMORY {
        return Err(format!("`{text}` is too little to run a CLI: {hint}"));
    }
    Ok(bytes)
}

/// `max_cpu_time`: a duration of at least a second (CPU time is counted in whole seconds).
pub fn parse_cpu(text: &str) -> Result<Duration, String> {
    let d = crate::text::parse_duration(text)?;
    if d < Duration::from_secs(1) {
        return Err(format!(
            "`{text}` is under a second: CPU time is limited in whole seconds"
        ));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_read_with_their_units_and_refused_with_what_to_write() {
        assert_eq!(parse_memory("256MiB"), Ok(256 << 20));
        assert_eq!(parse_memory("4 GiB"), Ok(4 << 30));
        assert!(
            parse_memory("lots")
                .unwrap_err()
                .contains("`lots` is not a size")
        );
        assert!(parse_memory("1KiB").unwrap_err().contains("too little"));
        assert_eq!(parse_processes(64), Ok(64));
        assert!(parse_processes(-1).unwrap_err().contains("at least 8"));
        assert!(parse_processes(2).is_err());
        assert_eq!(parse_cpu("90s"), Ok(Duration::from_secs(90)));
        assert!(parse_cpu("0s").is_err());
    }

    #[test]
    fn a_layer_sets_what_it_names_and_the_defaults_fill_the_rest() {
        let user = LimitsLayer {
            processes: Some(100),
            ..LimitsLayer::default()
        };
        let repo = LimitsLayer {
            memory_bytes: Some(1 << 30),
            ..LimitsLayer::default()
        };
        let merged = repo.over(user).resolve();
        assert_eq!(merged.processes, 100);
        assert_eq!(merged.memory_bytes, 1 << 30);
        assert_eq!(merged.cpu, Limits::default().cpu);
    }
}
