#!/usr/bin/env bash
# What the docs say of the registries is what the binary holds: the README's allocator and profile tables are
# exactly `kvbench list allocators --markdown` and `kvbench list profiles --markdown` (on a mismatch the current
# table is printed, to paste in).
set -uo pipefail
source "$(dirname "$0")/common.bash"
readme="${KVBENCH_SOURCE:-$here/../..}/README.md"
for registry in allocators profiles; do
  marker="<!-- kvbench list $registry --markdown -->"
  kvbench list "$registry" --markdown > "$work/table" || fail "kvbench list $registry --markdown"
  sed -n "\|$marker|,\|<!-- end -->|p" "$readme" | sed '1d;$d' > "$work/readme_table"
  [[ -s "$work/readme_table" ]] || fail "README.md has no table between \"$marker\" and \"<!-- end -->\""
  diff "$work/readme_table" "$work/table" > /dev/null || { cat "$work/table"; fail "README.md's $registry table is stale"; }
done
[[ $(kvbench list allocators | head -1) == uniform ]] || fail "the default allocator (uniform) is not listed first"
kvbench list policies | grep -qx counter-causal || fail "kvbench list policies lacks counter-causal"
echo "registries: all checks passed"
