#!/usr/bin/env bash
# Runs every libFuzzer target (tests/fuzz/fuzz_*.cpp) for SECONDS each (default 60) and prints the
# executions and crashes per target. Builds the fuzz targets first (clang, ASan + UBSan) if needed.
# Crash inputs land in build/fuzz/crashes/TARGET/; once fixed, copy each into tests/fuzz/corpus/TARGET/.
# Usage: bash scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
command -v clang++ > /dev/null || { echo "fuzz: clang++ not found (apt-get install clang libclang-rt-dev)" >&2; exit 1; }
cmake -S tests/fuzz -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ > /dev/null
cmake --build build/fuzz
printf '%-20s %12s %8s\n' target executions crashes
status=0
for binary in build/fuzz/fuzz_*; do
  name=$(basename "$binary")
  rm -rf "build/fuzz/crashes/$name"
  log=$(bash tests/fuzz/run_target.sh "$binary" "tests/fuzz/corpus/$name" "$seconds") || status=1
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' <<< "$log")
  crashes=$(ls "build/fuzz/crashes/$name" 2>/dev/null | wc -l)
  printf '%-20s %12s %8s\n' "$name" "${runs:-?}" "$crashes"
done
exit $status
