#!/usr/bin/env bash
# The docs check CI runs (.ci/run): builds the book under docs/ with mdBook (a page SUMMARY.md
# names that does not exist fails the build: `create-missing = false`), then checks every
# internal link and #anchor of the built book and of the Markdown beside it (README.md,
# CHANGELOG.md) with lychee, offline: a link to a missing page or heading fails.
# Links to other sites are not fetched (nothing outside the package registries is reachable).
#
#   scripts/check-docs.sh          # build into docs/book, check, print the time taken
#
# The reference pages under docs/src/reference/ are checked against the code by the test
# `reference_pages` (tests/integration/docs_reference.rs), not here.
set -euo pipefail
cd "$(dirname "$0")/.."

tools="$(bash scripts/install-mdbook.sh)"
start=$(date +%s)

"$tools/bin/mdbook" build docs

# --offline: only files are checked; --include-fragments: an #anchor must name a heading (or an
# id) of its page. The built book is checked as HTML, so what mdBook made of each link is what is
# checked; the Markdown files as GitHub renders them. --root-dir resolves the root-relative links
# of mdBook's 404 page inside the book.
"$tools/bin/lychee" --offline --include-fragments --no-progress --format detailed \
  --root-dir "$PWD/docs/book" docs/book README.md CHANGELOG.md

echo "check-docs: the book built and its links checked in $(( $(date +%s) - start )) s" >&2
