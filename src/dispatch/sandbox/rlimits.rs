//! An agent's limits ([`crate::types::Limits`]) as resource limits of its processes, set just
//! before the agent starts and inherited by everything it starts; no process of the agent can
//! raise them again (it has no `CAP_SYS_RESOURCE`).
//!
//! - **processes** (`RLIMIT_NPROC`): counted per uid *and user namespace*, so under bubblewrap
//!   the count is the sandbox's own processes and threads. It is set only there: without a
//!   user namespace it would count every process of the user's (their browser's threads
//!   too), and it does not bind root at all (the kernel exempts uid 0), which under bubblewrap
//!   the agent never is ([`super::identity`]).
//! - **memory** (`RLIMIT_DATA`): what each process may commit as data (heap and private
//!   writable mappings), not its address space: V8 and WebAssembly reserve tens of GiB they
//!   never commit, which `RLIMIT_AS` would refuse.
//! - **CPU time** (`RLIMIT_CPU`): `SIGXCPU` at the limit, which ends a process that does not
//!   catch it, and `SIGKILL` [`CPU_GRACE_SECS`] later for one that does.

use crate::types::Limits;

/// How long after `SIGXCPU` a process that caught it is killed.
pub const CPU_GRACE_SECS: u64 = 5;

/// The limits as plain numbers, so that the child between `fork` and `exec` and the helper
/// inside bwrap set them with system calls only; passed to the helper as `N,N,N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rlimits {
    pub processes: u64,
    pub memory_bytes: u64,
    pub cpu_secs: u64,
}

impl Rlimits {
    pub fn new(limits: &Limits) -> Rlimits {
        Rlimits {
            processes: limits.processes,
            memory_bytes: limits.memory_bytes,
            cpu_secs: limits.cpu.as_secs().max(1),
        }
    }

    /// `processes,memory,cpu`: the helper's `--limits` value.
    pub fn to_arg(&self) -> String {
        format!("{},{},{}", self.processes, self.memory_bytes, self.cpu_secs)
    }

    /// Reads [`Rlimits::to_arg`]'s text back.
    pub fn parse(text: &str) -> Result<Rlimits, String> {
        let numbers: Vec<u64> = text
            .split(',')
            .map(|n| n.trim().parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("--limits: `{text}` is not three numbers"))?;
        match numbers[..] {
            [processes, memory_bytes, cpu_secs] => Ok(Rlimits {
                processes,
                memory_bytes,
                cpu_secs,
            }),
            _ => Err(format!("--limits: `{text}` is not three numbers")),
        }
    }

    /// Sets the memory and CPU limits on the calling process (system calls only).
    pub fn apply_memory_and_cpu(&self) -> std::io::Result<()> {
        set(libc::RLIMIT_DATA, self.memory_bytes, self.memory_bytes)?;
        set(
            libc::RLIMIT_CPU,
            self.cpu_secs,
            self.cpu_secs.saturating_add(CPU_GRACE_SECS),
        )
    }

    /// Sets all three, the process limit included: inside bwrap's user namespace only.
    pub fn apply_all(&self) -> std::io::Result<()> {
        set(libc::RLIMIT_NPROC, self.processes, self.processes)?;
        self.apply_memory_and_cpu()
    }
}

/// The type of a resource's number in `libc` (glibc names its own).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
type Resource = libc::__rlimit_resource_t;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
type Resource = libc::c_int;

/// `setrlimit(resource, soft, hard)`, never above the limit the process already has.
fn set(resource: Resource, soft: u64, hard: u64) -> std::io::Result<()> {
    // SAFETY: getrlimit and setrlimit on stack values.
    unsafe {
        let mut now = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(resource, &mut now) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let hard = (hard as libc::rlim_t).min(now.rlim_max);
        let wanted = libc::rlimit {
            rlim_cur: (soft as libc::rlim_t).min(hard),
            rlim_max: hard,
        };
        if libc::setrlimit(resource, &wanted) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_survive_the_helpers_command_line() {
        let limits = Rlimits {
            processes: 64,
            memory_bytes: 256 << 20,
            cpu_secs: 90,
        };
        assert_eq!(Rlimits::parse(&limits.to_arg()), Ok(limits));
        assert!(Rlimits::parse("1,2").is_err());
        assert!(Rlimits::parse("a,b,c").is_err());
    }
}
