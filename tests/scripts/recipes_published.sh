#!/usr/bin/env bash
# Every published cell of the recipes against the table of recipes_published.py, written by hand from the
# paper notes (each cell cites its line of ../shared/papers, or of ../shared/DESIGN.md where the notes omit it);
# with ../shared, each cited line must hold the number and name the cell's row and column.
set -euo pipefail
source "$(dirname "$0")/common.bash"
papers=${KVBENCH_SHARED:-}/papers
[[ -d "$papers" ]] || papers=""
/usr/bin/python3 "$here/recipes_published.py" "${KVBENCH_SOURCE:-$here/../..}/recipes" $papers
