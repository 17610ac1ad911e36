#!/usr/bin/env bash
# Installs every build and test dependency (Debian packages + the npm reference tokenizers). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build git pkg-config
  libtorch-dev libopenblas0-pthread   # OpenBLAS: Debian's libtorch otherwise runs on netlib BLAS (~20x slower)
  libhdf5-dev libfmt-dev nlohmann-json3-dev catch2 libcli11-dev libspdlog-dev
  libpcre2-dev libsentencepiece-dev libzip-dev libstemmer-dev
  libcurl4-openssl-dev libssl-dev zlib1g-dev   # `kvbench datasets fetch`: downloads, sha256, .tgz
  bubblewrap python3 python3-numpy python3-h5py python3-matplotlib
  clang libclang-rt-dev               # libFuzzer targets (tests/fuzz), built by scripts/test.sh
  slurm-wlm munge                     # tests/scripts/slurm_cluster.sh starts a private single-node cluster
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
# Node.js may come from elsewhere (e.g. a vendor package that bundles npm and conflicts with Debian's).
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi

# Independent reference tokenizers (JS port of HF tokenizers) used by the tokenizer tests.
if [ -f tests/js/package.json ] && [ ! -d tests/js/node_modules ]; then
  (cd tests/js && npm install --no-audit --no-fund --silent)
fi
