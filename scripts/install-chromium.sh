#!/usr/bin/env bash
# Installs Debian's Chromium (package `chromium`, /usr/bin/chromium) for the browser test of the
# HTML report (tests/integration/report_html_browser.rs), with a font so text renders.
#
#   scripts/install-chromium.sh        # prints the browser's path on stdout
#
# Idempotent: when /usr/bin/chromium already runs, nothing is downloaded. Needs root (or sudo)
# and apt-get; progress goes to stderr so that stdout holds only the path.
set -euo pipefail

browser=/usr/bin/chromium

if "$browser" --version >/dev/null 2>&1; then
  echo "install-chromium: $("$browser" --version 2>/dev/null) already installed" >&2
  echo "$browser"
  exit 0
fi

start=$(date +%s)
# shellcheck source=scripts/lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
# No recommends: the browser, its libraries and a font are all the test needs.
apt_install install-chromium chromium fonts-dejavu-core

if ! "$browser" --version >/dev/null 2>&1; then
  echo "install-chromium: $browser does not run after the install" >&2
  exit 1
fi
echo "install-chromium: $("$browser" --version 2>/dev/null) installed in $(( $(date +%s) - start )) s" >&2
echo "$browser"
