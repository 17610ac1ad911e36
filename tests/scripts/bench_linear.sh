#!/usr/bin/env bash
# `kvbench bench linear` end to end, warm and --cold (copies of the weight spanning 1 GiB, streamed in turn):
# a row per row count with both products' rates and their share of the dtype's GEMM rate, and in cold mode the copy count and the read bandwidth;
# counts that leave nothing to time are refused.
set -euo pipefail
source "$(dirname "$0")/common.bash"
row='^ +[0-9]+ +[0-9.]+ GB/s +[0-9.]+ GFLOP/s +[0-9]+% +[0-9.]+ GB/s +[0-9.]+ GFLOP/s +[0-9]+%$'
timeout 120 "$KVBENCH" --threads 1 bench linear --rows 1,3 --k 256 --n 512 --repeats 1 > "$work/warm"
[[ $(grep -Ec "$row" "$work/warm") == 2 ]] || { cat "$work/warm"; fail "warm: not one row per row count"; }
grep -Eq "^machine: float32 GEMM [0-9.]+ GFLOP/s" "$work/warm" || { cat "$work/warm"; fail "no GEMM rate of the dtype"; }
timeout 300 "$KVBENCH" --threads 1 bench linear --rows 1 --k 256 --n 512 --repeats 1 --cold > "$work/cold"
grep -Eq "^cold: 2048 copies of the weight \(1024 MiB\) in turn; read bandwidth [0-9.]+ GB/s$" "$work/cold" ||
  { cat "$work/cold"; fail "cold: no copy count or read bandwidth"; }
[[ $(grep -Ec "$row" "$work/cold") == 1 ]] || { cat "$work/cold"; fail "cold: no row"; }
# Counts that leave nothing to time are refused by name (an empty weight once made --cold allocate 2^30 copies).
expect_error "--k" timeout 20 "$KVBENCH" bench linear --k 0 --cold
expect_error "--repeats" timeout 20 "$KVBENCH" bench linear --repeats 0
expect_error "--rows" timeout 20 "$KVBENCH" bench linear --rows 1,-1
echo "bench linear: ok"
