#!/usr/bin/env bash
# Installs the model providers' official Python SDKs from PyPI, at pinned versions, into a cached
# virtual environment, for the model-API conformance tests (tests/integration/http_sdk_conformance.rs):
# every request body deep-review sends is validated against the SDKs' request types (pydantic's
# TypeAdapter over anthropic's MessageCreateParams, openai's ResponseCreateParams and chat
# CompletionCreateParams, google-genai's Content and GenerationConfig), and the fake model
# server's streams are read back through the SDKs' own stream readers. Nothing is fetched when
# the tests run.
#
#   scripts/install-provider-sdks.sh     # prints the venv's python
#
# The venv defaults to $HOME/.cache/deep-review/provider-sdks; DEEP_REVIEW_PROVIDER_SDKS_DIR
# overrides it. When the pinned versions are there, nothing is downloaded. Progress goes to
# stderr so that stdout holds only the python path.
set -euo pipefail

ANTHROPIC_VERSION="2.10.0"
OPENAI_VERSION="3.51.0"
GOOGLE_GENAI_VERSION="3.3.0"

dir="${DEEP_REVIEW_PROVIDER_SDKS_DIR:-$HOME/.cache/deep-review/provider-sdks}"
py="$dir/bin/python"

if ! command -v python3 >/dev/null 2>&1; then
  echo "install-provider-sdks: python3 is not on PATH; install Python 3.9 or newer (apt-get install python3 python3-venv)" >&2
  exit 1
fi

have_sdks() {
  [ -x "$py" ] && "$py" - "$ANTHROPIC_VERSION" "$OPENAI_VERSION" "$GOOGLE_GENAI_VERSION" <<'EOF' 2>/dev/null
import sys
from importlib.metadata import version
want = dict(zip(["anthropic", "openai", "google-genai"], sys.argv[1:]))
sys.exit(0 if all(version(name) == v for name, v in want.items()) else 1)
EOF
}

if ! have_sdks; then
  if [ ! -x "$py" ]; then
    python3 -m venv "$dir" >&2 || {
      echo "install-provider-sdks: could not make a virtual environment in $dir; install python3-venv (apt-get install python3-venv)" >&2
      exit 1
    }
  fi
  echo "install-provider-sdks: installing anthropic==$ANTHROPIC_VERSION openai==$OPENAI_VERSION google-genai==$GOOGLE_GENAI_VERSION into $dir" >&2
  start=$(date +%s)
  "$py" -m pip install --disable-pip-version-check --quiet \
    "anthropic==$ANTHROPIC_VERSION" "openai==$OPENAI_VERSION" "google-genai==$GOOGLE_GENAI_VERSION" >&2
  echo "install-provider-sdks: done in $(( $(date +%s) - start )) s" >&2
else
  echo "install-provider-sdks: the provider SDKs are already in $dir" >&2
fi

echo "$py"
