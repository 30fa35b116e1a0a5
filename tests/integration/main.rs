//! The integration tests, in one binary (as ripgrep does): one link instead of one per file,
//! which is most of a test build's time on two cores.
//!
//! Tests that need something outside the project (the agent CLIs from npm, `../shared`,
//! Chromium, the local model server) are `#[ignore = "needs ..."]`: `cargo test` lists them as
//! ignored with the reason, and `cargo nextest run --run-ignored all` (what `.ci/run` runs)
//! runs them, failing with what to install when the tool is missing.

mod support;

mod agent_output_limits;
mod bench_learn;
mod bench_scoring;
mod brief_budget;
mod brief_build;
mod brief_fixtures;
mod brief_pack;
mod brief_steering;
mod cli_outputs;
mod config_load;
mod consolidate_fixtures;
mod consolidate_raw;
mod consolidate_verify;
mod dispatch_agents_cli;
mod dispatch_env;
mod dispatch_runner;
mod dispatch_signal;
mod docs_agree;
mod docs_reference;
mod durations;
mod e2e_cli_smoke;
mod e2e_fake_model;
mod e2e_run;
mod escaped_text;
mod forge_bitbucket;
mod forge_github;
mod forge_gitlab;
mod http_local_model;
mod http_reviewers;
mod http_sdk_conformance;
mod install_release;
mod install_release_support;
mod new_user;
mod not_a_review;
mod outcomes_confidence;
mod outcomes_stats;
mod parse_fixtures;
mod parse_hostile;
mod parse_variants;
mod report_digests;
mod report_html_browser;
mod report_sarif;
mod report_structure;
mod review_floods;
mod rounds;
mod run_dry_run;
mod run_pipeline;
mod sandbox_attacks;
mod sandbox_confinement;
mod sandbox_program_path;
mod sandbox_seams;
mod secrets_and_path;
mod store_location;
mod store_record;
mod target_diff;
mod target_environment;
mod target_resolve;
mod target_uncommitted;
mod trust_config;
mod verify_checkout;
mod verify_coverage;
mod verify_findings;
mod verify_quotes;
mod version_commit;
