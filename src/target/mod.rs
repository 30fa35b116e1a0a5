//! Target stage: what is reviewed. A branch, `BASE..HEAD` or the current branch, resolved to
//! merge-base, commits and changed files with hunks.

pub mod diff;
pub mod git;
