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

# shellcheck source=scripts/lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
apt_install install-sandbox-tools "${need[@]}"
bwrap --version >&2
