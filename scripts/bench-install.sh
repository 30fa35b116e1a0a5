#!/usr/bin/env bash
# Measures installing deep-review from a release on a cache miss: scripts/install-release.sh
# downloading, checking and unpacking a release served from 127.0.0.1 (python3 -m http.server),
# laid out as dist lays out a GitHub release. Prints each run's wall-clock time and the median.
#
#   scripts/bench-install.sh [BINARY] [RUNS]
#
# BINARY defaults to target/release/deep-review, else target/debug/deep-review (stripped of its
# debug info first, as the release profile ships it); RUNS defaults to 5. The network is the
# loopback: what this measures is the install's own work (curl, SHA-256, tar, the --version
# check); a real download adds the archive's size over the runner's bandwidth.
set -euo pipefail
cd "$(dirname "$0")/.."

binary="${1:-}"
runs="${2:-5}"
if [ -z "$binary" ]; then
  binary=target/release/deep-review
  [ -x "$binary" ] || binary=target/debug/deep-review
fi
[ -x "$binary" ] || { echo "bench-install: no $binary: cargo build first, or give a binary" >&2; exit 1; }

case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) target=x86_64-unknown-linux-musl ;;
  Linux/aarch64) target=aarch64-unknown-linux-musl ;;
  Darwin/x86_64) target=x86_64-apple-darwin ;;
  Darwin/arm64) target=aarch64-apple-darwin ;;
  *) echo "bench-install: no release target for $(uname -sm)" >&2; exit 1 ;;
esac
version="$(awk -F'"' '/^version = / { print $2; exit }' Cargo.toml)"
tag="v$version"
stem="deep-review-$target"

scratch="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT

mkdir -p "$scratch/release/$tag" "$scratch/stage/$stem"
cp "$binary" "$scratch/stage/$stem/deep-review"
strip "$scratch/stage/$stem/deep-review" 2>/dev/null || true
cp scripts/install-agent-clis.sh "$scratch/stage/$stem/"
tar -czf "$scratch/release/$tag/$stem.tar.gz" -C "$scratch/stage" "$stem"
(cd "$scratch/release/$tag" && sha256sum "$stem.tar.gz" >sha256.sum)
echo "bench-install: $stem.tar.gz of $tag: $(du -k "$scratch/release/$tag/$stem.tar.gz" | cut -f1) KiB ($(du -k "$scratch/stage/$stem/deep-review" | cut -f1) KiB unpacked)" >&2

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$scratch/release" >/dev/null 2>&1 &
server=$!
for _ in $(seq 50); do
  curl -s -o /dev/null "http://127.0.0.1:$port/" && break
  sleep 0.1
done

times=()
for run in $(seq "$runs"); do
  rm -rf "$scratch/dest"
  start="$(date +%s%N)"
  DEEP_REVIEW_RELEASE_URL="http://127.0.0.1:$port" \
    bash scripts/install-release.sh --version "$tag" --dest "$scratch/dest" >/dev/null 2>&1
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  times+=("$ms")
  echo "bench-install: run $run: ${ms} ms" >&2
done
median="$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')"
echo "install from a release on a cache miss (127.0.0.1): median ${median} ms of $runs runs"
