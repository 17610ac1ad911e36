#!/usr/bin/env bash
# End-to-end `kvbench grade` on small hand-written JSONL files: scores, pred=None, summary, errors.
set -euo pipefail
source "$(dirname "$0")/common.bash"

# --- math500: a correct boxed answer, a wrong one, and no answer at all.
cat > "$work/math.jsonl" <<'JSONL'
{"id": "test/precalculus/807.json", "answer": "\\left( 3, \\frac{\\pi}{2} \\right)", "pred_raw": "So \\boxed{(3,\\frac{\\pi}{2})}."}
{"id": "b", "answer": "5", "pred_raw": "The result is \\boxed{6}"}
{"id": "c", "answer": "5", "pred_raw": "I give up"}
JSONL
"$KVBENCH" grade --task math500 --input "$work/math.jsonl" --output "$work/math.out.jsonl" 2> "$work/math.err"
grep -q "n=3 mean_score=0.3333 pred_none_rate=0.3333" "$work/math.err" || fail "math500 summary line"
python3 - "$work/math.out.jsonl" <<'PY' || fail "math500 output fields"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["score"] for r in rows] == [1.0, 0.0, 0.0], rows
assert [r["pred_none"] for r in rows] == [False, False, True], rows
assert rows[1]["pred"] == "6" and rows[2]["pred"] is None, rows
assert rows[0]["id"] == "test/precalculus/807.json" and "pred_raw" in rows[0], rows
PY

# --- AIME leading zeros, GPQA letters and rare-fact codes; output to stdout.
printf '%s\n' '{"answer": "025", "pred_raw": "\\boxed{25}"}' > "$work/aime.jsonl"
bash -c "'$KVBENCH' grade --task aime24 --input '$work/aime.jsonl' 2>/dev/null | grep -q '\"score\":1.0'" || fail "aime24 integer match"
printf '%s\n' '{"answer": "C", "pred_raw": "Thinking...\nAnswer: C"}' '{"answer": "C", "pred_raw": "Answer: A"}' > "$work/gpqa.jsonl"
"$KVBENCH" grade --task gpqa-diamond --input "$work/gpqa.jsonl" > "$work/gpqa.out" 2> "$work/gpqa.err"
grep -q "n=2 mean_score=0.5000 pred_none_rate=0.0000" "$work/gpqa.err" || fail "gpqa summary"
printf '%s\n' '{"answers": ["4821"], "lockers": [17], "pred_raw": "The code for locker 17 is 4821."}' > "$work/rare.jsonl"
bash -c "'$KVBENCH' grade --task rare-fact --input '$work/rare.jsonl' 2>/dev/null | grep -q '\"pred\":\"4821\"'" || fail "rare-fact"

# --- Errors name the file and line.
printf '%s\n' '{"answer": "1", "pred_raw": "\\boxed{1}"}' '{"pred_raw": "\\boxed{1}"}' > "$work/missing.jsonl"
expect_error 'missing.jsonl:2: .*"answer"' kvbench grade --task math500 --input "$work/missing.jsonl"
printf '%s\n' '{"answer": "1"}' > "$work/nopred.jsonl"
expect_error 'nopred.jsonl:1: missing field "pred_raw"' kvbench grade --task math500 --input "$work/nopred.jsonl"
printf '%s\n%s' '{"answer": "1", "pred_raw": "x"}' '{"answer": "1", "pred_r' > "$work/truncated.jsonl"
expect_error "truncated.jsonl:2: malformed JSON" kvbench grade --task math500 --input "$work/truncated.jsonl"
expect_error 'unknown task "no-such-task"' kvbench grade --task no-such-task --input "$work/math.jsonl"
echo "grade_cli: all checks passed"
