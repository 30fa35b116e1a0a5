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

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: apt-get is not available; install Chromium so that $browser runs" >&2
  exit 1
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-chromium: run as root or install sudo: apt-get install chromium needs root" >&2
    exit 1
  fi
  sudo="sudo"
fi

start=$(date +%s)
echo "install-chromium: installing chromium with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >&2
# No recommends: the browser, its libraries and a font are all the test needs.
$sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2

if ! "$browser" --version >/dev/null 2>&1; then
  echo "install-chromium: $browser does not run after the install" >&2
  exit 1
fi
echo "install-chromium: $("$browser" --version 2>/dev/null) installed in $(( $(date +%s) - start )) s" >&2
echo "$browser"
