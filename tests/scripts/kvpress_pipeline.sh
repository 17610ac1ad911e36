#!/usr/bin/env bash
# `--pipeline kvpress` against kvpress's own pipeline (tests/peers/reference_pipeline.py: kvpress 0.5.5's
# KVPressTextGenerationPipeline) on the real SmolLM2-135M-Instruct: kvpress-format rows (a needle in a noise
# haystack, ~1K tokens: context, question, answer prefix) through the chat template, each press compressing the
# context once at its end (--mode prefill_end) at two ratios, no press, and compress_questions. Per row: the
# greedy tokens, the context's and the question's token counts, and J = int(context tokens x (1 - ratio)) - the
# budget from the context alone - equal kvpress's.
set -uo pipefail
source "$(dirname "$0")/common.bash"
require_h5py
peer_python=${KVBENCH_PYTHON:-${KVBENCH_SOURCE:-$here/../..}/.venv/bin/python}
gguf=${KVBENCH_MODELS:-$HOME/.cache/kvbench/models}/smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf
missing() { if [[ -n "${CI:-}" ]]; then fail "CI: $1"; else skip "$1"; fi; }
[[ -x "$peer_python" ]] || missing "no peer environment at $peer_python (run scripts/setup.sh)"
[[ -f "$gguf" ]] || missing "$gguf not found (run scripts/setup.sh or \`kvbench models fetch\`)"
"$peer_python" -c "import kvpress" 2>/dev/null || missing "$peer_python has no kvpress"

# Two rows as kvpress's RULER set has them (evaluation/benchmarks/ruler: the question split off at "What is the
# special magic", the answer prefix at "The special magic").
/usr/bin/python3 - "$work/rows.jsonl" <<'PY'
import json, sys
noise = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. "
with open(sys.argv[1], "w") as f:
    for key, value, depth in (("gentle-harbor", "4817203", 0.3), ("silent-meadow", "9062415", 0.8)):
        lines = [noise] * 40
        lines.insert(int(depth * len(lines)), f"One of the special magic numbers for {key} is: {value}. ")
        context = ("Some special magic numbers are hidden within the following text. Make sure to memorize it. "
                   "I will quiz you about the numbers afterwards.\n" + "".join(lines) + "\n")
        f.write(json.dumps({"context": context,
                            "question": f"What is the special magic number for {key} mentioned in the provided text? ",
                            "answer_prefix": f"The special magic number for {key} mentioned in the provided text is",
                            "answer": [value], "task": "niah_single_1"}) + "\n")
PY

max_new=24
# POLICY PRESS RATIO COMPRESS_QUESTIONS: kvbench's policy and kvpress's press on the same rows.
cases=("full none 0 0" "snapkv SnapKVPress 0.5 0" "knorm KnormPress 0.5 0" "streaming StreamingLLMPress 0.5 0"
       "snapkv SnapKVPress 0.75 0" "knorm KnormPress 0.75 0" "streaming StreamingLLMPress 0.75 0"
       "snapkv SnapKVPress 0.5 1")
peer_cases=()
for case in "${cases[@]}"; do
  read -r policy press ratio questions <<< "$case"
  name="$policy-$ratio-q$questions" budget=()
  [[ "$policy" == full ]] || budget=(--J "ratio:$ratio")
  kvbench run --model "$gguf" --task ruler --data "$work/rows.jsonl" --prompt-mode chat --pipeline kvpress \
    --compress-questions "$([[ $questions == 1 ]] && echo true || echo false)" --policy "$policy" "${budget[@]}" \
    --mode prefill_end --max-new "$max_new" --out "$work/$name.h5" --quiet > /dev/null 2> "$work/$name.err" ||
    { cat "$work/$name.err"; fail "kvbench $name"; }
  peer_cases+=("{\"press\": \"$press\", \"ratio\": $ratio, \"max_new\": $max_new, \"compress_questions\": $questions, \"output\": \"$work/$name.json\"}")
done
(IFS=,; echo "[${peer_cases[*]}]") > "$work/cases.json"
"$peer_python" "$KVBENCH_SOURCE/tests/peers/reference_pipeline.py" "$gguf" "$work/rows.jsonl" "$work/cases.json" \
  2> "$work/peer.err" || { cat "$work/peer.err"; fail "kvpress's pipeline"; }

for case in "${cases[@]}"; do
  read -r policy press ratio questions <<< "$case"
  name="$policy-$ratio-q$questions"
  /usr/bin/python3 - "$work/$name.h5" "$work/$name.json" "$ratio" "$policy" <<'PY' || fail "$name: kvbench differs from kvpress's pipeline"
import json, sys, h5py
path, peer, ratio, policy = sys.argv[1], json.load(open(sys.argv[2])), float(sys.argv[3]), sys.argv[4]
with h5py.File(path) as f:
    config = json.loads(f["/"].attrs["config"])
    assert config["pipeline"] == "kvpress", config
    for row, expected in enumerate(peer):
        # Either may end with the end-of-turn token it stopped at.
        strip = lambda xs: xs[:-1] if xs and xs[-1] in expected["eos"] else xs
        ids = strip([int(i) for i in f["rows/generated_ids"][row] if i >= 0])
        assert ids == strip(expected["ids"]), (row, ids, expected["ids"], expected["answer"])
        n = expected["context_tokens"]
        assert f["rows/prompt_length"][row] == n + expected["question_tokens"], (row, f["rows/prompt_length"][row], expected)
        if policy != "full":
            assert f["rows/budget_J"][row] == int(n * (1 - ratio)), (row, f["rows/budget_J"][row], n)
        print(f"{policy} ratio {ratio}: row {row}, {n} context + {expected['question_tokens']} question tokens, "
              f"{len(ids)} tokens as kvpress: {expected['answer']!r}")
PY
done
echo "kvpress_pipeline: all checks passed"
