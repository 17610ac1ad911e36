#!/usr/bin/env bash
# `kvbench datasets fetch|list` against file:// mirrors of ../shared/datasets (no network here): the
# fetched bytes equal the mirror's and their sha256 (sha256sum, not kvbench) is the one datasets/README.md
# lists; a corrupted mirror gives a checksum-mismatch error and leaves nothing behind; a run then reads
# the fetched root through $KVBENCH_DATA. A dataset without a published checksum is fetched unverified, its
# sha256 printed and recorded beside it, and a later change to it shows as a mismatch.
set -euo pipefail
source "$(dirname "$0")/common.bash"
demo_model
readme="${KVBENCH_SOURCE:-$here/../..}/datasets/README.md"

# Without ../shared: bad names and mirrors, and a missing model, are refused with the reason.
expect_error "download failed" kvbench datasets fetch aime24 --mirror "file://$work/nowhere" --root "$work/root3"
expect_error "aime25: no single file to download" kvbench datasets fetch aime25 --root "$work/root3"
expect_error "unknown dataset \"nosuch\"" kvbench datasets fetch nosuch --root "$work/root3"
expect_error "model $work/nomodel does not exist" kvbench run --model "$work/nomodel" --task math500
grep -q "huggingface-cli download" "$work/err" || fail "no download hint for a missing model"

# HMMT Nov 2025 has no published checksum: fetched from a mirror as it comes, the digest it saw recorded.
mkdir -p "$work/mirror/hmmt_nov_2025"
printf '{"problem_idx": 1, "problem": "Compute $1+1$.", "answer": "2"}\n' > "$work/mirror/hmmt_nov_2025/test.jsonl"
sum=$(sha256sum "$work/mirror/hmmt_nov_2025/test.jsonl" | cut -d' ' -f1)
expect_error "hmmt_nov_2025: no single file to download" kvbench datasets fetch hmmt-nov-2025 --root "$work/root4"
kvbench datasets fetch hmmt-nov-2025 --mirror "file://$work/mirror" --root "$work/root4" > "$work/nov.log"
grep -q "^hmmt_nov_2025: no published checksum; sha256 $sum recorded in $work/root4/hmmt_nov_2025/test.jsonl.sha256$" \
  "$work/nov.log" || { cat "$work/nov.log"; fail "hmmt_nov_2025: the digest seen is not printed and recorded"; }
(cd "$work/root4/hmmt_nov_2025" && sha256sum --quiet -c test.jsonl.sha256) || fail "recorded digest: not sha256sum's format"
kvbench datasets list --root "$work/root4" | grep -Eq "^  hmmt_nov_2025 +present \(no published checksum\)" \
  || fail "list: unverified hmmt_nov_2025"
KVBENCH_DATA="$work/root4" kvbench run --model "$model" --task hmmt-nov-2025 --policy full --limit 1 --max-new 2 --quiet \
  --out "$work/nov.h5" > /dev/null 2> "$work/nov.err" || { cat "$work/nov.err"; fail "run on the fetched hmmt-nov-2025"; }
echo >> "$work/root4/hmmt_nov_2025/test.jsonl"
kvbench datasets list --root "$work/root4" | grep -Eq "^  hmmt_nov_2025 +CHECKSUM MISMATCH" \
  || fail "list: a changed unverified file"

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
