#!/usr/bin/env bash
# Installs what the agent sandbox and its tests need from Debian: bubblewrap (the sandbox agents
# run in), and for the tests that attack it, openssh-client (a real ssh-agent), curl and
# util-linux's `script` (a terminal for deep-review).
#
#   scripts/install-sandbox-tools.sh
#
# Idempotent: when every program is already there, nothing is downloaded. Needs root (or sudo)
# and apt-get; progress goes to stderr.
set -euo pipefail

need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v ssh-agent >/dev/null 2>&1 || need+=(openssh-client)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v script >/dev/null 2>&1 || need+=(bsdutils)

if [ "${#need[@]}" -eq 0 ]; then
  echo "install-sandbox-tools: $(bwrap --version) and the test tools already installed" >&2
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-sandbox-tools: apt-get is not available; install ${need[*]}" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-sandbox-tools: run as root or install sudo: apt-get install needs root" >&2
    exit 1
  fi
  sudo="sudo"
fi

echo "install-sandbox-tools: installing ${need[*]} with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >&2
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
bwrap --version >&2
