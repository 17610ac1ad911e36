#!/usr/bin/env bash
# `kvbench duo-patterns` against kvpress's own on-the-fly DuoAttention scores (duo_attention_on_the_fly,
# tests/peers/reference_duo_patterns.py) on SmolLM2-135M-Instruct and three English texts (paragraphs of this
# README) in place of kvpress's BookSum chapters: every (layer, KV head) score within 1e-5 (kvpress sums the texts
# in its own sampled order, and kvbench reads queries and keys back from before RoPE), the streaming heads of
# --allocator duo:patterns=DIR,heads=R the same set at R = 0.25, 0.5, 0.75, and the patterns usable as written.
set -uo pipefail
source "$(dirname "$0")/common.bash"
source_dir=${KVBENCH_SOURCE:-$here/../..}
peer_python=${KVBENCH_PYTHON:-$source_dir/.venv/bin/python}
gguf=${KVBENCH_MODELS:-$HOME/.cache/kvbench/models}/smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf
[[ -x "$peer_python" ]] || skip "no peer environment at $peer_python (run scripts/setup.sh)"
[[ -f "$gguf" ]] || skip "$gguf not found (run scripts/setup.sh or \`kvbench models fetch\`)"
"$peer_python" -c "import kvpress, gguf" 2>/dev/null || skip "$peer_python has no kvpress or gguf"

# Three paragraphs of prose, as JSON lines.
/usr/bin/python3 - "$source_dir/README.md" > "$work/texts.jsonl" <<'PY' || fail "texts"
import json, sys
paragraphs = [p.replace("\n", " ") for p in open(sys.argv[1]).read().split("\n\n")
              if len(p) > 400 and p[0].isalpha() and "|" not in p and "```" not in p]
for text in paragraphs[:3]:
    print(json.dumps({"text": text}))
PY
(($(wc -l < "$work/texts.jsonl") == 3)) || fail "README.md has fewer than three prose paragraphs"

kvbench duo-patterns --model "$gguf" --data "$work/texts.jsonl" --length 200 --out "$work/patterns" > /dev/null ||
  fail "kvbench duo-patterns"
HF_HUB_DISABLE_PROGRESS_BARS=1 TRANSFORMERS_VERBOSITY=error "$peer_python" \
  "$source_dir/tests/peers/reference_duo_patterns.py" "$gguf" "$work/texts.jsonl" 200 "$work/peer.tsv" \
  > "$work/peer.log" 2>&1 || { tail -20 "$work/peer.log"; fail "kvpress's duo_attention_on_the_fly"; }

/usr/bin/python3 - "$work/patterns" "$work/peer.tsv" <<'PY' || fail "kvbench's patterns differ from kvpress's"
import json, sys
import numpy
ours = numpy.loadtxt(f"{sys.argv[1]}/full_attention_heads.tsv", delimiter="\t", ndmin=2)
theirs = numpy.loadtxt(sys.argv[2], delimiter="\t", ndmin=2)
assert ours.shape == theirs.shape == (30, 3), (ours.shape, theirs.shape)
assert json.load(open(f"{sys.argv[1]}/config.json")) == {"sink_size": 128, "recent_size": 256}
gap = numpy.abs(ours - theirs).max()
print(f"scores: max difference {gap:.2e} over {ours.size} heads, range {theirs.min():.4f}..{theirs.max():.4f}")
assert gap <= 1e-5, f"max difference {gap}"
for share in (0.25, 0.5, 0.75):  # DuoAttentionPress's streaming heads: the round(n·share) lowest scores
    n = round(theirs.size * share)
    assert set(numpy.argsort(ours, axis=None, kind="stable")[:n]) == set(numpy.argsort(theirs, axis=None, kind="stable")[:n]), share
PY

kvbench generate --model "$gguf" --prompt "Once upon a time there was a cache" --policy streaming --sinks 128 --J 384 \
  --allocator "duo:patterns=$work/patterns,heads=0.5" --max-new 4 > /dev/null || fail "generate with the patterns"
echo "ok"
