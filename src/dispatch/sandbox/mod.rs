//! The OS sandbox an agent CLI runs in.
//!
//! An agent reads the change under review, and the change can be written to steer it: prompt
//! injection is the expected attack. The CLIs' own "read-only" modes are rules the model is asked
//! to follow inside the CLI; they do not confine the process. So every agent process runs in a
//! sandbox built from established parts, and the sandbox holds against the agent itself, also
//! when deep-review runs as root (CI containers do):
//!
//! - **bubblewrap** (`bwrap`, the sandbox of Flatpak and of Claude Code's own sandbox runtime),
//!   when installed and when the kernel lets it make namespaces ([`linux::bwrap`]): its own user, PID,
//!   mount, network, IPC and UTS namespaces; a fresh `/proc` that shows only the agent's
//!   processes; the system, the checkout and the repository's objects read-only; a private
//!   `/tmp` and `/dev/shm`; no `/run`, `/var`, home directory or UNIX socket of the user's; no
//!   capabilities; a new session (no controlling terminal, so `/dev/tty` cannot be opened); and
//!   every process of the agent killed with the run, also when deep-review is killed.
//! - **Landlock** inside it ([`linux::landlock`]), applied by deep-review's helper
//!   ([`linux::inner`]) just before the agent starts: files, TCP ports, signals and abstract sockets.
//! - **A throwaway state home** ([`home`]): the CLI's configuration directories are copies made
//!   for the run, seeded with the user's login, so nothing the agent writes reaches the user's own
//!   configuration.
//! - **Egress only to its provider** ([`crate::dispatch::network`]): the agent's network
//!   namespace has only a loopback device, on which deep-review's filtering proxy listens.
//!
//! - **Seatbelt** on macOS ([`macos::seatbelt`]): `sandbox-exec` with a profile made from the
//!   same policy, closed by default: reads and writes where the grants say, connections only to
//!   the proxy's loopback port, signals and process information only within the sandbox, a
//!   short list of Mach services; a watcher ([`watch`]) kills the agent's group if deep-review
//!   dies, as `PR_SET_PDEATHSIG` does on Linux.
//!
//! Without bubblewrap, Landlock alone (with the capabilities dropped, a new session and the
//! proxy) is what is left, and [`Layers`] says what that does not cover. Where no layer can be
//! made (no Landlock, no `sandbox-exec`, another platform), agent CLIs do not start unless the
//! user chooses `DEEP_REVIEW_SANDBOX=none`: then only the CLI's own mode and the throwaway home
//! remain, and the report says so.
//!
//! The layout: [`policy`] says what an agent may do (platform-free data), [`layers`] which
//! layers a run gets here, [`home`] and [`launch`] what every platform shares, and one module
//! per platform renders the policy into its own mechanism. This file is the only place that
//! picks a platform.

pub mod home;
pub mod launch;
pub mod layers;
pub mod policy;
pub mod rlimits;
pub mod watch;

// The platform's layers. Each platform module offers the same few items to the shared code:
// `support()` (what this machine has), `ChildSteps` (what the child does between `fork` and
// `exec`), `Handoff` (listeners handed out of the sandbox after the spawn) and
// `AgentSandbox::launch_confined` (the launch of its layers).
#[cfg(target_os = "linux")]
pub mod linux;
#[cfg(target_os = "linux")]
use linux as platform;
// Seatbelt's profile is plain text made from the policy: its renderer is also compiled for the
// tests on Linux, which check it (the launch inside is macOS's only).
#[cfg(any(target_os = "macos", test))]
pub mod macos;
#[cfg(target_os = "macos")]
use macos as platform;

pub use layers::{
    Layers, Mode, Plan, Support, available, default_helper, describe_machine, describe_network,
    layers_for, support, unavailable_sentence,
};
pub use policy::{AgentPlaces, Egress, Grants};
