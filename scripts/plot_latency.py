#!/usr/bin/python3
"""Refresh latency vs cache size n (the paper's Table 1 as a curve): mean scoring time per refresh,
by policy, for every n seen in the files' refresh traces. Needs python3-matplotlib and python3-h5py.
Example: scripts/plot_latency.py results/demo/*.h5 --out results/demo/latency.png
"""
import json
from collections import defaultdict

import h5py
import numpy as np

from plot_common import argument_parser, plt, save


def main():
    parser = argument_parser(__doc__)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    times = defaultdict(lambda: defaultdict(list))  # policy → n → scoring ms
    for path in args.files:
        with h5py.File(path, "r") as f:
            policy = json.loads(f.attrs["config"])["policy"]
            for n, ms in zip(f["refreshes/size_before"][:], f["refreshes/scoring_ms"][:]):
                times[policy][int(n)].append(float(ms))
    fig, ax = plt.subplots(figsize=(6, 4))
    for policy, by_n in sorted(times.items()):
        ns = sorted(by_n)
        ax.plot(ns, [np.mean(by_n[n]) for n in ns], marker="o", label=policy)
    ax.set_xlabel("cache size n at the refresh")
    ax.set_ylabel("scoring time per refresh (ms)")
    ax.legend()
    save(fig, args.out)


if __name__ == "__main__":
    main()
