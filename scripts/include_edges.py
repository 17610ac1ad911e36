#!/usr/bin/python3
"""The include edges between kvbench's top-level folders, and those that run back up the layering.

Folders: harness/<part> is <part>; policies and tasks are themselves. LAYERS lists them lowest first: a file
may include its own folder and any folder below it. An edge upward is printed with its files, and is
either to go or to carry a one-line reason on the include itself (a comment ending the line).
Usage: scripts/include_edges.py [REPO]    (exit status 1 when an upward edge has no reason)
"""
import pathlib
import re
import sys
from collections import defaultdict

LAYERS = ["common", "tokenizer", "tasks", "model", "cache", "policies", "engine", "train", "io", "run", "report",
          "api", "bench", "cli"]
INCLUDE = re.compile(r'#include "([a-z_]+)/[^"]+"(.*)')


def folder_of(path, root):
    parts = path.relative_to(root).parts
    return parts[1] if parts[0] == "harness" else parts[0]


def main(root):
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
    unexplained = 0
    for (source, target), files in sorted(edges.items(), key=lambda e: (LAYERS.index(e[0][0]), LAYERS.index(e[0][1]))):
        upward = LAYERS.index(target) > LAYERS.index(source)
        print(f"{'UP ' if upward else '   '}{source} -> {target} ({len(files)})")
        if upward:
            for file, reason in files:
                print(f"       {file}  {reason or '(no reason given)'}")
                unexplained += not reason
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)))
