#!/usr/bin/env bash
# No include runs up the layering the README states (scripts/include_edges.py reads it from there); and the
# check itself fails on a tree with one upward include.
set -uo pipefail
source "$(dirname "$0")/common.bash"
source_dir="${KVBENCH_SOURCE:-$here/../..}"
/usr/bin/python3 "$source_dir/scripts/include_edges.py" "$source_dir" > "$work/edges" ||
  { cat "$work/edges"; fail "an include runs up the layering (UP lines above)"; }
mkdir -p "$work/tree/harness/model" "$work/tree/harness/cache"
grep "^Layering, lowest first:" "$source_dir/README.md" > "$work/tree/README.md"
echo '#include "model/model.h"' > "$work/tree/harness/cache/kv_cache.h"
echo '#include "cache/kv_cache.h"' > "$work/tree/harness/model/model.h"
if /usr/bin/python3 "$source_dir/scripts/include_edges.py" "$work/tree" > "$work/fake"; then
  cat "$work/fake"; fail "an upward include (cache -> model) passed the check"
fi
grep -q "^UP cache -> model" "$work/fake" || { cat "$work/fake"; fail "the upward edge is not named"; }
echo "layering: no upward include"
