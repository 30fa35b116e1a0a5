//! Shared test support: the fake model server, the fake GitHub API, the agent CLIs pointed at it, throwaway git repos.
//!
//! Each integration test crate includes this with `mod support;` and uses only part of it.
#![allow(dead_code)]

pub mod agents;
pub mod bench_gen;
pub mod bitbucket_description;
pub mod fake_bitbucket;
pub mod fake_bitbucket_insights;
pub mod fake_bitbucket_routes;
pub mod fake_github;
pub mod fake_github_diff;
pub mod fake_gitlab;
pub mod fake_model;
pub mod git;
pub mod github_graphql;
pub mod github_rest;
pub mod http_server;
pub mod procs;
pub mod repo;
pub mod run;
pub mod sdks;
pub mod shared;
pub mod standin;
