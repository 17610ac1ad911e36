#!/usr/bin/env bash
# `kvbench generate` end to end: the JSON contract, greedy ids against llama2.c's run.c reference,
# refresh records, and clear errors (non-zero exit, message naming the problem) for bad input.
set -uo pipefail
source "$(dirname "$0")/common.bash"
require_tiny_model
py=/usr/bin/python3

# Greedy, full cache: the first 40 generated ids equal run.c's for the same prompt.
out=$("$KVBENCH" generate --model "$model" --prompt "Once upon a time" --max-new 40 --format json) || fail "generate failed"
"$py" - "$model/reference/greedy.json" "$out" <<'PY' || fail "json contract / run.c ids"
import json, sys
ref = next(c for c in json.load(open(sys.argv[1]))["cases"] if c["prompt"] == "Once upon a time")
out = json.loads(sys.argv[2])
for key in ("prompt_ids", "generated_ids", "text", "stop_reason", "refreshes"):
    assert key in out, key
assert out["prompt_ids"] == ref["prompt_tokens"], (out["prompt_ids"], ref["prompt_tokens"])
assert out["generated_ids"] == ref["generated_tokens"][:40], out["generated_ids"]
assert out["stop_reason"] == "max_tokens" and out["refreshes"] == []
PY

# With a policy: one refresh every h tokens, each recording step, size and kept positions.
out=$("$KVBENCH" generate --model "$model" --prompt "Once upon a time" --policy counter-causal --J 16 --h 4 --max-new 30 --format json) \
  || fail "generate with policy failed"
"$py" - "$out" <<'PY' || fail "refresh records"
import json, sys
out = json.loads(sys.argv[1])
r = out["refreshes"]
P = len(out["prompt_ids"])
assert [x["step"] for x in r] == [s for s in range(1, 30) if (P + s) % 4 == 0], [x["step"] for x in r]
for x in r:
    assert len(x["kept_positions"]) == min(x["size_before"], 16)
    assert len(x["scores"]) == x["size_before"]
    assert x["kept_positions"] == sorted(x["kept_positions"])
PY

# Sampling is reproducible by seed.
a=$("$KVBENCH" generate --model "$model" --prompt "Once upon a time" --max-new 20 --temperature 0.8 --top-p 0.9 --seed 3 --format json)
b=$("$KVBENCH" generate --model "$model" --prompt "Once upon a time" --max-new 20 --temperature 0.8 --top-p 0.9 --seed 3 --format json)
[ "$("$py" -c 'import json,sys; print(json.loads(sys.argv[1])["generated_ids"])' "$a")" = \
  "$("$py" -c 'import json,sys; print(json.loads(sys.argv[1])["generated_ids"])' "$b")" ] || fail "same seed, different tokens"

# Bad input: exit non-zero with a message that names the problem.
expect_error "model directory /nonexistent does not exist" kvbench generate --model /nonexistent --prompt-ids 1,2
expect_error "config.json" kvbench generate --model "$work" --prompt-ids 1,2
expect_error "not an integer" kvbench generate --model "$model" --prompt-ids 1,x,3
expect_error "unknown policy" kvbench generate --model "$model" --prompt "Hi" --policy lru --J 8
expect_error "--J" kvbench generate --model "$model" --prompt "Hi" --policy sliding
expect_error "recent window" kvbench generate --model "$model" --prompt "Hi there" --policy h2o --J 8 --recent 8
expect_error "frozen prefix" kvbench generate --model "$model" --prompt "Hi" --policy sliding --J 8 --frozen 50
expect_error "exactly one" kvbench generate --model "$model"
echo "generate_cli: all checks passed"
