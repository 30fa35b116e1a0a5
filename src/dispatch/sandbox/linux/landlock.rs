//! The Landlock layer: rules the kernel enforces on a process and everything it starts, which
//! no later code in that process can lift.
//!
//! Under bubblewrap it is the second layer, applied by the helper inside the sandbox just before
//! it runs the agent (Landlock forbids mounting, so bwrap must have built the sandbox first).
//! Without bubblewrap it is the only one, applied between `fork` and `exec` of the agent. Either
//! way it holds:
//!
//! - **files**: read (and execute) only what [`Grants`] lists; write only the agent's
//!   throwaway home, its scratch directory and what `sandbox_write` adds;
//! - **TCP** (Landlock ABI 4, Linux 6.7): connect only to the listed ports (the egress proxy and
//!   the forwarded local endpoints), bind none;
//! - **scopes** (ABI 6, Linux 6.12): no signal to a process outside the sandbox, no connection to
//!   an abstract UNIX socket made outside it;
//! - **ptrace** (every ABI): no access to a process outside the sandbox, which is what keeps
//!   `/proc/<pid>/environ` of deep-review and of the user's other processes closed, unless the
//!   process holds `CAP_SYS_PTRACE`; so as root the capabilities are dropped too
//!   ([`drop_capabilities`]).
//!
//! A kernel with an older ABI enforces what it has: the report names the ABI, and
//! [`crate::dispatch::sandbox::Layers`] says what that leaves uncovered.

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, Scope, path_beneath_rules,
};
use serde::{Deserialize, Serialize};

use crate::dispatch::sandbox::{Egress, Grants};

/// The newest Landlock ABI whose rights are asked for; a kernel with less enforces what it has.
const ABI_WANTED: ABI = ABI::V6;

/// The Landlock ABI this kernel speaks (0: none), asked once.
pub fn kernel_abi() -> i32 {
    static ABI_VERSION: OnceLock<i32> = OnceLock::new();
    *ABI_VERSION.get_or_init(|| {
        const LANDLOCK_CREATE_RULESET_VERSION: libc::c_ulong = 1;
        // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns a number.
        let version = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        };
        i32::try_from(version).unwrap_or(0).max(0)
    })
}

/// Whether this kernel enforces Landlock at all.
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(ABI::V1))
            .and_then(|r| r.create())
            .is_ok()
    })
}

/// The rules of one agent, as data: built by deep-review, handed to the helper inside bwrap as
/// JSON, or built into a ruleset before `fork` without bwrap.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    /// Read and execute beneath these.
    pub read: Vec<PathBuf>,
    /// Read, write, create and remove beneath these.
    pub write: Vec<PathBuf>,
    /// Single files (not directories) that may be written: `/dev/null`.
    pub write_files: Vec<PathBuf>,
    /// TCP ports the agent may connect to; `None` leaves TCP to other layers (an open network).
    pub connect_tcp: Option<Vec<u16>>,
}

impl Rules {
    /// The rules for `grants`, with TCP limited to the loopback ports of `egress` (an open
    /// network leaves TCP alone).
    pub fn for_grants(grants: &Grants, egress: &Egress) -> Rules {
        let mut write_files = grants.write_files.clone();
        // A socket is connected to by path: Landlock (before ABI 9) does not govern that, but
        // the path must be readable for the bind to be of use.
        write_files.extend(grants.sockets.iter().cloned());
        Rules {
            read: grants.read.clone(),
            write: grants.write.clone(),
            write_files,
            connect_tcp: egress.tcp_ports(),
        }
    }

    /// The ruleset, with every path opened now. Paths that do not exist are skipped: they
    /// cannot be reached anyway.
    pub fn build(&self) -> Result<RulesetCreated, String> {
        let abi = ABI_WANTED;
        let existing = |paths: &[PathBuf]| -> Vec<PathBuf> {
            paths.iter().filter(|p| p.exists()).cloned().collect()
        };
        let file_rights = AccessFs::WriteFile | AccessFs::ReadFile | AccessFs::Truncate;
        let mut ruleset = Ruleset::default()
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| r.scope(Scope::from_all(abi)));
        if self.connect_tcp.is_some() {
            ruleset = ruleset.and_then(|r| r.handle_access(AccessNet::from_all(abi)));
        }
        let mut created = ruleset
            .and_then(|r| r.create())
            .and_then(|r| {
                r.add_rules(path_beneath_rules(
                    existing(&self.read),
                    AccessFs::from_read(abi),
                ))
            })
            .and_then(|r| {
                r.add_rules(path_beneath_rules(
                    existing(&self.write),
                    AccessFs::from_all(abi),
                ))
            })
            .and_then(|r| r.add_rules(path_beneath_rules(existing(&self.write_files), file_rights)))
            .map_err(|e| format!("could not build the Landlock rules: {e}"))?;
        for port in self.connect_tcp.iter().flatten() {
            created = created
                .add_rule(NetPort::new(*port, AccessNet::ConnectTcp))
                .map_err(|e| format!("could not build the Landlock rules: {e}"))?;
        }
        Ok(created)
    }
}

/// A ruleset ready to be enforced in a child process: `pre_exec` takes it out and applies it.
pub struct Prepared(Mutex<Option<RulesetCreated>>);

impl Prepared {
    pub fn new(ruleset: RulesetCreated) -> Prepared {
        Prepared(Mutex::new(Some(ruleset)))
    }

    /// Enforces the rules on the calling process. Called in the child between `fork` and
    /// `exec` (no allocation beyond the error path; the mutex is this child's own copy), or by
    /// the helper inside bwrap just before it runs the agent.
    pub fn enforce(&self) -> std::io::Result<()> {
        let ruleset = self
            .0
            .lock()
            .ok()
            .and_then(|mut r| r.take())
            .ok_or_else(|| std::io::Error::other("the sandbox rules were already used"))?;
        enforce(ruleset)
    }
}

/// Enforces `ruleset` on the calling thread's process (and sets `no_new_privs`, which Landlock
/// needs and which also keeps setuid programs from gaining anything).
pub fn enforce(ruleset: RulesetCreated) -> std::io::Result<()> {
    match ruleset.restrict_self() {
        Ok(status) if status.ruleset != landlock::RulesetStatus::NotEnforced => Ok(()),
        Ok(_) => Err(std::io::Error::other(
            "Landlock is not enforced by this kernel",
        )),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    }
}

/// The highest capability number of this kernel (`/proc/sys/kernel/cap_last_cap`), read in the
/// parent: the child between `fork` and `exec` may not read files.
pub fn last_capability() -> u32 {
    static LAST: OnceLock<u32> = OnceLock::new();
    *LAST.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(63)
    })
}

/// Drops every capability for good: the bounding set (so `exec` cannot give any back, root or
/// not), the ambient set, and the effective, permitted and inheritable sets. A process of root
/// without capabilities is still uid 0 for file permissions (Landlock limits those), but it can
/// no longer pass Landlock's ptrace check (`CAP_SYS_PTRACE`), signal or read the environment of
/// other users' processes, or load anything into the kernel. Async-signal-safe: system calls
/// only. For a user without capabilities it changes nothing and fails nowhere.
pub fn drop_capabilities(last_cap: u32) -> std::io::Result<()> {
    // SAFETY: prctl and capset with plain integers and a stack buffer.
    unsafe {
        for cap in 0..=last_cap {
            // EINVAL past the kernel's last capability, EPERM without CAP_SETPCAP (not root):
            // either way the capability is not ours to use.
            libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0);
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        );
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
        let mut header = Header {
            version: LINUX_CAPABILITY_VERSION_3,
            pid: 0,
        };
        let data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
