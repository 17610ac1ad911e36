#!/usr/bin/env bash
# Configure, build and run the whole test suite (CTest). Extra arguments go to ctest (e.g. -R tokenizer).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
ctest --test-dir build --output-on-failure "$@"
