#!/usr/bin/python3
"""The include edges between kvbench's top-level folders, and those that run back up the layering.

Folders: harness/<part> is <part>; policies, tasks and python are themselves. The layering is the README's
line "Layering, lowest first: `a < b < ...`": a file may include its own folder and any folder below it. The
front doors (FRONT_DOORS, the README's "Front doors") include the façade alone: only the folders listed for
them. An edge upward or through a front door's wall is printed with its files.
Usage: scripts/include_edges.py [REPO]    (exit status 1 on such an edge)
"""
import pathlib
import re
import sys
from collections import defaultdict

INCLUDE = re.compile(r'#include "([a-z_]+)/[^"]+"(.*)')
README_LAYERS = re.compile(r"^Layering, lowest first: `([a-z_ <]+)`")
# What each front door may include besides itself: the façade, common/, and for the Python module the command
# line it runs in-process (`python -m kvbench`).
FRONT_DOORS = {"cli": {"api", "common"}, "python": {"api", "common", "cli"}}


def readme_layers(root):
    for line in (root / "README.md").read_text().splitlines():
        match = README_LAYERS.match(line)
        if match:
            return [name.strip() for name in match.group(1).split("<")]
    sys.exit(f"{root / 'README.md'}: no line \"Layering, lowest first: `a < b < ...`\"")


def folder_of(path, root):
    parts = path.relative_to(root).parts
    return parts[1] if parts[0] == "harness" else parts[0]


def main(root):
    LAYERS = readme_layers(root)
    edges = defaultdict(list)  # (from, to) -> [(file, reason)]
    for path in sorted(list((root / "harness").rglob("*.[ch]*")) + list((root / "policies").rglob("*.[ch]*")) +
                       list((root / "tasks").rglob("*.[ch]*")) + list((root / "python").glob("*.[ch]*"))):
        source = folder_of(path, root)
        if source not in LAYERS and source not in FRONT_DOORS:
            continue
        for line in path.read_text(errors="replace").splitlines():
            match = INCLUDE.match(line.strip())
            if match and match.group(1) in LAYERS and match.group(1) != source:
                edges[(source, match.group(1))].append((path.relative_to(root), match.group(2).strip()))
    print("layering, lowest first:", " < ".join(LAYERS))
    rank = {name: i for i, name in enumerate(LAYERS + ["python"])}
    upward_edges = 0
    for (source, target), files in sorted(edges.items(), key=lambda e: (rank[e[0][0]], rank[e[0][1]])):
        upward = source in LAYERS and rank[target] > rank[source]
        walled = source in FRONT_DOORS and target not in FRONT_DOORS[source]
        print(f"{'UP ' if upward else 'DOOR ' if walled else '   '}{source} -> {target} ({len(files)})")
        if upward or walled:
            upward_edges += 1
            for file, comment in files:
                print(f"       {file}  {comment}")
    return 1 if upward_edges else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)))
