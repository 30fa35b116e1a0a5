//! deep-review: runs several AI code reviewers on one change, checks every finding against the
//! code, and consolidates them into one Deep Review report.
//!
//! The pipeline, one module per stage, each a plain function from one value to the next:
//!
//! ```text
//! target → brief → dispatch → parse → verify → consolidate → report → store
//! ```
//!
//! [`types`] holds the data that flows between them; [`text`] the small helpers they share;
//! [`rounds`] ties a change's reports together across its rounds of review.
//! [`forge`] reads pull requests and posts reports back to them (GitHub today).

pub mod bench;
pub mod brief;
pub mod bundle;
pub mod cli;
pub mod config;
pub mod consolidate;
pub mod cost;
pub mod dispatch;
pub mod forge;
pub mod git;
pub mod outcomes;
pub mod parse;
pub mod pipeline;
pub mod redact;
pub mod report;
pub mod rounds;
pub mod store;
pub mod synthesize;
pub mod target;
pub mod text;
pub mod types;
pub mod verify;
