#!/usr/bin/env bash
# Installs GitHub's own descriptions of its APIs from the npm registry, at pinned versions, into a
# cache folder, for the fake GitHub of the tests (tests/integration/support/fake_github.rs): it
# checks every REST request against its operation in the OpenAPI description (@octokit/openapi,
# generated from github/rest-api-description) and every GraphQL document against GitHub's
# schema (@octokit/graphql-schema). Nothing is fetched when the tests run.
#
#   scripts/install-github-descriptions.sh    # prints the folder that holds both packages
#
# The folder defaults to $HOME/.cache/deep-review/github-descriptions; DEEP_REVIEW_GITHUB_DESCRIPTIONS_DIR
# overrides it. When both are there at their pinned versions, nothing is downloaded. Progress
# goes to stderr so that stdout holds only the folder.
set -euo pipefail

OPENAPI_VERSION="23.0.2"          # GitHub's REST description (api.github.com), OpenAPI 3.0
GRAPHQL_SCHEMA_VERSION="15.26.1"  # GitHub's GraphQL schema (SDL)

dir="${DEEP_REVIEW_GITHUB_DESCRIPTIONS_DIR:-$HOME/.cache/deep-review/github-descriptions}"
modules="$dir/node_modules"

if ! command -v npm >/dev/null 2>&1; then
  echo "install-github-descriptions: npm is not on PATH; install Node.js 20 or newer (apt-get install nodejs npm)" >&2
  exit 1
fi

installed_version() {
  local manifest="$modules/$1/package.json"
  [ -f "$manifest" ] || return 0
  node -e 'try { process.stdout.write(require(process.argv[1]).version || "") } catch (e) {}' "$manifest"
}

if [ "$(installed_version @octokit/openapi)" != "$OPENAPI_VERSION" ] \
  || [ "$(installed_version @octokit/graphql-schema)" != "$GRAPHQL_SCHEMA_VERSION" ] \
  || [ ! -f "$modules/@octokit/openapi/generated/api.github.com.json" ] \
  || [ ! -f "$modules/@octokit/graphql-schema/schema.graphql" ]; then
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"name":"deep-review-github-descriptions","private":true}' >"$dir/package.json"
  echo "install-github-descriptions: installing @octokit/openapi@$OPENAPI_VERSION and @octokit/graphql-schema@$GRAPHQL_SCHEMA_VERSION into $dir" >&2
  start=$(date +%s)
  # --ignore-scripts: data only; the packages' own dependencies (graphql, for the schema's
  # validate helper) are not needed to read the files.
  npm install --prefix "$dir" --no-save --no-audit --no-fund --ignore-scripts --omit=peer \
    --loglevel=error "@octokit/openapi@$OPENAPI_VERSION" "@octokit/graphql-schema@$GRAPHQL_SCHEMA_VERSION" >&2
  echo "install-github-descriptions: done in $(( $(date +%s) - start )) s" >&2
else
  echo "install-github-descriptions: @octokit/openapi@$OPENAPI_VERSION and @octokit/graphql-schema@$GRAPHQL_SCHEMA_VERSION already in $dir" >&2
fi

for file in "@octokit/openapi/generated/api.github.com.json" "@octokit/graphql-schema/schema.graphql"; do
  if [ ! -f "$modules/$file" ]; then
    echo "install-github-descriptions: $modules/$file is missing after the install; remove $dir and run again" >&2
    exit 1
  fi
done

echo "$modules"
