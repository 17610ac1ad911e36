#!/usr/bin/python3
"""Compare the non-timing content of kvbench results files (or of two directories of them, file by file).

Usage: compare_results.py A B   — exits 1 and names the first difference. Timing fields (wall_seconds,
scoring_ms, compaction_ms) and provenance that differs between runs (start/end time, host, the batch size: results
must not depend on it, the thread count: the content compared tells whether it mattered) are skipped.
"""
import json
import os
import sys

import h5py
import numpy as np

TIMING = {"rows/wall_seconds", "refreshes/scoring_ms", "refreshes/compaction_ms"}
VOLATILE_ATTRS = {"start_time", "end_time", "host", "batch", "threads"}


def nan_marked(value):
    """NaN (a value that was not measured, e.g. shadow_lost_mass without a shadow) never equals itself:
    mark it so that two files missing the same values compare equal; every other value compares as it is."""
    if isinstance(value, list):
        return [nan_marked(x) for x in value]
    if isinstance(value, (float, np.floating)) and np.isnan(value):
        return "NaN"
    return value


def values(dataset):
    data = dataset[()]
    if h5py.check_vlen_dtype(dataset.dtype) not in (None, str, bytes):
        return nan_marked([list(x) for x in data])
    if h5py.check_string_dtype(dataset.dtype):
        return [x.decode() if isinstance(x, bytes) else x for x in data]
    return nan_marked(data.tolist())


def attrs(obj):
    return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in obj.attrs.items() if k not in VOLATILE_ATTRS}


def compare_files(a, b):
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        ra, rb = attrs(fa), attrs(fb)
        ra["config"], rb["config"] = json.loads(ra["config"]), json.loads(rb["config"])
        if ra != rb:
            return f"root attributes differ: {ra} vs {rb}"
        if attrs(fa["summary"]) != attrs(fb["summary"]):
            return f"summary differs: {attrs(fa['summary'])} vs {attrs(fb['summary'])}"
        for group in ("rows", "refreshes"):
            if set(fa[group]) != set(fb[group]):
                return f"{group}: datasets differ: {sorted(fa[group])} vs {sorted(fb[group])}"
            for name in fa[group]:
                path = f"{group}/{name}"
                if path in TIMING:
                    if len(fa[path]) != len(fb[path]):
                        return f"{path}: lengths differ"
                    continue
                if values(fa[path]) != values(fb[path]):
                    return f"{path} differs"
    return None


def main(a, b):
    if os.path.isdir(a):
        names_a = sorted(n for n in os.listdir(a) if n.endswith(".h5"))
        names_b = sorted(n for n in os.listdir(b) if n.endswith(".h5"))
        if names_a != names_b:
            return f"file lists differ: {names_a} vs {names_b}"
        for name in names_a:
            problem = compare_files(os.path.join(a, name), os.path.join(b, name))
            if problem:
                return f"{name}: {problem}"
        return None
    return compare_files(a, b)


if __name__ == "__main__":
    problem = main(sys.argv[1], sys.argv[2])
    if problem:
        print("DIFFERENT:", problem)
        sys.exit(1)
    print("same non-timing content:", sys.argv[1], sys.argv[2])
