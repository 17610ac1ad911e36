#!/usr/bin/env bash
# End-to-end training CLI on a tiny scale: train-demo writes a model Model::load / Tokenizer read,
# train-scorer writes a scorer the kvpop policy loads, future-oracle runs; bad inputs fail cleanly.
set -euo pipefail
if [[ -z "${KVBENCH:-}" || ! -x "${KVBENCH}" ]]; then echo "skip: KVBENCH binary not set or not built"; exit 77; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check() {  # check DESCRIPTION COMMAND...: fail loudly when the command fails
  local what=$1; shift
  if ! "$@"; then echo "FAILED: $what"; exit 1; fi
}

"$KVBENCH" train-demo --out "$work/demo" --steps 3 --layers 2 --hidden 32 --intermediate 48 \
  --samples-per-length 4 --words 40 --warmup 1 --eval-samples 2 --eval-words 40 > "$work/demo.err" 2>&1
for f in config.json generation_config.json model.safetensors tokenizer.json tokenizer_config.json training.json; do
  check "train-demo wrote $f" test -s "$work/demo/$f"
done
check "train-demo reports held-out recall" grep -q "held-out rare-fact recall" "$work/demo.err"
check "config.json is a 2-layer llama" python3 - "$work/demo/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert c["model_type"] == "llama" and c["num_hidden_layers"] == 2 and c["hidden_size"] == 32, c
assert c["tie_word_embeddings"] is True and c["eos_token_id"] == 1, c
PY

"$KVBENCH" train-scorer --model "$work/demo" --data "rare-fact:seed=5,samples=3,words=60" \
  --eval-data "rare-fact:seed=6,samples=2,words=60" --s 2 --w 8 --k 8 --kind mlp --hidden 8 --steps 5 \
  --out "$work/scorer.safetensors" > "$work/scorer.err" 2>&1
check "train-scorer wrote the scorer" test -s "$work/scorer.safetensors"
check "train-scorer reports recall" grep -q "learned .*untrained fallback" "$work/scorer.err"

for policy in kvpop future-oracle; do
  extra=()
  [[ $policy == kvpop ]] && extra=(--scorer "$work/scorer.safetensors")
  check "generate with $policy" "$KVBENCH" generate --model "$work/demo" --prompt "Tom found a kite near the park." \
    --policy "$policy" --J 12 --sinks 2 --recent 4 --max-new 4 --format json "${extra[@]}" > "$work/$policy.json"
  check "$policy refreshed per KV head" python3 - "$work/$policy.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["policy"] in ("kvpop", "future-oracle") and r["refreshes"], r
kept = r["refreshes"][0]["kept_positions"]  # [L][KV][M]
assert len(kept) == 2 and all(len(head) == 12 for layer in kept for head in layer), kept
PY
done

# --- Errors name the file.
if "$KVBENCH" generate --model "$work/demo" --prompt "x" --policy kvpop --J 8 --scorer "$work/none.safetensors" \
   2> "$work/err1"; then echo "FAILED: missing scorer accepted"; exit 1; fi
check "missing scorer named" grep -q "error: .*none.safetensors" "$work/err1"
if "$KVBENCH" train-scorer --model "$work/demo" --data "$work/none.jsonl" --out "$work/s2" 2> "$work/err2"; then
  echo "FAILED: missing data accepted"; exit 1
fi
check "missing data named" grep -q "error: .*none.jsonl" "$work/err2"
check "nothing half-written" test ! -e "$work/s2"
echo "ok"
