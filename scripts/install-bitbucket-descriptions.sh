#!/usr/bin/env bash
# Installs a machine-readable description of Bitbucket Cloud's API 2.0 for the fake Bitbucket of
# the tests (tests/integration/support/fake_bitbucket.rs): npm's `bitbucket` package, whose
# endpoint table (every route: method, URL template and parameters, from Bitbucket's own
# OpenAPI description) and bitbucket.d.ts (every object's fields and their allowed values) are
# written out as one JSON file. The fake serves only the routes the table has, with the methods
# it gives, and refuses a body whose fields do not have the types and values bitbucket.d.ts
# allows, as Bitbucket does. Nothing is fetched when the tests run.
#
#   scripts/install-bitbucket-descriptions.sh    # prints the JSON file the fake reads
#
# The folder defaults to $HOME/.cache/deep-review/bitbucket-descriptions;
# DEEP_REVIEW_BITBUCKET_DESCRIPTIONS_DIR overrides it. When the pinned version is there, nothing
# is downloaded. Progress goes to stderr so that stdout holds only the file's path.
set -euo pipefail

BITBUCKET_NPM_VERSION="2.12.0"

dir="${DEEP_REVIEW_BITBUCKET_DESCRIPTIONS_DIR:-$HOME/.cache/deep-review/bitbucket-descriptions}"
pkg="$dir/bitbucket-$BITBUCKET_NPM_VERSION"
out="$dir/bitbucket-$BITBUCKET_NPM_VERSION-api.json"

for tool in node npm tar; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "install-bitbucket-descriptions: $tool is not on PATH; install Node.js 18 or newer (apt-get install nodejs npm)" >&2
    exit 1
  fi
done

if [ ! -s "$pkg/package/lib/bitbucket.d.ts" ]; then
  mkdir -p "$pkg"
  echo "install-bitbucket-descriptions: fetching bitbucket@$BITBUCKET_NPM_VERSION from npm into $pkg" >&2
  tarball="$(cd "$pkg" && npm pack --silent "bitbucket@$BITBUCKET_NPM_VERSION")"
  tar -xzf "$pkg/$tarball" -C "$pkg"
fi

if [ ! -s "$out" ]; then
  node - "$pkg/package" "$out.part" "$BITBUCKET_NPM_VERSION" <<'EOF_NODE'
const fs = require("fs");
const [pkg, out, version] = process.argv.slice(2);

// The endpoint table: the object literal the bundle registers its methods from.
const bundle = fs.readFileSync(`${pkg}/lib/index.js`, "utf8");
const start = bundle.indexOf("var W={");
const end = bundle.indexOf(";function B(", start);
if (start < 0 || end < 0) throw new Error("the endpoint table is not where bitbucket@" + version + " keeps it");
const table = Function("return " + bundle.slice(start + 6, end))();
const endpoints = [];
for (const [namespace, methods] of Object.entries(table)) {
  for (const [name, e] of Object.entries(methods)) {
    if (e.alias || !e.url) continue;
    endpoints.push({ name: `${namespace}.${name}`, method: e.method, url: e.url.replace(/\{\?[^}]*\}$/, ""), params: e.params || {} });
  }
}

// The object types: `export type Name = Base & { field?: type ... }`, fields nested by indentation.
const dts = fs.readFileSync(`${pkg}/lib/bitbucket.d.ts`, "utf8").split("\n");
const types = {};
function parseBlock(i, indent) {
  const fields = {};
  while (i < dts.length) {
    const line = dts[i];
    const lead = line.length - line.trimStart().length;
    if (lead < indent) return [fields, i];
    const m = line.trim().match(/^([A-Za-z_][A-Za-z0-9_]*)(\?)?:(?: (.*))?$/);
    if (lead === indent && m) {
      let [, field, optional, type] = m;
      // A union written over several lines: `type?:` then `| 'A'` lines.
      const multiline = type === undefined;
      while (multiline && i + 1 < dts.length && dts[i + 1].trim().startsWith("|")) {
        type = (type || "") + " " + dts[i + 1].trim();
        i += 1;
      }
      type = (type || "").trim();
      if (type === "{") {
        const [inner, next] = parseBlock(i + 1, indent + 2);
        fields[field] = { optional: !!optional, type: "object", fields: inner };
        i = next + 1;
        continue;
      }
      const literals = [...type.matchAll(/'([^']*)'/g)].map((x) => x[1]);
      const field_type = literals.length ? "enum" : type;
      fields[field] = { optional: !!optional, type: field_type, values: literals.length ? literals : undefined };
    }
    i += 1;
  }
  return [fields, i];
}
for (let i = 0; i < dts.length; i++) {
  const m = dts[i].match(/^  export (?:type ([A-Za-z0-9_]+) = (?:([A-Za-z0-9_]+) & )?|interface ([A-Za-z0-9_]+) )\{$/);
  if (!m) continue;
  const [fields, next] = parseBlock(i + 1, 4);
  types[m[1] || m[3]] = { base: m[2] || null, fields };
  i = next;
}
for (const needed of ["PullrequestComment", "Comment", "Report", "ReportAnnotation", "ReportData", "Pullrequest"]) {
  if (!types[needed]) throw new Error(`bitbucket.d.ts has no type ${needed}`);
}
fs.writeFileSync(out, JSON.stringify({ source: `npm bitbucket ${version}`, endpoints, types }, null, 1));
EOF_NODE
  mv "$out.part" "$out"
  echo "install-bitbucket-descriptions: wrote $out" >&2
else
  echo "install-bitbucket-descriptions: bitbucket $BITBUCKET_NPM_VERSION already described in $out" >&2
fi

echo "$out"
