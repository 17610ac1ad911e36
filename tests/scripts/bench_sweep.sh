#!/usr/bin/env bash
# `kvbench bench sweep` end to end on models/kvbench-demo: per round a decode-heavy and a prefill-heavy row, each
# with the wall time at batch 1 and at the batch compared, samples/s at both and their ratio as the speed-up.
set -euo pipefail
source "$(dirname "$0")/common.bash"
demo_model
timeout 300 "$KVBENCH" --threads 1 bench sweep --model "$model" --policy counter-causal --J 16 --h 16 --samples 4 --batch 4 \
  --decode-prompt 12 --decode-new 32 --prefill-prompt 5000 --prefill-new 2 --rounds 2 > "$work/out"
grep -q "batch 1 vs 4" "$work/out" || { cat "$work/out"; fail "no batch line"; }
number='[0-9]+\.[0-9]+'
for shape in decode-heavy prefill-heavy; do
  rows=$(grep -cE "^$shape +[0-9]+ +[0-9]+ +$number +$number +$number → $number +${number}x$" "$work/out" || true)
  [[ $rows -eq 2 ]] || { cat "$work/out"; fail "$rows $shape rows, not one per round"; }
done
# The speed-up is the ratio of the two wall times, and samples/s is --samples over each (the times are
# printed to 3 decimals: the checks allow that rounding, and 1% of the rest).
awk -v n=4 'function within(x, lo, hi) { return x >= 0.99 * lo && x <= 1.01 * hi }
            /^(decode|prefill)-heavy/ { a = $4; b = $5; e = 0.0005
              if (!within($9 + 0, (a - e) / (b + e), (a + e) / (b - e))) bad = 1
              if (!within($6, n / (a + e), n / (a - e)) || !within($8, n / (b + e), n / (b - e))) bad = 1 }
            END { exit bad }' "$work/out" || { cat "$work/out"; fail "speed-up or samples/s inconsistent with the times"; }
# A prompt longer than the model's positions is cut to fit them with the new tokens.
positions=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['max_position_embeddings'])" "$model/config.json")
grep -qE "^prefill-heavy +$((positions - 2)) +2 " "$work/out" || { cat "$work/out"; fail "prefill prompt not cut to $((positions - 2))"; }
expect_error "--samples" timeout 20 "$KVBENCH" bench sweep --model "$model" --samples 0
echo "bench sweep: ok"
