#!/usr/bin/env bash
# Attention mass lost under `--shadow full` end to end: the recorded per-query, per-layer mass recomputed
# in numpy with the reference decoder (../shared's stories260K; left out without it) for a token-level and a
# per-KV-head policy, prefill chunks and decode steps; on models/kvbench-demo: the results files' windows
# well formed, nothing lost without eviction (the full policy, and a budget that never evicts), more
# eviction loses more, and `report --table attention-loss` recomputed from the HDF5 refreshes
# (attention_loss.py).
set -euo pipefail
source "$(dirname "$0")/common.bash"
require_h5py
demo_model
# The numpy recomputation needs ../shared's reference decoder, which knows no key smear: it runs on
# ../shared's stories260K where both are there; the rest runs on the demo model anywhere.
if shared_stories260K && [[ -f "$KVBENCH_SHARED/tools/ref_decoder.py" ]]; then
  prompt="Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her friends"
  for policy in sliding h2o-true; do  # token-level and per-KV-head eviction
    kvbench generate --model "$stories" --prompt "$prompt" --policy $policy --J 12 --h 4 --max-new 20 --shadow full \
      --format json > "$work/gen_$policy.json"
    /usr/bin/python3 "$here/attention_loss.py" generate "$work/gen_$policy.json" "$stories"
  done
else
  echo "note: no stories260K and tools/ref_decoder.py under KVBENCH_SHARED: numpy recomputation left out"
fi

job=(--model "$model" --task rare-fact --data "rare-fact:seed=5,samples=3,words=60,facts=1" --max-new 12 --quiet
     --shadow full)
kvbench run "${job[@]}" --policy full --out "$work/full.h5" > /dev/null
kvbench run "${job[@]}" --policy sliding --J 16 --out "$work/sliding16.h5" > /dev/null
kvbench run "${job[@]}" --policy sliding --J 64 --out "$work/sliding64.h5" > /dev/null
kvbench run "${job[@]}" --policy sliding --J 400 --h 16 --out "$work/never.h5" > /dev/null
kvbench run "${job[@]}" --policy counter-causal --J 16 --rollouts 2 --temperature 0.9 --out "$work/cc16.h5" > /dev/null
/usr/bin/python3 "$here/check_results_schema.py" "$work/cc16.h5" 2 token
/usr/bin/python3 "$here/attention_loss.py" files "$work"/*.h5
/usr/bin/python3 "$here/attention_loss.py" zero "$work/never.h5"
/usr/bin/python3 "$here/attention_loss.py" more "$work/sliding16.h5" "$work/sliding64.h5"
kvbench report "$work"/*.h5 --table attention-loss --format csv > "$work/loss.csv"
/usr/bin/python3 "$here/attention_loss.py" table "$work/loss.csv" "$work"/*.h5

# Without a shadow the table says how to get one.
kvbench run "${job[@]:0:${#job[@]}-2}" --policy sliding --J 16 --out "$work/plain.h5" > /dev/null
expect_error "run the jobs with \`kvbench run --shadow full\`" kvbench report "$work/plain.h5" --table attention-loss
echo "attention loss: ok"
