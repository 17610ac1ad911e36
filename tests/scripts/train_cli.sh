#!/usr/bin/env bash
# End-to-end training CLI on a tiny scale: train-demo writes a model Model::load / Tokenizer read,
# train-scorer writes a scorer the kvpop policy loads in generate, run and sweep; future-oracle runs
# through generate, run and sweep alike; bad inputs fail cleanly.
set -euo pipefail
source "$(dirname "$0")/common.bash"

kvbench train-demo --out "$work/demo" --steps 3 --layers 2 --hidden 32 --intermediate 48 --batch-size 4 \
  --short-words 40 --long-words 40 --warmup 1 --probe-every 2 --probe-samples 2 --probe-words 40 \
  --eval-samples 2 --eval-words 40 > "$work/demo.err" 2>&1
for f in config.json generation_config.json model.safetensors tokenizer.json tokenizer_config.json training.json; do
  [[ -s "$work/demo/$f" ]] || fail "train-demo did not write $f"
done
grep -q "held-out rare-fact recall" "$work/demo.err" || fail "train-demo reports no held-out recall"
grep -q "step 2: held-out recall" "$work/demo.err" || fail "train-demo ran no recall probe"
grep -q "held-out filler loss .* bigram baseline" "$work/demo.err" || fail "train-demo reports no filler loss"
/usr/bin/python3 - "$work/demo/config.json" <<'PY' || fail "config.json is not a 2-layer llama"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["model_type"] == "llama" and c["num_hidden_layers"] == 2 and c["hidden_size"] == 32, c
assert c["tie_word_embeddings"] is True and c["eos_token_id"] == 1, c
PY

kvbench train-scorer --model "$work/demo" --data "rare-fact:seed=5,samples=3,words=60" \
  --eval-data "rare-fact:seed=6,samples=2,words=60" --s 2 --w 8 --k 8 --kind mlp --hidden 8 --steps 5 \
  --out "$work/scorer.safetensors" > "$work/scorer.err" 2>&1
[[ -s "$work/scorer.safetensors" ]] || fail "train-scorer wrote no scorer"
grep -q "learned .*untrained fallback" "$work/scorer.err" || fail "train-scorer reports no recall"

for policy in kvpop future-oracle; do
  extra=()
  [[ $policy == kvpop ]] && extra=(--scorer "$work/scorer.safetensors")
  kvbench generate --model "$work/demo" --prompt "Tom found a kite near the park." --policy "$policy" --J 12 \
    --sinks 2 --recent 4 --max-new 4 --format json "${extra[@]}" > "$work/$policy.json" || fail "generate with $policy"
  /usr/bin/python3 - "$work/$policy.json" <<'PY' || fail "$policy did not refresh per KV head"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["policy"] in ("kvpop", "future-oracle") and r["refreshes"], r
kept = r["refreshes"][0]["kept_positions"]  # [L][KV][M]
assert len(kept) == 2 and all(len(head) == 12 for layer in kept for head in layer), kept
PY
done

# run and sweep: the scorer is part of the job (recorded, and it changes what kvpop keeps); the other
# policies drop it; future-oracle looks ahead per sample.
require_h5py
job=(--model "$work/demo" --task rare-fact --data "rare-fact:seed=2,samples=2,words=40" --J 16 --h 4 --sinks 2
     --recent 4 --max-new 6 --quiet)
kvbench run "${job[@]}" --policy kvpop --scorer "$work/scorer.safetensors" --out "$work/learned.h5" > /dev/null
kvbench run "${job[@]}" --policy kvpop --out "$work/fallback.h5" > /dev/null
kvbench run "${job[@]}" --policy future-oracle --out "$work/oracle.h5" > /dev/null
/usr/bin/python3 - "$work" "$work/scorer.safetensors" <<'PY' || fail "run: scorer or oracle results"
import h5py, json, sys
work, scorer = sys.argv[1], sys.argv[2]
def load(name):
    f = h5py.File(f"{work}/{name}.h5")
    return json.loads(f["/"].attrs["config"]), [list(k) for k in f["refreshes/kept_positions"][:]]
learned, fallback, oracle = load("learned"), load("fallback"), load("oracle")
assert learned[0]["scorer"] == scorer and fallback[0]["scorer"] == "", (learned[0], fallback[0])
assert learned[1] and learned[1] != fallback[1], "the scorer did not change what kvpop kept"
assert oracle[0]["policy"] == "future-oracle" and oracle[1], oracle[0]
PY
cat > "$work/sweep.json" <<JSON
{"base": {"model": "$work/demo", "task": "rare-fact", "data": "rare-fact:seed=2,samples=2,words=40", "J": 16, "h": 4,
          "sinks": 2, "recent": 4, "max_new": 6, "scorer": "$work/scorer.safetensors"},
 "grid": {"policy": ["kvpop", "tova", "future-oracle"]}}
JSON
kvbench sweep --config "$work/sweep.json" --out-dir "$work/sweep" --quiet > /dev/null 2>&1 || fail "sweep"
/usr/bin/python3 - "$work" "$work/scorer.safetensors" <<'PY' || fail "sweep: scorer kept for kvpop only, or results differ from run"
import glob, h5py, json, sys
work, scorer = sys.argv[1], sys.argv[2]
files = {json.loads(h5py.File(p)["/"].attrs["config"])["policy"]: h5py.File(p) for p in glob.glob(f"{work}/sweep/*.h5")}
assert sorted(files) == ["future-oracle", "kvpop", "tova"], sorted(files)
assert json.loads(files["kvpop"]["/"].attrs["config"])["scorer"] == scorer
assert json.loads(files["tova"]["/"].attrs["config"])["scorer"] == ""
for policy, single in (("kvpop", "learned"), ("future-oracle", "oracle")):
    ran = h5py.File(f"{work}/{single}.h5")
    ids = lambda f: [list(row) for row in f["rows/generated_ids"][:]]
    assert ids(files[policy]) == ids(ran), policy
PY

# --- Errors name the file; nothing is half-written.
expect_error "error: .*none.safetensors" kvbench generate --model "$work/demo" --prompt "x" --policy kvpop --J 8 \
  --scorer "$work/none.safetensors"
expect_error "error: .*none.safetensors" kvbench run "${job[@]}" --policy kvpop --scorer "$work/none.safetensors" \
  --out "$work/bad.h5"
[[ ! -e "$work/bad.h5" ]] || fail "a run with a missing scorer left an output"
expect_error "error: .*none.jsonl" kvbench train-scorer --model "$work/demo" --data "$work/none.jsonl" --out "$work/s2"
[[ ! -e "$work/s2" ]] || fail "train-scorer half-wrote its output"
echo "ok"
