#!/usr/bin/env bash
# `kvbench datasets fetch|list` against file:// mirrors of ../shared/datasets (no network here): the
# fetched bytes equal the mirror's and their sha256 (sha256sum, not kvbench) is the one datasets/README.md
# lists; a corrupted mirror gives a checksum-mismatch error and leaves nothing behind; a run then reads
# the fetched root through $KVBENCH_DATA.
set -euo pipefail
source "$(dirname "$0")/common.bash"
demo_model
readme="${KVBENCH_SOURCE:-$here/../..}/datasets/README.md"

# Without ../shared: bad names and mirrors, and a missing model, are refused with the reason.
expect_error "download failed" kvbench datasets fetch aime24 --mirror "file://$work/nowhere" --root "$work/root3"
expect_error "aime25: no single file to download" kvbench datasets fetch aime25 --root "$work/root3"
expect_error "unknown dataset \"nosuch\"" kvbench datasets fetch nosuch --root "$work/root3"
expect_error "model directory $work/nomodel does not exist" kvbench run --model "$work/nomodel" --task math500
grep -q "huggingface-cli download" "$work/err" || fail "no download hint for a missing model"

# The rest fetches from ../shared/datasets, whose bytes datasets/README.md's checksums name: skipped without it.
shared=${KVBENCH_SHARED:-}
[[ -f "$shared/datasets/math500/test.jsonl" && -f "$shared/datasets/locomo/locomo10.json" ]] \
  || skip "$shared/datasets not found (set KVBENCH_SHARED); the checks without it passed"

kvbench datasets fetch math500 locomo --mirror "file://$shared/datasets" --root "$work/root" > "$work/fetch.log"
for f in math500/test.jsonl locomo/locomo10.json; do
  cmp -s "$shared/datasets/$f" "$work/root/$f" || fail "$f: fetched bytes differ from the mirror's"
  sum=$(sha256sum "$work/root/$f" | cut -d' ' -f1)
  grep -q "\`$f\` .*\`$sum\`" "$readme" || fail "$f: sha256 $sum is not the one datasets/README.md lists"
done
kvbench datasets list --root "$work/root" > "$work/list"
grep -Eq "^  math500 +verified" "$work/list" || { cat "$work/list"; fail "list: math500 verified"; }
grep -Eq "^  aime24 +missing" "$work/list" || { cat "$work/list"; fail "list: aime24 missing"; }
kvbench datasets fetch math500 --mirror "file://$shared/datasets" --root "$work/root" | grep -q "already present and verified" \
  || fail "a verified dataset is fetched again"

# A corrupted mirror: one byte appended. Clear error, nothing at the destination, no leftovers.
mkdir -p "$work/bad/math500"
cp "$shared/datasets/math500/test.jsonl" "$work/bad/math500/test.jsonl" && echo >> "$work/bad/math500/test.jsonl"
expect_error "file://$work/bad/math500/test.jsonl: checksum mismatch" \
  kvbench datasets fetch math500 --mirror "file://$work/bad" --root "$work/root2"
[[ -z "$(ls -A "$work/root2/math500")" ]] || fail "a corrupted download left files: $(ls "$work/root2/math500")"
# Corrupting a fetched file is caught by list.
echo >> "$work/root/locomo/locomo10.json"
kvbench datasets list --root "$work/root" | grep -Eq "^  locomo +CHECKSUM MISMATCH" || fail "list: corrupted file"

# Runs read $KVBENCH_DATA.
KVBENCH_DATA="$work/root" kvbench run --model "$model" --task math500 --policy full --limit 1 --max-new 2 --quiet \
  --out "$work/run.h5" > /dev/null 2> "$work/run.err" || { cat "$work/run.err"; fail "run with KVBENCH_DATA"; }
echo "ok"
