#!/usr/bin/env bash
# End-to-end `kvbench tokenize`: --text/--input, formats, --add-special, and clear errors on bad input, on
# models/kvbench-demo's tokenizer (expected ids looked up in its tokenizer.json vocabulary, split as its
# README says). With ../shared also: stories260K's llama2.c reference (reference/greedy.json),
# tokenizers/qwen3/SOURCE.md, and "Once" -> [12522] as HF tokenizers encodes it.
set -euo pipefail
source "$(dirname "$0")/common.bash"
demo_model

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

# The demo's split (models/kvbench-demo/README.md): " 17 is " before a code is one token, a code two digit
# pairs; <s> = 0. Ids from tokenizer.json's vocabulary, not from kvbench.
ids=$(/usr/bin/python3 -c "
import json, sys
vocab = json.load(open(sys.argv[1]))['model']['vocab']
print(','.join(str(vocab[t]) for t in ['The', 'Ġcode', 'Ġfor', 'Ġlocker', 'Ġ17ĠisĠ', '48', '21', '.']))" "$model/tokenizer.json")
expect_output "demo: text with BOS" "[0,$ids]" \
  "$KVBENCH" tokenize --model "$model" --text "The code for locker 17 is 4821." --add-special
expect_output "demo: text format, no specials" "${ids//,/ }" \
  "$KVBENCH" tokenize --model "$model" --text "The code for locker 17 is 4821." --format text
printf '%s\n' '"The code for locker 17 is 4821."' '"The"' > "$work/demo.jsonl"
expect_output "demo: jsonl, one line per input line" "[$ids]"$'\n'"[${ids%%,*}]" \
  "$KVBENCH" tokenize --model "$model" --input "$work/demo.jsonl"

# References in ../shared: stories260K's llama2.c ids and Qwen3's (left out without them).
shared=${KVBENCH_SHARED:-}
if shared_stories260K && [[ -d "$shared/tokenizers/qwen3" ]]; then
  expect_output "text with BOS" "[1,403,407,261,378]" \
    "$KVBENCH" tokenize --model "$stories" --text "Once upon a time" --add-special
  expect_output "text format, no specials" "403 407 261 378" \
    "$KVBENCH" tokenize --model "$stories" --text "Once upon a time" --format text

  printf '%s\n' '"Hello, my dog is cute. 你好世界 12345"' '"Once"' > "$work/in.jsonl"
  expect_output "jsonl, one line per input line" \
    $'[9707,11,847,5562,374,18838,13,220,108386,99489,220,16,17,18,19,20]\n[12522]' \
    "$KVBENCH" tokenize --model "$shared/tokenizers/qwen3" --input "$work/in.jsonl"
else
  echo "note: no models/stories260K and tokenizers/qwen3 under KVBENCH_SHARED='$shared': their reference ids left out"
fi

printf '%s\n' '"fine"' '{"text": 1}' > "$work/bad.jsonl"
expect_error "non-string line" "bad.jsonl:2" "$KVBENCH" tokenize --model "$model" --input "$work/bad.jsonl"
mkdir "$work/empty"
expect_error "missing tokenizer.json" "empty/tokenizer.json" "$KVBENCH" tokenize --model "$work/empty" --text hi
mkdir "$work/truncated"
head -c 3000 "$model/tokenizer.json" > "$work/truncated/tokenizer.json"
expect_error "truncated tokenizer.json" "truncated/tokenizer.json: malformed JSON" \
  "$KVBENCH" tokenize --model "$work/truncated" --text hi
expect_error "neither --text nor --input" "--text or --input" "$KVBENCH" tokenize --model "$model"
echo "ok"
