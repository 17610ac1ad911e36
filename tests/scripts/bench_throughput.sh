#!/usr/bin/env bash
# `kvbench bench throughput` end to end on models/kvbench-demo: a row per batch size with the speed-up over the
# first, and the decode refreshes' counted scoring work in the GFLOP/s (none for full; the counter-causal
# pass, every layer with its MLP, outweighs the fast pass, the last layer without).
set -euo pipefail
source "$(dirname "$0")/common.bash"
demo_model
# refresh_share POLICY [OPTIONS...]: runs batches 1 and 3 and prints the refresh column of batch 3.
refresh_share() {
  local policy=$1; shift
  timeout 300 "$KVBENCH" --threads 1 bench throughput --model "$model" --policy "$policy" "$@" --batch 1,3 --rounds 1 \
    --prompt-len 24 --new 12 > "$work/out"
  grep -Eq "^ +1 +[0-9.]+ +1\.00x +[0-9.]+ +[0-9.]+% +[0-9.]+%$" "$work/out" || { cat "$work/out"; fail "$policy: no batch-1 row"; }
  grep -E "^ +3 +[0-9.]+ +[0-9.]+x +[0-9.]+ +[0-9.]+% +[0-9.]+%$" "$work/out" | awk '{print $NF}' | tr -d % \
    | grep . || { cat "$work/out"; fail "$policy: no batch-3 row"; }
}
full=$(refresh_share full)
cc=$(refresh_share counter-causal --J 8 --h 4)
fast=$(refresh_share counter-causal-fast --J 8 --h 4)
awk -v f="$full" 'BEGIN { exit !(f == 0) }' || fail "full refreshes nothing, yet its refresh share is $full%"
awk -v c="$cc" -v f="$fast" 'BEGIN { exit !(c > f && f > 0) }' || fail "refresh shares: counter-causal $cc%, fast $fast%"
expect_error "--batch" timeout 20 "$KVBENCH" bench throughput --model "$model" --batch 0
echo "bench throughput: ok (refresh share of the work: counter-causal $cc%, fast $fast%)"
