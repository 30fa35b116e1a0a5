#!/usr/bin/env bash
# Checks the GitLab CI/CD component (templates/deep-review.yml) the way GitLab reads it:
# gitlab-ci-local (npm, pinned, cached) includes it with inputs in a scratch project, expands
# `spec: inputs` and validates the result against GitLab's CI JSON schema (which it ships);
# the review job must run in merge request pipelines and only there, the Code Quality baseline
# job on pushes to the default branch and only there; ShellCheck reads the review job's script;
# and the install script the template carries is scripts/install-release.sh, byte for byte.
#
#   scripts/lint-gitlab-ci.sh
#
# gitlab-ci-local lives in $HOME/.cache/deep-review/lint-gitlab-ci (DEEP_REVIEW_LINT_GITLAB_DIR
# overrides it). ShellCheck and PyYAML come from scripts/lint-actions.sh's environment (.ci/run
# runs that first). Nothing is downloaded once the pinned version is there.
set -euo pipefail
cd "$(dirname "$0")/.."

# 4.72.0: later releases use Set methods that Node 22 brought; Debian's Node is 20.
GITLAB_CI_LOCAL_VERSION="4.72.0"

dir="${DEEP_REVIEW_LINT_GITLAB_DIR:-$HOME/.cache/deep-review/lint-gitlab-ci}"
gcl="$dir/node_modules/.bin/gitlab-ci-local"
lint_venv="${DEEP_REVIEW_LINT_VENV:-$HOME/.cache/deep-review/lint-actions}"

if ! command -v npm >/dev/null 2>&1; then
  echo "lint-gitlab-ci: npm is not on PATH; install Node.js 20 or newer (apt-get install nodejs npm)" >&2
  exit 1
fi
if [ "$("$gcl" --version 2>/dev/null | tail -1)" != "$GITLAB_CI_LOCAL_VERSION" ]; then
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"name":"deep-review-lint-gitlab-ci","private":true}' >"$dir/package.json"
  echo "lint-gitlab-ci: installing gitlab-ci-local@$GITLAB_CI_LOCAL_VERSION into $dir" >&2
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error \
    "gitlab-ci-local@$GITLAB_CI_LOCAL_VERSION" >&2
fi
if [ ! -x "$lint_venv/bin/shellcheck" ] || ! "$lint_venv/bin/python" -c 'import yaml' 2>/dev/null; then
  echo "lint-gitlab-ci: ShellCheck and PyYAML are not in $lint_venv: run scripts/lint-actions.sh first" >&2
  exit 1
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/templates"
cp templates/deep-review.yml "$scratch/templates/"
cat >"$scratch/.gitlab-ci.yml" <<'YAML'
include:
  - local: templates/deep-review.yml
    inputs:
      version: v0.1.0
      fail-on: important
      agents: claude,codex
YAML
git -C "$scratch" init -q
git -C "$scratch" -c user.name=lint -c user.email=lint@localhost add -A
git -C "$scratch" -c user.name=lint -c user.email=lint@localhost commit -q -m lint

gcl_run() { (cd "$scratch" && GCL_IGNORE_PREDEFINED_VARS=CI_PIPELINE_SOURCE,CI_COMMIT_BRANCH,CI_DEFAULT_BRANCH "$gcl" "$@" 2>/dev/null); }
status=0

echo "lint-gitlab-ci: gitlab-ci-local $GITLAB_CI_LOCAL_VERSION --preview (inputs expanded, GitLab's CI schema)" >&2
if ! gcl_run --preview --json-schema-validation >"$scratch/preview.yml"; then
  (cd "$scratch" && "$gcl" --preview --json-schema-validation) >&2 || true
  echo "lint-gitlab-ci: templates/deep-review.yml does not pass GitLab's CI schema" >&2
  status=1
fi

# The jobs a pipeline of source $1 on branch $2 (default branch main) would run.
listed() {
  gcl_run --list --variable "CI_PIPELINE_SOURCE=$1" --variable "CI_COMMIT_BRANCH=$2" \
    --variable CI_DEFAULT_BRANCH=main | awk 'NR > 1 { print $1, $2, $3 }'
}
if [ "$(listed merge_request_event "")" != "deep-review test on_success" ]; then
  echo "lint-gitlab-ci: the review job does not run (alone) in a merge request pipeline: $(listed merge_request_event "")" >&2
  status=1
fi
if [ "$(listed push main)" != "deep-review-codequality-baseline test on_success" ]; then
  echo "lint-gitlab-ci: a push to the default branch must run the Code Quality baseline job and nothing else: $(listed push main)" >&2
  status=1
fi
if [ -n "$(listed push feature)" ]; then
  echo "lint-gitlab-ci: a job runs in a push pipeline of another branch, where there is no merge request: $(listed push feature)" >&2
  status=1
fi

if [ -s "$scratch/preview.yml" ]; then
  echo "lint-gitlab-ci: ShellCheck of the job's script" >&2
  "$lint_venv/bin/python" - "$scratch/preview.yml" "$scratch/script.sh" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if isinstance(d, dict)]
job = next(d["deep-review"] for d in docs if "deep-review" in d)
report = job["artifacts"]["reports"]["codequality"]
assert report == "gl-code-quality-report.json", report
with open(sys.argv[2], "w") as f:
    f.write("#!/bin/sh\n" + "\n".join(job["script"]) + "\n")
# The heredoc the job writes its install script from, as the shell reads it.
script = "\n".join(job["script"])
start = script.index("<<'INSTALL_RELEASE'\n") + len("<<'INSTALL_RELEASE'\n")
end = script.index("\nINSTALL_RELEASE\n", start)
with open(sys.argv[2] + ".install-release.sh", "w") as f:
    f.write(script[start:end] + "\n")
PY
  "$lint_venv/bin/shellcheck" -s sh "$scratch/script.sh" || status=1
  if ! cmp -s scripts/install-release.sh "$scratch/script.sh.install-release.sh"; then
    echo "lint-gitlab-ci: the install script in templates/deep-review.yml differs from scripts/install-release.sh (diff below): copy the script into the template's heredoc" >&2
    diff scripts/install-release.sh "$scratch/script.sh.install-release.sh" >&2 || true
    status=1
  fi
fi

if [ "$status" -ne 0 ]; then
  echo "lint-gitlab-ci: FAILED" >&2
  exit 1
fi
echo "lint-gitlab-ci: templates/deep-review.yml passes GitLab's CI schema, reviews in merge request pipelines only (its baseline on the default branch), its script passes ShellCheck and carries scripts/install-release.sh" >&2
