#!/usr/bin/env bash
# Prints how kvbench agrees with the tools researchers trust, run live in the peers' environment
# (.venv from scripts/setup.sh, or KVBENCH_PYTHON): the math graders against math-verify, the tokenizers
# against HF tokenizers (Qwen3, Llama 3, SmolLM2, and the tokenizer.json forms tokenizers writes itself), the chat templates against transformers' apply_chat_template, and the model's
# forward, greedy generation and compacted caches against transformers (kvbench_core_tests). The Qwen3 and
# Llama 3 tokenizers and the dataset golds come from ../shared (KVBENCH_SHARED); without it the graders
# compare on their built-in golds and the Qwen3 and Llama 3 tokenizer rows are skipped.
#
#   scripts/compare_peers.sh [BUILD_DIR]     (default: build; needs kvbench_text_tests built there)
#
# Each row comes from the test that checks it (tests/text/test_grader_reference.cpp,
# tests/text/test_tokenizer_reference.cpp, tests/text/test_tokenizer_forms.cpp, tests/core/test_hf_reference.cpp,
# tests/core/test_kvpress_reference.cpp); the exit status is non-zero when any of them fails.
set -uo pipefail
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${1:-$source_dir/build}"
tests="$build_dir/kvbench_text_tests"
[[ -x "$tests" ]] || { echo "compare_peers: $tests not built (cmake --build $build_dir)" >&2; exit 2; }
export KVBENCH_PYTHON="${KVBENCH_PYTHON:-$source_dir/.venv/bin/python}"

status=0
echo "| comparison | cases | agreement |"
echo "|---|---|---|"
for filter in "Math graders agree with math-verify*" "[tokenizer][reference]" "[tokenizer][chat]"; do
  output="$("$tests" "$filter" 2>&1)" || status=1
  grep '^| ' <<<"$output"
  grep -E '^  [0-9]+  ' <<<"$output" | sed 's/  e\.g\..*//'   # the grader's disagreement classes
  grep -E 'skipped:' <<<"$output" | sed 's/^ *//'
done
# The forward, greedy generation and compacted caches against transformers, and eviction against
# kvpress's presses (tables of their own).
core_tests="$build_dir/kvbench_core_tests"
if [[ -x "$core_tests" ]]; then
  for filter in "[model][peers]" "[policy][peers]"; do
    output="$("$core_tests" "$filter" 2>&1)" || status=1
    grep '^| ' <<<"$output"
    grep -E 'skipped:' <<<"$output" | sed 's/^ *//'
  done
else
  echo "compare_peers: $core_tests not built: forward comparison with transformers skipped" >&2
fi
[[ $status -eq 0 ]] || echo "compare_peers: a comparison failed; run the test above for the details" >&2
exit $status
