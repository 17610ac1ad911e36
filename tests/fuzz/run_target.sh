#!/usr/bin/env bash
# One fuzz target over a scratch copy of its corpus (the regression inputs replay first), for SECONDS.
# Usage: run_target.sh BINARY CORPUS_DIR SECONDS. Crash inputs are kept in BINARY's directory under
# crashes/; add each to the corpus once fixed. Exit 77 (skipped) when the fuzz build is absent.
set -euo pipefail
binary=$1 corpus=$2 seconds=${3:-5}
if [[ ! -x "$binary" ]]; then
  echo "skip: $binary not built (the fuzz targets need clang and libFuzzer; scripts/test.sh builds them when clang++ is installed)"
  exit 77
fi
# The targets that read files write theirs under TMPDIR (fuzz_support.h): a directory of this run's, removed
# with the corpus copy, so no run leaves them in /tmp.
work=$(mktemp -d) scratch=$(mktemp -d)
trap 'rm -rf "$work" "$scratch"' EXIT
[[ -d "$corpus" ]] && cp -r "$corpus"/. "$work"/
crashes="$(dirname "$binary")/crashes/$(basename "$binary")"
mkdir -p "$crashes"
TMPDIR="$scratch" LSAN_OPTIONS="suppressions=$(dirname "$0")/lsan.supp" "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
  -artifact_prefix="$crashes/" "$work" 2>&1 | grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==ERROR|SUMMARY|Done)|artifact" || true
exit "${PIPESTATUS[0]}"
