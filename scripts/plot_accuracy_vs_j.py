#!/usr/bin/python3
"""Accuracy vs cache budget J (the paper's Figures 2/5), or vs compression ratio, from kvbench results files.

One line per (model, task, policy): the pass@1 score pooled over seeds, with a 95% bootstrap CI over
(seed, sample) units. Jobs budgeted by compression ratio (`--J ratio:R`, kvpress's convention) are drawn
against the ratio instead of J; the full cache, which has no budget, is a dashed line across.
Needs Debian's python3-matplotlib and python3-h5py.
Example: scripts/plot_accuracy_vs_j.py results/demo/*.h5 --out results/demo/accuracy_vs_j.png
"""
import json
from collections import defaultdict

import h5py
import numpy as np

from plot_common import argument_parser, plt, save


def unit_scores(path):
    """(seed, sample id) → mean score over the sample's rollouts, and the job config."""
    with h5py.File(path, "r") as f:
        config = json.loads(f.attrs["config"])
        ids = f["rows/sample_id"].asstr()[:]
        scores = f["rows/score"][:]
    units = defaultdict(list)
    for sample, score in zip(ids, scores):
        units[(config["seed"], sample)].append(score)
    return config, {k: float(np.mean(v)) for k, v in units.items()}


def bootstrap_ci(values, seed=0, resamples=2000):
    rng = np.random.default_rng(seed)
    means = rng.choice(values, size=(resamples, len(values)), replace=True).mean(axis=1)
    return np.percentile(means, [2.5, 97.5])


def main():
    parser = argument_parser(__doc__)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    curves = defaultdict(lambda: defaultdict(dict))  # (model, task) → policy → budget → units
    full = defaultdict(dict)  # (model, task) → units of the full cache
    by_ratio = False
    for path in args.files:
        config, units = unit_scores(path)
        key = (config["model"].rstrip("/").split("/")[-1], config["task"])
        if config["policy"] == "full":
            full[key].update(units)
            continue
        by_ratio = by_ratio or config.get("ratio", 0) > 0
        budget = config["ratio"] if config.get("ratio", 0) > 0 else config["J"]
        curves[key][config["policy"]].setdefault(budget, {}).update(units)
    fig, axes = plt.subplots(1, len(curves), figsize=(5 * len(curves), 4), squeeze=False)
    for ax, ((model, task), policies) in zip(axes[0], sorted(curves.items())):
        for policy, by_j in sorted(policies.items()):
            Js = sorted(by_j)
            means = [np.mean(list(by_j[J].values())) for J in Js]
            cis = np.array([bootstrap_ci(np.array(list(by_j[J].values()))) for J in Js])
            ax.errorbar(Js, means, yerr=[np.subtract(means, cis[:, 0]), np.subtract(cis[:, 1], means)], marker="o",
                        capsize=3, label=policy)
        if full[(model, task)]:
            ax.axhline(np.mean(list(full[(model, task)].values())), color="black", linestyle="--", label="full")
        if by_ratio:
            ax.set_xlabel("compression ratio (share of the prompt's cache evicted)")
        else:
            ax.set_xscale("log", base=2)
            ax.set_xlabel("cache budget J")
        ax.set_ylabel("score (pass@1)")
        ax.set_title(f"{model} on {task}")
        ax.set_ylim(-0.05, 1.05)
        ax.legend()
    save(fig, args.out)


if __name__ == "__main__":
    main()
