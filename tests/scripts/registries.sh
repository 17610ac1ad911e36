#!/usr/bin/env bash
# What the docs say of the registries is what the binary holds. The README's policy and allocator tables are
# rows of `kvbench list policies|allocators --markdown` without its knobs column: each README row must be a row
# of the listing, word for word (a stale summary fails), while a newly registered one, or a new knob, needs no
# README edit — the listing is the complete table. The profile table is exactly `kvbench list profiles --markdown`. On a
# mismatch the current listing is printed, to paste in.
set -uo pipefail
source "$(dirname "$0")/common.bash"
readme="${KVBENCH_SOURCE:-$here/../..}/README.md"

readme_table() {  # readme_table REGISTRY: the README's table after its marker, without the marker lines
  local marker="<!-- kvbench list $1 --markdown -->"
  sed -n "\|$marker|,\|<!-- end -->|p" "$readme" | sed '1d;$d' > "$work/readme_table"
  [[ -s "$work/readme_table" ]] || fail "README.md has no table between \"$marker\" and \"<!-- end -->\""
}

for registry in policies allocators profiles; do
  kvbench list "$registry" --markdown > "$work/table" || fail "kvbench list $registry --markdown"
  readme_table "$registry"
  if [[ $registry == profiles ]]; then
    diff "$work/readme_table" "$work/table" > /dev/null || { cat "$work/table"; fail "README.md's $registry table is stale"; }
    continue
  fi
  /usr/bin/python3 - "$work/readme_table" "$work/table" <<'PY' || { cat "$work/table"; fail "README.md's $registry table is stale"; }
import re, sys
def cells(row):  # a markdown row's cells ("\|" inside a cell is text)
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row.strip())[1:-1]]
readme, listing = ([cells(row) for row in open(path) if row.strip()] for path in sys.argv[1:])
width = len(readme[0])  # the README may leave out the listing's last columns (knobs)
assert readme[0] == listing[0][:width], f"header {readme[0]} is not the listing's {listing[0][:width]}"
rows = {tuple(row[:width]) for row in listing[2:]}
for row in readme[2:]:
    assert tuple(row) in rows, f"README row not in the listing: {row}"
PY
done
[[ $(kvbench list allocators | head -1) == uniform ]] || fail "the default allocator (uniform) is not listed first"
kvbench list policies | grep -qx counter-causal || fail "kvbench list policies lacks counter-causal"
# Every registered policy has a summary and its listed knobs are what a policy made from its name holds.
kvbench list policies --json > "$work/policies.json" || fail "kvbench list policies --json"
/usr/bin/python3 - "$work/policies.json" <<'PY' || fail "kvbench list policies --json"
import json, sys
policies = json.load(open(sys.argv[1]))
assert len(policies) >= 17, len(policies)
for policy in policies:
    assert policy["summary"].strip(), f"{policy['name']} has no summary"
    assert policy["scores"] in ("none", "per token", "per KV head"), policy
knobs = {p["name"]: p["knobs"] for p in policies}
assert knobs["snapkv"] == {"window": 64, "kernel": 5}, knobs["snapkv"]
assert knobs["tova"] == {"layers": "last"}, knobs["tova"]
PY
echo "registries: all checks passed"
