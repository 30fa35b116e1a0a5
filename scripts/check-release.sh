#!/usr/bin/env bash
# Checks the release machinery the way it can be checked without GitHub: the committed
# .github/workflows/release.yml is exactly what dist generates from dist-workspace.toml (a hand
# edit or a config change without `dist generate` fails here), dist-workspace.toml names the dist
# version scripts/install-dist.sh installs, and `dist plan` accepts the config and lists every
# target's archive, its checksum, the shell installer and the Homebrew formula.
# (scripts/lint-actions.sh lints release.yml with actionlint and zizmor.)
#
#   scripts/check-release.sh
set -euo pipefail
cd "$(dirname "$0")/.."

dist="$(bash scripts/install-dist.sh)/dist"
echo "check-release: $("$dist" --version)" >&2

status=0
pinned="$(sed -n 's/^cargo-dist-version = "\(.*\)"/\1/p' dist-workspace.toml)"
if [ "cargo-dist $pinned" != "$("$dist" --version)" ]; then
  echo "check-release: dist-workspace.toml pins cargo-dist-version $pinned but scripts/install-dist.sh installs $("$dist" --version): change both together, then run dist generate" >&2
  status=1
fi

if ! "$dist" generate --check >&2; then
  echo "check-release: .github/workflows/release.yml is not what dist generates from dist-workspace.toml: run '$dist generate' and commit the result" >&2
  status=1
fi

plan="$(mktemp)"
trap 'rm -f "$plan"' EXIT
if ! "$dist" plan --output-format=json >"$plan"; then
  echo "check-release: dist plan refused the config (above)" >&2
  exit 1
fi
# What a release must hold: the install script and the docs name these files.
missing="$(python3 - "$plan" <<'PY'
import json, sys
manifest = json.load(open(sys.argv[1]))
names = set(manifest.get("artifacts", {}))
want = {"deep-review-installer.sh", "deep-review.rb", "sha256.sum"}
for target in ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl",
               "x86_64-apple-darwin", "aarch64-apple-darwin"]:
    want |= {f"deep-review-{target}.tar.gz", f"deep-review-{target}.tar.gz.sha256"}
missing = sorted(want - names)
# The GitLab template installs the agent CLIs with the script each archive carries.
for name, artifact in manifest.get("artifacts", {}).items():
    if name.endswith(".tar.gz") and name != "source.tar.gz":
        if "install-agent-clis.sh" not in {a.get("name") for a in artifact.get("assets", [])}:
            missing.append(f"install-agent-clis.sh in {name}")
print(" ".join(missing))
PY
)"
if [ -n "$missing" ]; then
  echo "check-release: dist plan does not list $missing" >&2
  status=1
fi

if [ "$status" -ne 0 ]; then
  echo "check-release: FAILED" >&2
  exit 1
fi
echo "check-release: release.yml is what dist $pinned generates; dist plan lists the four targets' archives, their checksums, the installer and the formula" >&2
