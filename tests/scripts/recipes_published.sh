#!/usr/bin/env bash
# Every published cell of the recipes against the table of recipes_published.py, written by hand from the
# paper notes (each cell cites its line of ../shared/papers); with ../shared, the cited lines are checked too.
set -euo pipefail
source "$(dirname "$0")/common.bash"
papers=${KVBENCH_SHARED:-}/papers
[[ -d "$papers" ]] || papers=""
/usr/bin/python3 "$here/recipes_published.py" "${KVBENCH_SOURCE:-$here/../..}/recipes" $papers
