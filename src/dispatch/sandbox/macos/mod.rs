//! The macOS layer: Seatbelt. Each agent runs under `/usr/bin/sandbox-exec` with a profile made
//! from the policy ([`seatbelt`]); deep-review's filtering proxy listens on the host's loopback
//! as without bubblewrap on Linux, and the profile lets the agent reach that port alone. With no
//! `PR_SET_PDEATHSIG` here, a watcher kills the agent's group if deep-review dies
//! ([`super::watch`]).
//!
//! The profile's renderer is plain text from data and is compiled for the tests on Linux too;
//! the launch is macOS's only.

pub mod seatbelt;
#[cfg(test)]
mod seatbelt_tests;

#[cfg(target_os = "macos")]
mod launch;
#[cfg(target_os = "macos")]
pub use launch::{ChildSteps, Handoff, NEEDS_WATCHER, Tools, support};
