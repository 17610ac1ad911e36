#!/usr/bin/env bash
# `kvbench bench decode` end to end on models/kvbench-demo: the machine's rates (measured before and after the
# timed runs), prefill against the GEMM rate, decode against the read bandwidth and the GEMV rate, and
# against the read bandwidth beside each repeat; several dtypes in one run.
set -euo pipefail
source "$(dirname "$0")/common.bash"
demo_model
timeout 300 "$KVBENCH" --threads 1 bench decode --model "$model" --prompt-len 16 --new 8 --repeats 1 > "$work/out"
expect_line() { grep -Eq "$1" "$work/out" || { cat "$work/out"; fail "no line matching: $1"; }; }
expect_line "^machine: float32 GEMM [0-9.]+ GFLOP/s; read bandwidth [0-9.]+ GB/s .*, by a one-row product \(GEMV\) [0-9.]+ GB/s; each the best of before and after$"
expect_line "^prefill [0-9.]+ tokens/s, [0-9.]+ GFLOP/s = [0-9]+% of the float32 GEMM rate$"
expect_line "^decode  [0-9.]+ tokens/s, [0-9.]+ MB read per token .* = [0-9.]+ GB/s, [0-9]+% of the read bandwidth, [0-9]+% of the GEMV rate$"
expect_line "^decode against the read bandwidth beside each repeat \(the higher of just before and just after it\), median of 1: [0-9]+% \(range [0-9]+-[0-9]+%\)$"
# Several dtypes: one model each, timed in turns; each gets its own figures, then its speed against the first.
timeout 300 "$KVBENCH" --threads 1 bench decode --model "$model" --dtype float32,bfloat16 --prompt-len 16 --new 8 \
  --repeats 1 > "$work/out"
expect_line "^model .* dtype float32, 1 threads$"
expect_line "^model .* dtype bfloat16, 1 threads$"
[ "$(grep -c '^decode  ' "$work/out")" = 2 ] || { cat "$work/out"; fail "not one decode line per dtype"; }
expect_line "^bfloat16:$"
# Each dtype's prefill against the GEMM rate of that dtype, measured in the same run.
expect_line "^machine: bfloat16 GEMM [0-9.]+ GFLOP/s; read bandwidth"
expect_line "^prefill [0-9.]+ tokens/s, [0-9.]+ GFLOP/s = [0-9]+% of the bfloat16 GEMM rate$"
expect_line "^bfloat16 against float32, in turns in this run: decode [0-9.]+x, prefill [0-9.]+x$"
expect_error 'unknown dtype ""' timeout 20 "$KVBENCH" bench decode --model "$model" --dtype float32,,bfloat16
expect_error "--dtype lists bfloat16 twice" timeout 20 "$KVBENCH" bench decode --model "$model" --dtype bfloat16,float32,bf16
expect_error "--repeats" timeout 20 "$KVBENCH" bench decode --model "$model" --repeats 0  # a median of nothing crashed
echo "bench decode: ok"
