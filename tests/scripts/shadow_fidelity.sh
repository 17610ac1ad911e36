#!/usr/bin/env bash
# `--shadow full` (task-free fidelity) end to end on stories260K: top-1 agreement recomputed with the
# numpy reference decoder, the full policy strays by exactly 0, more eviction strays further, the report's
# fidelity table recomputed from the HDF5 rows (shadow_fidelity.py).
set -euo pipefail
source "$(dirname "$0")/common.bash"
require_h5py
require_tiny_model
[[ -f "$KVBENCH_SHARED/tools/ref_decoder.py" ]] || skip "no ref_decoder.py under $KVBENCH_SHARED/tools"
kvbench generate --model "$model" --prompt "Once upon a time, there was a little girl named Lily. She loved to play" \
  --policy sliding --J 8 --h 4 --max-new 24 --shadow full --format json > "$work/gen.json"
/usr/bin/python3 "$here/shadow_fidelity.py" generate "$work/gen.json" "$model"

job=(--model "$model" --task rare-fact --data "rare-fact:seed=5,samples=3,words=60,facts=1" --max-new 12 --quiet
     --shadow full)
kvbench run "${job[@]}" --policy full --out "$work/full.h5" > /dev/null
kvbench run "${job[@]}" --policy sliding --J 16 --out "$work/sliding16.h5" > /dev/null
kvbench run "${job[@]}" --policy sliding --J 64 --out "$work/sliding64.h5" > /dev/null
kvbench run "${job[@]}" --policy counter-causal --J 16 --rollouts 2 --temperature 0.9 --out "$work/cc16.h5" > /dev/null
/usr/bin/python3 "$here/check_results_schema.py" "$work/cc16.h5" 2 token
/usr/bin/python3 "$here/shadow_fidelity.py" files "$work/full.h5" "$work/sliding16.h5" "$work/sliding64.h5" "$work/cc16.h5"
/usr/bin/python3 "$here/shadow_fidelity.py" more "$work/sliding16.h5" "$work/sliding64.h5"
kvbench report "$work"/sliding*.h5 "$work/cc16.h5" --table fidelity --format csv > "$work/fidelity.csv"
/usr/bin/python3 "$here/shadow_fidelity.py" table "$work/fidelity.csv" "$work/sliding16.h5" "$work/sliding64.h5" "$work/cc16.h5"

# Without a shadow the rows hold none, the table says how to get them, and the option is checked.
kvbench run "${job[@]:0:${#job[@]}-2}" --policy sliding --J 16 --out "$work/plain.h5" > /dev/null
expect_error "run the jobs with \`kvbench run --shadow full\`" kvbench report "$work/plain.h5" --table fidelity
expect_error "shadow" kvbench run "${job[@]:0:${#job[@]}-2}" --policy sliding --J 16 --shadow half --out "$work/x.h5"
echo "shadow fidelity: ok"
