#!/usr/bin/env bash
# The same CPU benchmarks on both builds, in one run (scripts/test.sh makes build/ and build-torch2/):
# Debian's libtorch 1.13 against PyTorch 2.x's, alternating within each round so that both meet the same
# machine. Ratios within a build (% of the read bound, % of GEMM, B = 16 over B = 1) are what to compare.
#   bash scripts/bench_torches.sh [ROUNDS] [MODEL]      default: 2 rounds, random:qwen2.5-0.5b
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
model=${2:-random:qwen2.5-0.5b}
builds=(build build-torch2)
for b in "${builds[@]}"; do [ -x "$b/kvbench" ] || { echo "$b/kvbench missing: run scripts/test.sh" >&2; exit 1; }; done
for ((r = 1; r <= rounds; ++r)); do
  order=("${builds[@]}"); ((r % 2)) || order=(build-torch2 build)
  for b in "${order[@]}"; do
    echo "=== round $r: $("$b/kvbench" --version)"
    "$b/kvbench" bench decode --model "$model" --dtype float32,bfloat16 --prompt-len 512 --new 128 --repeats 3
    "$b/kvbench" bench throughput --model "$model" --batch 1,16
    "$b/kvbench" bench refresh --model "$model" --n 1024 --repeats 3
  done
done
