//! Verify stage: every finding checked against the repository at head and the merge-base.

pub mod coverage;
