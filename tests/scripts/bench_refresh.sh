#!/usr/bin/env bash
# `kvbench bench refresh` end to end on models/kvbench-demo: a size filled by a prefill (≤ 512) and one resampled from
# it (cache/resampled_cache.h, tested against references in tests/core/test_resampled_cache.cpp) are both measured
# for each policy, with the time ratio and the fitted exponents; float16 on the CPU too.
set -euo pipefail
source "$(dirname "$0")/common.bash"
demo_model
timeout 120 "$KVBENCH" --threads 1 bench refresh --model "$model" --n 256,4096 --repeats 1 --warmups 0 \
  --policy counter-causal-fast,counter-causal > "$work/out"
for n in 256 4096; do
  for policy in counter-causal-fast counter-causal; do
    grep -Eq "^ +$n  $policy +[0-9.]+ " "$work/out" || { cat "$work/out"; fail "no row for n = $n, $policy"; }
  done
done
grep -q "time ratio counter-causal-fast / counter-causal" "$work/out" || fail "no time ratio"
[[ $(grep -c "^fit over n = 256,4096" "$work/out") == 2 ]] || { cat "$work/out"; fail "no fitted exponents"; }
# float16 on the CPU: the GEMM rate is kvbench::linear's alone (libtorch 1.13 has no CPU float16 product).
timeout 120 "$KVBENCH" --threads 1 bench refresh --model "$model" --dtype float16 --n 64 --repeats 1 --warmups 0 \
  --policy counter-causal > "$work/out"
grep -Eq "^ +64  counter-causal +[0-9.]+ " "$work/out" || { cat "$work/out"; fail "no float16 row"; }
echo "bench refresh: ok"
