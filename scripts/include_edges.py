#!/usr/bin/python3
"""The include edges between kvbench's top-level folders, and those that run back up the layering.

Folders: harness/<part> is <part>; policies and tasks are themselves. The layering is the README's line
"Layering, lowest first: `a < b < ...`": a file may include its own folder and any folder below it. An edge
upward is printed with its files. Usage: scripts/include_edges.py [REPO]    (exit status 1 on an upward edge)
"""
import pathlib
import re
import sys
from collections import defaultdict

INCLUDE = re.compile(r'#include "([a-z_]+)/[^"]+"(.*)')
README_LAYERS = re.compile(r"^Layering, lowest first: `([a-z_ <]+)`")


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
                       list((root / "tasks").rglob("*.[ch]*"))):
        source = folder_of(path, root)
        if source not in LAYERS:
            continue
        for line in path.read_text(errors="replace").splitlines():
            match = INCLUDE.match(line.strip())
            if match and match.group(1) in LAYERS and match.group(1) != source:
                edges[(source, match.group(1))].append((path.relative_to(root), match.group(2).strip()))
    print("layering, lowest first:", " < ".join(LAYERS))
    upward_edges = 0
    for (source, target), files in sorted(edges.items(), key=lambda e: (LAYERS.index(e[0][0]), LAYERS.index(e[0][1]))):
        upward = LAYERS.index(target) > LAYERS.index(source)
        print(f"{'UP ' if upward else '   '}{source} -> {target} ({len(files)})")
        if upward:
            upward_edges += 1
            for file, comment in files:
                print(f"       {file}  {comment}")
    return 1 if upward_edges else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)))
