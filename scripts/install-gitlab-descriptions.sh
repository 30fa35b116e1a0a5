#!/usr/bin/env bash
# Installs a machine-readable description of GitLab's REST API v4 for the fake GitLab of the tests
# (tests/integration/support/fake_gitlab.rs): python-gitlab from PyPI, whose object managers list,
# for every endpoint, its path and the attributes a create or an update requires and accepts
# (`_create_attrs`, `_update_attrs`). GitLab publishes no OpenAPI description that covers merge
# request notes, discussions or draft notes (its openapi_v2.yaml covers a few resources and is on
# no registry), so python-gitlab's managers are the description: the fake refuses a request
# whose body misses a required attribute or carries one the endpoint does not take, as GitLab
# does. Nothing is fetched when the tests run.
#
#   scripts/install-gitlab-descriptions.sh    # prints the JSON file the fake reads
#
# The folder defaults to $HOME/.cache/deep-review/gitlab-descriptions;
# DEEP_REVIEW_GITLAB_DESCRIPTIONS_DIR overrides it. When the pinned version is there, nothing is
# downloaded. Progress goes to stderr so that stdout holds only the file's path.
set -euo pipefail

PYTHON_GITLAB_VERSION="8.6.0"

dir="${DEEP_REVIEW_GITLAB_DESCRIPTIONS_DIR:-$HOME/.cache/deep-review/gitlab-descriptions}"
venv="$dir/venv"
py="$venv/bin/python"
out="$dir/python-gitlab-$PYTHON_GITLAB_VERSION-endpoints.json"

if ! command -v python3 >/dev/null 2>&1; then
  echo "install-gitlab-descriptions: python3 is not on PATH; install Python 3.10 or newer (apt-get install python3 python3-venv)" >&2
  exit 1
fi

have() {
  [ -x "$py" ] && "$py" - "$PYTHON_GITLAB_VERSION" <<'EOF' 2>/dev/null
import sys
import gitlab
sys.exit(0 if gitlab.__version__ == sys.argv[1] else 1)
EOF
}

if ! have; then
  mkdir -p "$dir"
  if [ ! -x "$py" ]; then
    python3 -m venv "$venv" >&2 || {
      echo "install-gitlab-descriptions: could not make a virtual environment in $venv; install python3-venv" >&2
      exit 1
    }
  fi
  echo "install-gitlab-descriptions: installing python-gitlab==$PYTHON_GITLAB_VERSION into $venv" >&2
  "$py" -m pip install --disable-pip-version-check --quiet "python-gitlab==$PYTHON_GITLAB_VERSION" >&2
fi

if [ ! -s "$out" ]; then
  # Every manager of gitlab.v4.objects under /projects/{project_id}/merge_requests, and the
  # current user: its path template and the attributes of create and update.
  "$py" - "$out.part" <<'EOF'
import inspect, json, sys
import gitlab
from gitlab.v4 import objects

def attrs(ro):
    if ro is None:
        return None
    return {
        "required": sorted(getattr(ro, "required", ()) or ()),
        "optional": sorted(getattr(ro, "optional", ()) or ()),
        "exclusive": sorted(getattr(ro, "exclusive", ()) or ()),
    }

endpoints = []
for name, cls in sorted(vars(objects).items()):
    if not inspect.isclass(cls) or not name.endswith("Manager"):
        continue
    path = getattr(cls, "_path", None)
    if not isinstance(path, str):
        continue
    if not (path.startswith("/projects/{project_id}/merge_requests") or path in ("/user", "/projects")):
        continue
    bases = {b.__name__ for b in inspect.getmro(cls)}
    endpoints.append({
        "manager": name,
        "path": path,
        "create": attrs(getattr(cls, "_create_attrs", None)) if "CreateMixin" in bases else None,
        "update": attrs(getattr(cls, "_update_attrs", None)) if "UpdateMixin" in bases else None,
        "list_filters": sorted(getattr(cls, "_list_filters", ()) or ()),
    })
json.dump({"source": f"python-gitlab {gitlab.__version__}", "endpoints": endpoints}, open(sys.argv[1], "w"), indent=1)
EOF
  mv "$out.part" "$out"
  echo "install-gitlab-descriptions: wrote $out" >&2
else
  echo "install-gitlab-descriptions: python-gitlab $PYTHON_GITLAB_VERSION already described in $out" >&2
fi

echo "$out"
