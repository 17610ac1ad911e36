#!/usr/bin/python3
"""The demo's summary table (the README's), read from its results files alone with h5py: for each policy the
mean score on the needle grid at each compression ratio, the share of the needle's tokens still cached when
generation began (at the largest ratio), and the mean score on RULER's niah_multikey_1; the full cache first.

  scripts/demo_summary.py results/demo        (its niah/ and multikey/ results files)
Needs Debian's python3-h5py.
"""
import glob
import json
import sys

import h5py
import numpy as np


def jobs(directory):
    """(policy, ratio) → (mean score, mean key retention) of each results file in `directory`."""
    out = {}
    for path in sorted(glob.glob(f"{directory}/*.h5")):
        with h5py.File(path, "r") as f:
            config = json.loads(f.attrs["config"])
            out[(config["policy"], config.get("ratio", 0.0))] = (float(np.mean(f["rows/score"][:])),
                                                                 float(np.mean(f["rows/key_retention"][:])))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    needle, multikey = jobs(f"{sys.argv[1]}/niah"), jobs(f"{sys.argv[1]}/multikey")
    ratios = sorted({ratio for _, ratio in needle if ratio > 0})
    policies = ["full"] + sorted({policy for policy, _ in needle if policy != "full"})
    multikey_ratio = max(ratio for _, ratio in multikey)
    header = ([f"needle, ratio {r:g}" for r in ratios] + [f"needle kept at {ratios[-1]:g}"] +
              [f"niah_multikey_1, ratio {multikey_ratio:g}"])
    print("| policy | " + " | ".join(header) + " |")
    print("|---" * (len(header) + 1) + "|")
    for policy in policies:
        def at(results, ratio):
            return results.get(("full", 0.0) if policy == "full" else (policy, ratio))
        cells = [f"{at(needle, r)[0]:.2f}" for r in ratios] + [f"{at(needle, ratios[-1])[1]:.2f}"]
        cells.append(f"{at(multikey, multikey_ratio)[0]:.2f}" if at(multikey, multikey_ratio) else "–")
        print(f"| {policy} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
