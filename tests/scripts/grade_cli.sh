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

# --- A row that cannot be graded (no gold, no pred_raw) is scored 0 with a warning naming its line;
# the other rows and the file still complete.
printf '%s\n' '{"answer": "1", "pred_raw": "\\boxed{1}"}' '{"pred_raw": "\\boxed{1}"}' '{"answer": "1"}' > "$work/partial.jsonl"
"$KVBENCH" grade --task math500 --input "$work/partial.jsonl" > "$work/partial.out" 2> "$work/partial.err" || { cat "$work/partial.err"; fail "one ungradable row failed the file"; }
grep -q 'partial.jsonl:2: cannot grade (.*"answer"' "$work/partial.err" || { cat "$work/partial.err"; fail "no warning naming line 2"; }
grep -q 'partial.jsonl:3: no string field "pred_raw"' "$work/partial.err" || { cat "$work/partial.err"; fail "no warning naming line 3"; }
python3 - "$work/partial.out" <<'PY' || fail "ungradable rows"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["score"] for r in rows] == [1.0, 0.0, 0.0], rows
assert "grading_error" not in rows[0].get("details", {}) and all("grading_error" in r["details"] for r in rows[1:]), rows
assert rows[1]["pred_none"] and rows[2]["pred"] is None, rows
PY
# --- The rows that crashed or aborted `kvbench grade` (issue 12): thousands of open parentheses, a
# 10^5-term sum, a 5000-digit factorial; each is scored, and so is the ordinary row after them.
python3 - "$work/hostile.jsonl" <<'PY'
import json, sys
rows = ["\\boxed{" + "(" * 100000 + "}", "\\boxed{" + "1+" * 100000 + "1}", "\\boxed{" + "9" * 5000 + "!}",
        "\\boxed{" * 100000, "\\boxed{7}"]
with open(sys.argv[1], "w") as f:
    for i, pred in enumerate(rows): f.write(json.dumps({"id": str(i), "answer": "7", "pred_raw": pred}) + "\n")
PY
"$KVBENCH" grade --task math500 --input "$work/hostile.jsonl" --output "$work/hostile.out" 2> "$work/hostile.err" || { cat "$work/hostile.err"; fail "hostile predictions failed the grade"; }
grep -q "n=5 mean_score=0.2000" "$work/hostile.err" || { cat "$work/hostile.err"; fail "hostile rows not scored"; }
# A file that is not JSON Lines is an error naming its line, and nothing is written.
printf '%s\n%s' '{"answer": "1", "pred_raw": "x"}' '{"answer": "1", "pred_r' > "$work/truncated.jsonl"
expect_error "truncated.jsonl:2: malformed JSON" kvbench grade --task math500 --input "$work/truncated.jsonl" --output "$work/truncated.out"
[[ ! -e "$work/truncated.out" ]] || fail "a failed grade left an output file"
expect_error 'unknown task "no-such-task"' kvbench grade --task no-such-task --input "$work/math.jsonl"
echo "grade_cli: all checks passed"
