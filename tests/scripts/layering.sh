#!/usr/bin/env bash
# No include runs up the layering the README states (scripts/include_edges.py reads it from there), and the
# front doors (cli/, python/) include the façade (api/) and common/ alone; the check itself fails on a tree
# with one upward include, and on one with a command that goes around the façade.
set -uo pipefail
source "$(dirname "$0")/common.bash"
source_dir="${KVBENCH_SOURCE:-$here/../..}"
/usr/bin/python3 "$source_dir/scripts/include_edges.py" "$source_dir" > "$work/edges" ||
  { cat "$work/edges"; fail "an include runs up the layering or around the façade (UP / DOOR lines above)"; }
mkdir -p "$work/tree/harness/model" "$work/tree/harness/cache"
grep "^Layering, lowest first:" "$source_dir/README.md" > "$work/tree/README.md"
echo '#include "model/model.h"' > "$work/tree/harness/cache/kv_cache.h"
echo '#include "cache/kv_cache.h"' > "$work/tree/harness/model/model.h"
if /usr/bin/python3 "$source_dir/scripts/include_edges.py" "$work/tree" > "$work/fake"; then
  cat "$work/fake"; fail "an upward include (cache -> model) passed the check"
fi
grep -q "^UP cache -> model" "$work/fake" || { cat "$work/fake"; fail "the upward edge is not named"; }
rm "$work/tree/harness/model/model.h"
mkdir -p "$work/tree/harness/cli" "$work/tree/python"
echo '#include "cache/kv_cache.h"' > "$work/tree/harness/cli/cmd_x.cpp"
if /usr/bin/python3 "$source_dir/scripts/include_edges.py" "$work/tree" > "$work/fake"; then
  cat "$work/fake"; fail "a command including cache/ directly passed the check"
fi
grep -q "^DOOR cli -> cache" "$work/fake" || { cat "$work/fake"; fail "the edge around the façade is not named"; }
rm "$work/tree/harness/cli/cmd_x.cpp"
echo '#include "cache/kv_cache.h"' > "$work/tree/python/module.cpp"
/usr/bin/python3 "$source_dir/scripts/include_edges.py" "$work/tree" > "$work/fake" &&
  { cat "$work/fake"; fail "the Python module including cache/ directly passed the check"; }
echo "layering: no upward include; cli/ and python/ go through api/"
