//! The Linux layers: bubblewrap's namespaces ([`bwrap`]), Landlock ([`landlock`]) applied by
//! deep-review's helper inside bwrap ([`inner`]) or in the child without it, their launches
//! ([`launch`]), and what the child does between `fork` and `exec` on Linux ([`child`]).
//! Compiled on Linux only (the parent module fences it).

pub mod bwrap;
pub mod child;
pub mod identity;
pub mod inner;
pub mod landlock;
pub mod launch;

pub use child::ChildSteps;
pub use launch::{Handoff, Tools};

use super::layers::Support;

/// The child dies with deep-review by `PR_SET_PDEATHSIG` ([`child`]): no watcher is needed.
pub const NEEDS_WATCHER: bool = false;

/// What this machine offers: bubblewrap (probed by running it) and the kernel's Landlock ABI.
pub fn support() -> Support {
    Support {
        bwrap: bwrap::probe(),
        landlock_abi: if landlock::available() {
            landlock::kernel_abi()
        } else {
            0
        },
        seatbelt: Err("Seatbelt is macOS's sandbox".into()),
    }
}
