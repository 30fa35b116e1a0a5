#!/usr/bin/env bash
# Installs the three agent CLIs that deep-review drives (Claude Code, Codex CLI, Gemini CLI) from
# the npm registry into a cache folder, at pinned versions, and prints the folder to put on PATH.
#
#   scripts/install-agent-clis.sh            # prints e.g. /root/.cache/deep-review/agent-clis/node_modules/.bin
#   PATH="$(scripts/install-agent-clis.sh):$PATH"
#   scripts/install-agent-clis.sh claude gemini   # only these (claude, codex, gemini): the GitHub
#                                                 # Action installs the agents it has keys for
#
# The folder defaults to $HOME/.cache/deep-review/agent-clis; DEEP_REVIEW_AGENT_CLIS_DIR overrides
# it. When every CLI is already installed there at its pinned version, nothing is downloaded.
# Progress goes to stderr so that stdout holds only the bin dir.
set -euo pipefail

# The versions checked against the fake model server (see the e2e tests in tests/).
CLAUDE_CODE_VERSION="2.1.197"
CODEX_VERSION="0.171.0"
GEMINI_CLI_VERSION="0.61.0"

dir="${DEEP_REVIEW_AGENT_CLIS_DIR:-$HOME/.cache/deep-review/agent-clis}"
bin="$dir/node_modules/.bin"

if ! command -v npm >/dev/null 2>&1; then
  echo "install-agent-clis: npm is not on PATH; install Node.js 20 or newer (apt-get install nodejs npm)" >&2
  exit 1
fi

# Prints the version recorded in an installed package's package.json, or nothing.
installed_version() {
  local manifest="$dir/node_modules/$1/package.json"
  [ -f "$manifest" ] || return 0
  node -e 'try { process.stdout.write(require(process.argv[1]).version || "") } catch (e) {}' "$manifest"
}

# The agents asked for (all three by default), as npm packages and their commands.
agents=("$@")
[ "${#agents[@]}" -gt 0 ] || agents=(claude codex gemini)
want=()
exes=()
for agent in "${agents[@]}"; do
  case "$agent" in
    claude) want+=("@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"); exes+=(claude) ;;
    codex) want+=("@openai/codex@$CODEX_VERSION"); exes+=(codex) ;;
    gemini) want+=("@google/gemini-cli@$GEMINI_CLI_VERSION"); exes+=(gemini) ;;
    *) echo "install-agent-clis: unknown agent '$agent': give claude, codex or gemini" >&2; exit 2 ;;
  esac
done

missing=()
for spec in "${want[@]}"; do
  name="${spec%@*}"
  version="${spec##*@}"
  have="$(installed_version "$name")"
  if [ "$have" != "$version" ] || [ ! -x "$bin/$(basename "$name" | sed 's/^claude-code$/claude/; s/^gemini-cli$/gemini/')" ]; then
    missing+=("$spec")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"name":"deep-review-agent-clis","private":true}' >"$dir/package.json"
  echo "install-agent-clis: installing ${missing[*]} into $dir" >&2
  start=$(date +%s)
  # All three at once so npm resolves one tree; --no-save keeps package.json free of versions
  # that the pins above already say.
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "${want[@]}" >&2
  echo "install-agent-clis: done in $(( $(date +%s) - start )) s" >&2
else
  echo "install-agent-clis: ${want[*]} already in $dir" >&2
fi

for exe in "${exes[@]}"; do
  if [ ! -x "$bin/$exe" ]; then
    echo "install-agent-clis: $bin/$exe is missing after the install; remove $dir and run again" >&2
    exit 1
  fi
done

echo "$bin"
