#!/usr/bin/env bash
# Installs deep-review's release binary for this machine's OS and architecture, after checking
# its SHA-256 against the release's checksum file (sha256.sum, written by dist). The GitHub
# Action, the GitLab template and the install docs all run this script.
#
#   scripts/install-release.sh --version v0.2.0 [--dest DIR]
#   scripts/install-release.sh --ref REF --source DIR [--dest DIR]   # the GitHub Action
#
# --version  the release tag to install.
# --ref      what the Action was used at (github.action_ref): a release tag is installed; a
#            commit is installed only when the release tag of DIR's Cargo.toml version points at
#            that very commit (DEEP_REVIEW_RELEASE_REPO is asked with git ls-remote); anything
#            else has no release.
# --dest     the binary goes to DIR/bin/deep-review (default $HOME/.deep-review), the agent CLIs'
#            installer the release carries to DIR/share/deep-review/install-agent-clis.sh; the
#            script prints DIR/bin on stdout, to put on PATH.
#
# DEEP_REVIEW_RELEASE_URL   where releases are: files are read from URL/TAG/NAME
#                           (default https://github.com/deep-review/deep-review/releases/download).
#                           https only; plain http only to this machine (127.0.0.1, localhost, [::1]).
# DEEP_REVIEW_RELEASE_REPO  the git repository whose tags name the releases (for --ref).
#
# Exit status: 0 installed; 3 there is no release for this version, commit or platform (the
# caller may build from source, and should say so); 1 anything else, a checksum that does not
# match among them: then nothing is installed. Progress and errors go to stderr.
set -euo pipefail

RELEASE_URL="${DEEP_REVIEW_RELEASE_URL:-https://github.com/deep-review/deep-review/releases/download}"
RELEASE_REPO="${DEEP_REVIEW_RELEASE_REPO:-https://github.com/deep-review/deep-review.git}"
# Bounds on what is downloaded: the archive is a few MB, the checksum file a few hundred bytes.
MAX_ARCHIVE_BYTES=$((200 * 1024 * 1024))
MAX_CHECKSUMS_BYTES=$((64 * 1024))

# The scratch folder of the download, removed on exit whatever happens.
tmp=""
trap 'if [ -n "$tmp" ]; then rm -rf "$tmp"; fi' EXIT

say() { echo "install-release: $*" >&2; }
fail() { say "$*"; exit 1; }
no_release() { say "$*"; exit 3; }

usage() {
  fail "usage: install-release.sh (--version vX.Y.Z | --ref REF --source DIR) [--dest DIR]"
}

# The dist target of this machine: static musl on Linux, both macOS architectures.
target_triple() {
  local os arch
  os="$(uname -s)"
  arch="$(uname -m)"
  case "$os/$arch" in
    Linux/x86_64 | Linux/amd64) echo x86_64-unknown-linux-musl ;;
    Linux/aarch64 | Linux/arm64) echo aarch64-unknown-linux-musl ;;
    Darwin/x86_64) echo x86_64-apple-darwin ;;
    Darwin/arm64 | Darwin/aarch64) echo aarch64-apple-darwin ;;
    *) no_release "no release binary is built for $os on $arch (Linux and macOS, x86_64 and aarch64 are)" ;;
  esac
}

# The package version in DIR/Cargo.toml's [package] table.
source_version() {
  local manifest="$1/Cargo.toml"
  [ -f "$manifest" ] || fail "$manifest does not exist: give --source the deep-review checkout"
  awk '/^\[/ { in_package = ($0 == "[package]") }
       in_package && /^version *= *"/ { sub(/^version *= *"/, ""); sub(/".*/, ""); print; exit }' "$manifest"
}

# The commit a tag names in RELEASE_REPO (the peeled commit of an annotated tag), or nothing.
tag_commit() {
  local refs
  refs="$(git ls-remote "$RELEASE_REPO" "refs/tags/$1" "refs/tags/$1^{}")" ||
    fail "git ls-remote $RELEASE_REPO failed (above)"
  # The peeled line, when there is one, comes after the tag's own.
  echo "$refs" | awk 'NF == 2 { sha = $1 } END { print sha }'
}

# The release tag for what the Action was used at, or exit 3.
tag_for_ref() {
  local ref="$1" source="$2" version tag at
  if [[ "$ref" =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]*)?$ ]]; then
    echo "$ref"
    return
  fi
  if [[ ! "$ref" =~ ^[0-9a-f]{40}$ ]]; then
    no_release "'$ref' is neither a release tag (v1.2.3) nor a full commit sha"
  fi
  version="$(source_version "$source")"
  [ -n "$version" ] || fail "no version in $source/Cargo.toml's [package]"
  tag="v$version"
  at="$(tag_commit "$tag")"
  if [ -z "$at" ]; then
    no_release "commit $ref has no release: $RELEASE_REPO has no tag $tag"
  fi
  if [ "$at" != "$ref" ]; then
    no_release "commit $ref has no release: $tag is commit $at"
  fi
  echo "$tag"
}

# Only https, or plain http to this machine (the tests' release server).
check_url() {
  case "$1" in
    https://*) ;;
    http://127.0.0.1[:/]* | http://localhost[:/]* | "http://[::1]"[:/]*) ;;
    *) fail "DEEP_REVIEW_RELEASE_URL must be an https URL (plain http only to 127.0.0.1): '$1'" ;;
  esac
}

# Downloads URL to FILE (at most MAX bytes); exit 3 on a 404 (no such release or asset).
download() {
  local url="$1" file="$2" max="$3" code
  code="$(curl --silent --show-error --location --proto '=https,http' --max-filesize "$max" \
    --connect-timeout 20 --max-time 600 --retry 3 --output "$file" --write-out '%{http_code}' \
    "$url")" || fail "downloading $url failed (curl exit $?)"
  case "$code" in
    200) ;;
    404) no_release "there is no $url (HTTP 404)" ;;
    *) fail "downloading $url answered HTTP $code" ;;
  esac
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | awk '{ print $1 }'
  else
    shasum -a 256 "$1" | awk '{ print $1 }'
  fi
}

# The checksum sha256.sum gives NAME ("<hex>  NAME" or "<hex> *NAME"), or nothing.
listed_sha256() {
  awk -v name="$2" '{ file = $2; sub(/^\*/, "", file) }
    file == name && NF == 2 && length($1) == 64 && $1 ~ /^[0-9a-fA-F]+$/ { print tolower($1); exit }' "$1"
}

# Unpacks ARCHIVE in DIR and prints the path of the deep-review binary in it.
unpack() {
  local archive="$1" dir="$2" stem="$3" bin
  mkdir -p "$dir"
  tar -xzf "$archive" -C "$dir" --no-same-owner || fail "$archive is not a gzip tar archive"
  for bin in "$dir/$stem/deep-review" "$dir/deep-review"; do
    if [ -f "$bin" ] && [ ! -L "$bin" ]; then
      echo "$bin"
      return
    fi
  done
  fail "$stem.tar.gz holds no deep-review binary"
}

# The commands the install needs, with what to do when one is missing.
need_commands() {
  local cmd
  for cmd in curl tar gzip awk; do
    command -v "$cmd" >/dev/null 2>&1 || fail "$cmd is not on PATH: install it (apt-get install curl tar gzip mawk; macOS has them)"
  done
  if ! command -v sha256sum >/dev/null 2>&1 && ! command -v shasum >/dev/null 2>&1; then
    fail "neither sha256sum nor shasum is on PATH: install coreutils"
  fi
}

install_release() {
  local tag="$1" dest="$2" target stem expected actual bin printed
  check_url "$RELEASE_URL"
  need_commands
  target="$(target_triple)"
  stem="deep-review-$target"
  tmp="$(mktemp -d)"
  say "downloading $stem.tar.gz of $tag from $RELEASE_URL"
  download "$RELEASE_URL/$tag/sha256.sum" "$tmp/sha256.sum" "$MAX_CHECKSUMS_BYTES"
  download "$RELEASE_URL/$tag/$stem.tar.gz" "$tmp/$stem.tar.gz" "$MAX_ARCHIVE_BYTES"
  expected="$(listed_sha256 "$tmp/sha256.sum" "$stem.tar.gz")"
  [ -n "$expected" ] || fail "$tag's sha256.sum lists no checksum of $stem.tar.gz: nothing was installed"
  actual="$(sha256_of "$tmp/$stem.tar.gz")"
  if [ "$actual" != "$expected" ]; then
    fail "the SHA-256 of $stem.tar.gz is $actual but $tag's sha256.sum says $expected: the download is corrupt or was tampered with; nothing was installed"
  fi
  bin="$(unpack "$tmp/$stem.tar.gz" "$tmp/unpacked" "$stem")"
  printed="$("$bin" --version 2>/dev/null)" || fail "the release binary of $tag does not run on this machine ($target): nothing was installed"
  case "$printed" in
    "deep-review ${tag#v} "* | "deep-review ${tag#v}") ;;
    *) fail "the binary in $tag's $stem.tar.gz says '$printed', not version ${tag#v}: nothing was installed" ;;
  esac
  # The agent CLIs' installer the release carries beside the binary (the GitLab template runs it).
  if [ -f "$(dirname "$bin")/install-agent-clis.sh" ]; then
    mkdir -p "$dest/share/deep-review"
    cp "$(dirname "$bin")/install-agent-clis.sh" "$dest/share/deep-review/install-agent-clis.sh"
  fi
  mkdir -p "$dest/bin"
  cp "$bin" "$dest/bin/.deep-review.partial"
  chmod 755 "$dest/bin/.deep-review.partial"
  mv -f "$dest/bin/.deep-review.partial" "$dest/bin/deep-review"
  say "installed $printed ($target, SHA-256 $actual) in $dest/bin"
  echo "$dest/bin"
}

main() {
  local version="" ref="" source="" dest="${HOME:?}/.deep-review" tag
  while [ "$#" -gt 0 ]; do
    case "$1" in
      --version) version="${2:-}"; shift 2 || usage ;;
      --ref) ref="${2:-}"; shift 2 || usage ;;
      --source) source="${2:-}"; shift 2 || usage ;;
      --dest) dest="${2:-}"; shift 2 || usage ;;
      *) usage ;;
    esac
  done
  if [ -n "$version" ]; then
    [[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]*)?$ ]] ||
      fail "--version '$version' is not a release tag such as v0.2.0"
    tag="$version"
  elif [ -n "$source" ]; then
    tag="$(tag_for_ref "$ref" "$source")"
  else
    usage
  fi
  [ -n "$dest" ] || usage
  install_release "$tag" "$dest"
}

main "$@"
