#!/usr/bin/env bash
# `kvbench datasets export`: a job's samples as rows of kvpress's dataset format. Generated RULER samples (niah,
# vt) and rare-fact come out with kvpress's columns, split where kvpress's RULER set splits its rows (the question
# from "What is the special magic" / "Question: Find all variables", the answer prefix from "The special magic" /
# "Answer:"), their references and the task's own max new tokens; read back by `--task ruler --data ROWS`, the
# rows give the same prompts and greedy tokens as the generated samples, and each row its own max new tokens when
# the job gives none. A task without a context/question split is refused naming the sample, and nothing is written.
set -uo pipefail
source "$(dirname "$0")/common.bash"
require_h5py
demo_model

kvbench datasets export --model "$model" --task ruler --data ruler:niah_single_1,length=1024,samples=2 \
  --out "$work/niah.jsonl" > "$work/out" || fail "export niah"
grep -q "2 rows in kvpress's format" "$work/out" || fail "export's line: $(cat "$work/out")"
kvbench datasets export --model "$model" --task ruler --data ruler:vt,length=1200,samples=2 --out "$work/vt.jsonl" \
  > /dev/null || fail "export vt"
kvbench datasets export --model "$model" --task ruler --data ruler:vt,length=1200,samples=2 --max-new 16 \
  --out "$work/vt16.jsonl" > /dev/null || fail "export vt --max-new 16"
kvbench datasets export --model "$model" --task rare-fact --data rare-fact:seed=0,samples=2 --out "$work/rf.jsonl" \
  > /dev/null || fail "export rare-fact"
/usr/bin/python3 - "$work" <<'PY' || fail "rows"
import json, sys
work = sys.argv[1]
def rows(name):
    return [json.loads(line) for line in open(f"{work}/{name}.jsonl")]
for name, task, question, prefix, max_new in (("niah", "niah_single_1", "What is the special magic", "The special magic", 128),
                                             ("vt", "vt", "Question: Find all variables", "Answer:", 30),
                                             ("vt16", "vt", "Question: Find all variables", "Answer:", 16),
                                             ("rf", "rare-fact", "Question:", "Answer:", None)):
    for index, row in enumerate(rows(name)):
        assert set(row) == {"index", "context", "question", "answer_prefix", "answer", "task", "max_new_tokens"}, row.keys()
        assert row["index"] == index and row["task"] == task, (row["index"], row["task"])
        assert row["question"].lstrip().startswith(question) and row["answer_prefix"].startswith(prefix), (row["question"][:60], row["answer_prefix"])
        assert question not in row["context"] or name != "niah", row["context"][-200:]  # vt: its example has one
        assert isinstance(row["answer"], list) and row["answer"] and all(isinstance(a, str) and a for a in row["answer"]), row["answer"]
        assert max_new is None or row["max_new_tokens"] == max_new, (name, row["max_new_tokens"])
print("rows: kvpress's columns, splits, references and max new tokens")
PY

# Read back, the rows are the samples they came from.
for data in ruler:niah_single_1,length=1024,samples=2 "$work/niah.jsonl"; do
  name=$([[ $data == ruler:* ]] && echo generated || echo rows)
  kvbench run --model "$model" --task ruler --data "$data" --policy full --max-new 8 --out "$work/$name.h5" --quiet \
    > /dev/null || fail "run on $data"
done
/usr/bin/python3 - "$work/generated.h5" "$work/rows.h5" <<'PY' || fail "the exported rows run differently from their samples"
import sys, h5py
a, b = (h5py.File(path) for path in sys.argv[1:])
assert list(a["rows/prompt_length"][:]) == list(b["rows/prompt_length"][:]), (a["rows/prompt_length"][:], b["rows/prompt_length"][:])
for x, y in zip(a["rows/generated_ids"], b["rows/generated_ids"]):
    assert list(x) == list(y), (list(x), list(y))
print("round trip: prompt lengths", list(a["rows/prompt_length"][:]), "and greedy tokens identical")
PY

# Without --max-new each row runs its own limit (kvpress's evaluate.py with max_new_tokens null): vt's rows 30
# tokens, rows that say max_new_tokens 5 five; the config records max_new 0.
/usr/bin/python3 - "$work/vt.jsonl" "$work/vt5.jsonl" <<'PY' || fail "vt5 rows"
import json, sys
with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        out.write(json.dumps(dict(json.loads(line), max_new_tokens=5)) + "\n")
PY
for rows in vt vt5; do
  kvbench run --model "$model" --task ruler --data "$work/$rows.jsonl" --policy full --out "$work/$rows.h5" --quiet \
    > /dev/null || fail "run on $rows rows"
done
/usr/bin/python3 - "$work" <<'PY' || fail "rows' own max_new_tokens"
import json, sys, h5py
for name, limit in (("vt", 30), ("vt5", 5)):
    with h5py.File(f"{sys.argv[1]}/{name}.h5") as f:
        assert json.loads(f["/"].attrs["config"])["max_new"] == 0, name
        lengths, reasons = list(f["rows/generated_length"][:]), [r.decode() for r in f["rows/stop_reason"][:]]
        assert all(n <= limit for n in lengths) and all(n == limit for n, r in zip(lengths, reasons) if r == "max_tokens"), (name, lengths, reasons)
print("each row its own max_new_tokens: vt 30, edited rows 5")
PY

echo '{"problem": "What is 1+1?", "answer": "2", "unique_id": "test/one.json", "subject": "Algebra", "level": 1, "solution": "2"}' \
  > "$work/math500.jsonl"
expect_error "sample test/one.json of task math500: its prompt has no context/question split" \
  kvbench datasets export --model "$model" --task math500 --data "$work/math500.jsonl" --out "$work/math.jsonl"
[[ ! -e "$work/math.jsonl" ]] || fail "a refused export wrote $work/math.jsonl"
echo "datasets_export: all checks passed"
