#!/usr/bin/env bash
# Proves that deep-review builds for macOS without a Mac: runs clippy with -D warnings for
# aarch64-apple-darwin with cargo-zigbuild (zig as the C compiler for ring's and mimalloc's C),
# so that a Linux-only call that slips into shared code fails CI, not a user's install; and,
# where a macOS SDK is given (SDKROOT), links the binary for aarch64-apple-darwin and
# x86_64-apple-darwin. Nothing is run: there is no Mac here (docs/src/platforms.md says what was
# tested where).
#
#   scripts/check-macos.sh            # clippy for aarch64-apple-darwin, then both links
#   scripts/check-macos.sh --install  # only install the tools; prints the venv's bin directory
#
# cargo-zigbuild and ziglang come from PyPI, at pinned versions, into a cached virtual
# environment ($HOME/.cache/deep-review/zigbuild; DEEP_REVIEW_ZIGBUILD_DIR overrides it); the
# Rust standard libraries of both targets come from `rustup target add`. When they are there,
# nothing is downloaded. The cross builds use a target directory of their own,
# $HOME/.cache/deep-review/macos-target (CARGO_TARGET_DIR_MACOS overrides it): CI builds in a
# fresh clone each time, whose target/ is empty, and the macOS dependencies (ring's and
# mimalloc's C included) change only with Cargo.lock, so keeping them beside the other cached
# tools saves most of the cross builds' time on every run after the first; kept apart from the
# host's target/, they never invalidate its artifacts either.
# Progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_ZIGBUILD_VERSION="0.24.0"
ZIGLANG_VERSION="0.17.0"
TARGETS=(aarch64-apple-darwin x86_64-apple-darwin)
# The links are release builds, as a user's `cargo install` and the released binaries are:
# measured on this 2-core machine, see docs/src/platforms.md.
PROFILE_ARGS=(--release)

dir="${DEEP_REVIEW_ZIGBUILD_DIR:-$HOME/.cache/deep-review/zigbuild}"
bin="$dir/bin"

have_tools() {
  [ -x "$bin/python" ] && "$bin/python" - "$CARGO_ZIGBUILD_VERSION" "$ZIGLANG_VERSION" <<'EOF' 2>/dev/null
import sys
from importlib.metadata import version
want = dict(zip(["cargo-zigbuild", "ziglang"], sys.argv[1:]))
sys.exit(0 if all(version(name) == v for name, v in want.items()) else 1)
EOF
}

install_tools() {
  if have_tools; then
    echo "check-macos: cargo-zigbuild $CARGO_ZIGBUILD_VERSION and ziglang $ZIGLANG_VERSION already in $dir" >&2
  else
    if ! command -v python3 >/dev/null 2>&1; then
      echo "check-macos: python3 is not on PATH; install it (apt-get install python3 python3-venv)" >&2
      exit 1
    fi
    if [ ! -x "$bin/python" ]; then
      python3 -m venv "$dir" >&2 || {
        echo "check-macos: could not make a virtual environment in $dir; install python3-venv (apt-get install python3-venv)" >&2
        exit 1
      }
    fi
    echo "check-macos: installing cargo-zigbuild==$CARGO_ZIGBUILD_VERSION ziglang==$ZIGLANG_VERSION into $dir" >&2
    "$bin/python" -m pip install --disable-pip-version-check --quiet \
      "cargo-zigbuild==$CARGO_ZIGBUILD_VERSION" "ziglang==$ZIGLANG_VERSION" >&2
  fi
  local missing=()
  for target in "${TARGETS[@]}"; do
    rustup target list --installed | grep -qx "$target" || missing+=("$target")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "check-macos: rustup target add ${missing[*]}" >&2
    rustup target add "${missing[@]}" >&2
  fi
}

install_tools
if [ "${1:-}" = "--install" ]; then
  echo "$bin"
  exit 0
fi

# cargo-zigbuild finds zig through the ziglang package of the venv's python.
export PATH="$bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR_MACOS:-$HOME/.cache/deep-review/macos-target}"

step() {
  local start
  start=$(date +%s)
  "$@" >&2
  echo "check-macos: $* took $(( $(date +%s) - start )) s" >&2
}

# clippy needs the C toolchain too (ring and libmimalloc-sys compile C in their build scripts):
# `cargo-zigbuild clippy` gives it zig's compiler for the target. It compiles every crate of the
# build for macOS, so a Linux-only call in shared code fails here.
step cargo-zigbuild clippy --target aarch64-apple-darwin --all-targets -- -D warnings

# Linking needs Apple's SDK: the binary links the Security and CoreFoundation frameworks
# (rustls-platform-verifier reads the system's trust store; chrono finds the local time zone
# through iana-time-zone), and zig ships only libSystem's stubs. The SDK is not in any package
# registry this project may use, so the link runs where one is given (SDKROOT=/path/to/MacOSX.sdk,
# as on a Mac or a runner that has one) and is reported as not checked otherwise.
if [ -z "${SDKROOT:-}" ] || [ ! -d "${SDKROOT:-}/System/Library/Frameworks/Security.framework" ]; then
  echo "check-macos: the link is NOT checked here: no macOS SDK (set SDKROOT to a MacOSX.sdk with Security.framework to link ${TARGETS[*]})" >&2
  exit 0
fi
for target in "${TARGETS[@]}"; do
  step cargo zigbuild "${PROFILE_ARGS[@]}" --locked --target "$target" --bin deep-review
  exe="$CARGO_TARGET_DIR/$target/release/deep-review"
  # A Mach-O executable of the right architecture, or the link did not do what it says.
  case "$target" in
    aarch64-*) magic="cffaedfe0c000001" ;;
    x86_64-*) magic="cffaedfe07000001" ;;
  esac
  got="$(head -c 8 "$exe" | od -An -tx1 | tr -d ' \n')"
  if [ "$got" != "$magic" ]; then
    echo "check-macos: $exe is not a Mach-O executable for $target (starts with $got)" >&2
    exit 1
  fi
  echo "check-macos: $exe is a Mach-O executable for $target ($(wc -c <"$exe") bytes)" >&2
done
