#!/usr/bin/env bash
# End-to-end `kvbench grade` on small hand-written JSONL files: scores, pred=None, summary, errors.
set -euo pipefail
if [[ -z "${KVBENCH:-}" || ! -x "${KVBENCH}" ]]; then echo "skip: KVBENCH binary not set or not built"; exit 77; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check() {  # check DESCRIPTION COMMAND...: fail loudly when the command fails
  local what=$1; shift
  if ! "$@"; then echo "FAILED: $what"; exit 1; fi
}

# --- math500: a correct boxed answer, a wrong one, and no answer at all.
cat > "$work/math.jsonl" <<'JSONL'
{"id": "test/precalculus/807.json", "answer": "\\left( 3, \\frac{\\pi}{2} \\right)", "pred_raw": "So \\boxed{(3,\\frac{\\pi}{2})}."}
{"id": "b", "answer": "5", "pred_raw": "The result is \\boxed{6}"}
{"id": "c", "answer": "5", "pred_raw": "I give up"}
JSONL
"$KVBENCH" grade --task math500 --input "$work/math.jsonl" --output "$work/math.out.jsonl" 2> "$work/math.err"
check "math500 summary line" grep -q "n=3 mean_score=0.3333 pred_none_rate=0.3333" "$work/math.err"
check "math500 output fields" python3 - "$work/math.out.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["score"] for r in rows] == [1.0, 0.0, 0.0], rows
assert [r["pred_none"] for r in rows] == [False, False, True], rows
assert rows[1]["pred"] == "6" and rows[2]["pred"] is None, rows
assert rows[0]["id"] == "test/precalculus/807.json" and "pred_raw" in rows[0], rows
PY

# --- AIME leading zeros, GPQA letters and rare-fact codes; output to stdout.
printf '%s\n' '{"answer": "025", "pred_raw": "\\boxed{25}"}' > "$work/aime.jsonl"
check "aime24 integer match" bash -c "'$KVBENCH' grade --task aime24 --input '$work/aime.jsonl' 2>/dev/null | grep -q '\"score\":1.0'"
printf '%s\n' '{"answer": "C", "pred_raw": "Thinking...\nAnswer: C"}' '{"answer": "C", "pred_raw": "Answer: A"}' > "$work/gpqa.jsonl"
"$KVBENCH" grade --task gpqa-diamond --input "$work/gpqa.jsonl" > "$work/gpqa.out" 2> "$work/gpqa.err"
check "gpqa summary" grep -q "n=2 mean_score=0.5000 pred_none_rate=0.0000" "$work/gpqa.err"
printf '%s\n' '{"answers": ["4821"], "lockers": [17], "pred_raw": "The code for locker 17 is 4821."}' > "$work/rare.jsonl"
check "rare-fact" bash -c "'$KVBENCH' grade --task rare-fact --input '$work/rare.jsonl' 2>/dev/null | grep -q '\"pred\":\"4821\"'"

# --- Errors name the file and line.
printf '%s\n' '{"answer": "1", "pred_raw": "\\boxed{1}"}' '{"pred_raw": "\\boxed{1}"}' > "$work/missing.jsonl"
if "$KVBENCH" grade --task math500 --input "$work/missing.jsonl" > /dev/null 2> "$work/missing.err"; then
  echo "FAILED: a line without the gold answer was accepted"; exit 1
fi
check "missing gold names file:line" grep -q "missing.jsonl:2: .*\"answer\"" "$work/missing.err"
printf '%s\n' '{"answer": "1"}' > "$work/nopred.jsonl"
if "$KVBENCH" grade --task math500 --input "$work/nopred.jsonl" > /dev/null 2> "$work/nopred.err"; then
  echo "FAILED: a line without pred_raw was accepted"; exit 1
fi
check "missing pred_raw names file:line" grep -q "nopred.jsonl:1: missing field \"pred_raw\"" "$work/nopred.err"
printf '%s\n%s' '{"answer": "1", "pred_raw": "x"}' '{"answer": "1", "pred_r' > "$work/truncated.jsonl"
if "$KVBENCH" grade --task math500 --input "$work/truncated.jsonl" > /dev/null 2> "$work/truncated.err"; then
  echo "FAILED: a truncated file was accepted"; exit 1
fi
check "truncated names file:line" grep -q "truncated.jsonl:2: malformed JSON" "$work/truncated.err"
if "$KVBENCH" grade --task no-such-task --input "$work/math.jsonl" > /dev/null 2> "$work/task.err"; then
  echo "FAILED: an unknown task was accepted"; exit 1
fi
check "unknown task listed" grep -q "unknown task \"no-such-task\"" "$work/task.err"
echo "grade_cli: all checks passed"
