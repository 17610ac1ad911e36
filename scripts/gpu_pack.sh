#!/usr/bin/env bash
# Packs the PyTorch 2.x build (build-torch2/, from scripts/test.sh) for scripts/gpu_check.sh on a GPU machine
# that has PyTorch 2.11 + CUDA but not the Debian libraries kvbench links (fmt, spdlog, HDF5, PCRE2, ...):
#   .gpu/bin   kvbench and kvbench_core_tests, stripped
#   .gpu/lib   the shared libraries they load that are neither PyTorch's, CUDA's nor the C/C++ runtime's
# The binaries load that machine's libtorch (the same PyPI build as .venv's) through LD_LIBRARY_PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build-torch2/kvbench ] || { echo "build-torch2/kvbench missing: run bash scripts/test.sh --torch pytorch" >&2; exit 1; }
rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib
for binary in kvbench kvbench_core_tests; do
  strip -o ".gpu/bin/$binary" "build-torch2/$binary"
  ldd "build-torch2/$binary" | awk '$3 ~ /^\// {print $3}' |
    grep -Ev '/(torch|nvidia|cuda)[^/]*/|/lib(c|m|dl|rt|pthread|gcc_s|stdc\+\+|gomp)\.so|ld-linux' |
    xargs -r cp -L -t .gpu/lib/
done
pwd > .gpu/source_dir  # the tests find the repository's files where it was built (KVBENCH_SOURCE_DIR)
grep -qx '/.gpu/' .gitignore || echo "warning: .gpu/ should be git-ignored" >&2
du -sh .gpu
