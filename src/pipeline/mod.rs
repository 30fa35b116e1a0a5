//! The pipeline as one library call, for every front-end (the CLI today, a GitHub Action or a
//! replay tomorrow):
//!
//! ```text
//! plan:     target::resolve → config → agents → brief::build            (nothing runs or is written)
//! execute:  store (bundle) → dispatch → analyze → report → store
//! analyze:  parse → verify → consolidate                               (runs, saved reviews or a bundle)
//! resolve:  the author's decisions on a stored report, into its Resolution
//! ```
//!
//! Front-ends parse their arguments, call these, and print what comes back; none of them holds
//! a stage of its own.

pub mod analyze;
pub mod checkout;
pub mod execute;
pub mod interrupt;
pub mod plan;
pub mod resolve;

pub use analyze::{Analysis, analyze_reviews, analyze_runs, from_bundle, meta_for};
pub use execute::{RunOptions, RunOutcome, execute, resume};
pub use plan::{Plan, PlanRequest, plan};
