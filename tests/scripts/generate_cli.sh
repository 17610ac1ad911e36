#!/usr/bin/env bash
# `kvbench generate` end to end on models/kvbench-demo: the JSON contract, refresh records, sampling by seed,
# and clear errors (non-zero exit, message naming the problem) for bad input; with ../shared also greedy ids
# against llama2.c's run.c reference for stories260K.
set -uo pipefail
source "$(dirname "$0")/common.bash"
demo_model
py=/usr/bin/python3

# Greedy, full cache, on ../shared's stories260K: the first 40 generated ids equal run.c's for the same prompt.
if shared_stories260K; then
  out=$("$KVBENCH" generate --model "$stories" --prompt "Once upon a time" --max-new 40 --format json) || fail "generate failed"
  "$py" - "$stories/reference/greedy.json" "$out" <<'PY' || fail "json contract / run.c ids"
import json, sys
ref = next(c for c in json.load(open(sys.argv[1]))["cases"] if c["prompt"] == "Once upon a time")
out = json.loads(sys.argv[2])
assert out["prompt_ids"] == ref["prompt_tokens"], (out["prompt_ids"], ref["prompt_tokens"])
assert out["generated_ids"] == ref["generated_tokens"][:40], out["generated_ids"]
PY
else
  echo "note: no stories260K under KVBENCH_SHARED: the run.c reference ids left out"
fi

# The JSON contract, greedy and full cache, on the demo model: the prompt's ids are `kvbench tokenize`'s with
# <s> in front, the text is the generated ids decoded with tokenizer.json's byte-level vocabulary (in Python),
# 40 tokens without a stop, no refreshes. (The demo knows its training stories' language: on "Once upon a
# time" it ends after one token; this prompt, 23 tokens, continues past 40.)
prompt="Tom had a red kite. He ran to the park with his dog"
tokens=$("$KVBENCH" tokenize --model "$model" --text "$prompt" --add-special) || fail "tokenize failed"
out=$("$KVBENCH" generate --model "$model" --prompt "$prompt" --max-new 40 --format json) || fail "generate failed"
"$py" - "$out" "$tokens" "$model/tokenizer.json" <<'PY' || fail "json contract"
import json, sys
out = json.loads(sys.argv[1])
for key in ("prompt_ids", "generated_ids", "text", "stop_reason", "refreshes"):
    assert key in out, key
assert out["prompt_ids"] == json.loads(sys.argv[2]), (out["prompt_ids"], sys.argv[2])
assert len(out["generated_ids"]) == 40 and out["stop_reason"] == "max_tokens" and out["refreshes"] == [], out
# GPT-2's byte ↔ printable-character map, inverted.
printable = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
chars, extra = {b: chr(b) for b in printable}, 0
for b in range(256):
    if b not in chars:
        chars[b], extra = chr(256 + extra), extra + 1
byte_of = {c: b for b, c in chars.items()}
token = {i: t for t, i in json.load(open(sys.argv[3]))["model"]["vocab"].items()}
text = bytes(byte_of[c] for i in out["generated_ids"] for c in token[i]).decode("utf-8")
assert out["text"] == text, (out["text"], text)
PY

# With a policy: one refresh every h tokens, each recording step, size and kept positions. J = 24 is above
# the prompt's 23 tokens, so no refresh falls in the prefill, and the 30 new tokens go past it.
out=$("$KVBENCH" generate --model "$model" --prompt "$prompt" --policy counter-causal --J 24 --h 4 --max-new 30 --format json) \
  || fail "generate with policy failed"
"$py" - "$out" <<'PY' || fail "refresh records"
import json, sys
out = json.loads(sys.argv[1])
r = out["refreshes"]
P = len(out["prompt_ids"])
assert P < 24 and len(out["generated_ids"]) == 30, (P, len(out["generated_ids"]))
assert [x["step"] for x in r] == [s for s in range(1, 30) if (P + s) % 4 == 0], [x["step"] for x in r]
assert any(x["size_before"] > 24 for x in r), "nothing evicted"
for x in r:
    assert len(x["kept_positions"]) == min(x["size_before"], 24)
    assert len(x["scores"]) == x["size_before"]
    assert x["kept_positions"] == sorted(x["kept_positions"])
PY

# Sampling is reproducible by seed.
a=$("$KVBENCH" generate --model "$model" --prompt "$prompt" --max-new 20 --temperature 0.8 --top-p 0.9 --seed 3 --format json)
b=$("$KVBENCH" generate --model "$model" --prompt "$prompt" --max-new 20 --temperature 0.8 --top-p 0.9 --seed 3 --format json)
[ "$("$py" -c 'import json,sys; print(json.loads(sys.argv[1])["generated_ids"])' "$a")" = \
  "$("$py" -c 'import json,sys; print(json.loads(sys.argv[1])["generated_ids"])' "$b")" ] || fail "same seed, different tokens"

# A profile is a preset of knobs: under reference h2o carries its accumulator (h2o:carry=true) unless the spec
# says otherwise, and the normal form leaves out a knob at its profile's preset. A job field that holds a
# knob (--policy-seed: random's seed) is the same as the knob. A per-KV-head policy runs under reference too.
policy_of() { "$py" -c 'import json,sys; print(json.loads(sys.argv[1])["policy"])' "$1"; }
kept_of() { "$py" -c 'import json,sys; print([r["kept_positions"] for r in json.loads(sys.argv[1])["refreshes"]])' "$1"; }
short=(--model "$model" --prompt "$prompt" --J 12 --max-new 8 --format json)
[[ $(policy_of "$("$KVBENCH" generate "${short[@]}" --policy h2o --profile reference)") == h2o ]] ||
  fail "reference's preset h2o:carry=true is part of the normal form"
[[ $(policy_of "$("$KVBENCH" generate "${short[@]}" --policy h2o:carry=false --profile reference)") == h2o:carry=false ]] ||
  fail "a knob set back over the profile's preset is not in the normal form"
[[ $(policy_of "$("$KVBENCH" generate "${short[@]}" --policy h2o:carry=true)") == h2o:carry=true ]] ||
  fail "h2o:carry=true under kvbench's profile is not in the normal form"
a=$("$KVBENCH" generate "${short[@]}" --policy random:seed=5)
b=$("$KVBENCH" generate "${short[@]}" --policy random --policy-seed 5)
c=$("$KVBENCH" generate "${short[@]}" --policy random)
[[ $(policy_of "$a") == random && "$(kept_of "$a")" == "$(kept_of "$b")" ]] || fail "random:seed=5 is not --policy-seed 5"
[[ "$(kept_of "$a")" != "$(kept_of "$c")" ]] || fail "random's seed knob changes nothing"
expect_error "seed is given twice" kvbench generate "${short[@]}" --policy random:seed=5 --policy-seed 4
"$KVBENCH" generate "${short[@]}" --policy snapkv:window=4 --profile reference > /dev/null || fail "snapkv under --profile reference"

# Bad input: exit non-zero with a message that names the problem.
expect_error "model /nonexistent does not exist" kvbench generate --model /nonexistent --prompt-ids 1,2
expect_error "config.json" kvbench generate --model "$work" --prompt-ids 1,2
expect_error "not an integer" kvbench generate --model "$model" --prompt-ids 1,x,3
expect_error "prompt token 99999 (at position 2) is outside the model's vocabulary of 892 ids" \
  kvbench generate --model "$model" --prompt-ids 5,6,99999 --policy full
expect_error "prompt token -1 (at position 0)" kvbench generate --model "$model" --prompt-ids -1 --policy full
expect_error "unknown policy" kvbench generate --model "$model" --prompt "Hi" --policy lru --J 8
expect_error "--J" kvbench generate --model "$model" --prompt "Hi" --policy sliding
expect_error "recent window" kvbench generate --model "$model" --prompt "Hi there" --policy h2o --J 8 --recent 8
expect_error "frozen prefix" kvbench generate --model "$model" --prompt "Hi" --policy sliding --J 8 --frozen 50
expect_error "exactly one" kvbench generate --model "$model"
# What a press needs of its job, refused by name before any work: finch the question inside the compressed prompt,
# key rerotation one compression at the prompt's end, kvzip a tokenizer (prompt ids alone give none).
story="Once upon a time there was a little cat who liked to play in the garden"
expect_error "compress-questions" kvbench generate --model "$model" --prompt "$story" --policy finch --J 8 --mode prefill_end
expect_error "needs --mode prefill_end" kvbench generate --model "$model" --prompt "$story" --policy knorm --J 8 \
  --rerotate-keys true
expect_error "as many entries in every layer and head (uniform, chunk" kvbench generate --model "$model" \
  --prompt "$story" --policy knorm --J 8 --mode prefill_end --rerotate-keys true --allocator ada
kvbench generate --model "$model" --prompt "$story" --policy knorm --J 8 --mode prefill_end --rerotate-keys true \
  --max-new 4 > /dev/null 2>&1 || fail "knorm with --rerotate-keys at prefill_end"
kvbench generate --model "$model" --prompt "$story" --policy kvzip --J 8 --mode prefill_end --allocator global \
  --max-new 4 > /dev/null 2>&1 || fail "kvzip with the demo model's tokenizer"
# dms keeps by threshold, without J: each row keeps its newest `window` entries and every other scoring at least the
# threshold (recomputed here from the refresh's recorded scores).
expect_error "needs its threshold" kvbench generate --model "$model" --prompt "$story" --policy knorm --allocator dms \
  --mode prefill_end
expect_error "drop --J" kvbench generate --model "$model" --prompt "$story" --policy knorm --allocator dms:threshold=-8 \
  --J 8 --mode prefill_end
expect_error "or --h" kvbench generate --model "$model" --prompt "$story" --policy knorm --allocator dms:threshold=-8
kvbench generate --model "$model" --prompt "$story" --policy knorm --allocator dms:threshold=-8,window=4 \
  --mode prefill_end --max-new 4 --format json > "$work/dms.json" 2>&1 || fail "knorm with dms at prefill_end"
/usr/bin/python3 - "$work/dms.json" <<'PY' || fail "dms kept other entries than its threshold and window keep"
import json, sys
refresh, = json.load(open(sys.argv[1]))["refreshes"]
positions, kept_any, dropped_any = refresh["positions_before"], False, False
for layer_kept, layer_scores in zip(refresh["kept_positions"], refresh["scores"]):
    for kept, scores in zip(layer_kept, layer_scores):
        window = positions[-4:]
        wanted = [p for p, s in zip(positions, scores) if p in window or not s < -8]
        assert sorted(p for p in kept if p >= 0) == wanted, (kept, wanted)
        kept_any |= len(wanted) > len(window)
        dropped_any |= len(wanted) < len(positions)
assert kept_any and dropped_any, "the threshold keeps all or nothing: it tests nothing"
PY
# layers: a ratio per layer (the demo model has 2), no J, one compression at the prompt's end; each layer's heads
# keep ⌊n·(1 − r)⌋ of the n entries (none for r = 1, at least 1 otherwise).
expect_error "3 ratios for a model of 2 layers" kvbench generate --model "$model" --prompt "$story" --policy knorm \
  --allocator layers:ratios=0.5/0.25/1 --mode prefill_end
expect_error "needs --mode prefill_end" kvbench generate --model "$model" --prompt "$story" --policy knorm \
  --allocator layers:ratios=0.5/0.25 --h 4
expect_error "numbers in 0..1" kvbench generate --model "$model" --prompt "$story" --policy knorm \
  --allocator layers:ratios=0.5/x --mode prefill_end
kvbench generate --model "$model" --prompt "$story" --policy knorm --allocator layers:ratios=0.75/1 \
  --mode prefill_end --max-new 4 --format json > "$work/layers.json" 2>&1 || fail "knorm with layers at prefill_end"
/usr/bin/python3 - "$work/layers.json" <<'PY' || fail "layers kept other counts than its ratios give"
import json, math, sys
refresh, = json.load(open(sys.argv[1]))["refreshes"]
n = refresh["size_before"]
for layer, (rows, ratio) in enumerate(zip(refresh["kept_positions"], [0.75, 1])):
    wanted = 0 if ratio >= 1 else max(1, math.floor(n * (1 - ratio)))
    assert all(sum(p >= 0 for p in row) == wanted for row in rows), (layer, rows, wanted)
PY
echo "generate_cli: all checks passed"
