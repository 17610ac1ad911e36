#!/usr/bin/python3
"""Needle in a haystack as the picture long-context papers show: one heatmap per results file of the niah task
(one panel per policy at its budget), needle depth (rows, % of the haystack) × length (columns, tokens),
colour = mean score, or with --metric key_retention the share of the needle's tokens still cached when generation
began (what the policy kept, apart from whether the model then used it). Needs python3-matplotlib and python3-h5py.
Example: kvbench run --model M --task niah --data niah:lengths=1024+2048+4096,depths=0+25+50+75+100 \\
             --policy snapkv --J 512 --out results/niah/snapkv.h5   (one file per policy)
         scripts/plot_niah.py results/niah/*.h5 --out results/niah/niah.png
"""
import json

import h5py
import numpy as np

from plot_common import argument_parser, plt, save


def grid(path, metric):
    """(title, depths, lengths, mean `metric` per depth × length) of one niah results file."""
    with h5py.File(path, "r") as f:
        config = json.loads(f["/"].attrs["config"])
        if config["task"] != "niah":
            raise SystemExit(f"{path}: task {config['task']}, not niah")
        cells = {}
        for gold, score in zip(f["rows/gold"].asstr()[:], f[f"rows/{metric}"][:]):
            g = json.loads(gold)
            cells.setdefault((g["depth"], g["max_length"]), []).append(score)
    depths = sorted({d for d, _ in cells})
    lengths = sorted({n for _, n in cells})
    scores = np.full((len(depths), len(lengths)), np.nan)
    for (d, n), values in cells.items():
        scores[depths.index(d), lengths.index(n)] = np.mean(values)
    budget = f"ratio {config['ratio']}" if config.get("ratio") else f"J={config['J']}"
    title = config["policy"] if config["policy"] == "full" else f"{config['policy']}, {budget}"
    return title, depths, lengths, scores


def main():
    parser = argument_parser(__doc__)
    parser.add_argument("files", nargs="+", help="results files of the niah task, one panel each")
    parser.add_argument("--metric", choices=["score", "key_retention"], default="score")
    args = parser.parse_args()
    panels = [grid(path, args.metric) for path in args.files]
    fig, axes = plt.subplots(1, len(panels) + 1, figsize=(3.2 * len(panels) + 1, 3.6), squeeze=False,
                             gridspec_kw={"width_ratios": [1] * len(panels) + [0.06]})
    for ax, (title, depths, lengths, scores) in zip(axes[0][:-1], panels):
        shown = ax.imshow(scores, vmin=0, vmax=1, cmap="RdYlGn", aspect="auto", interpolation="nearest")
        ax.set_xticks(range(len(lengths)), [str(n) for n in lengths])
        ax.set_yticks(range(len(depths)), [f"{d:g}" for d in depths])
        ax.set_xlabel("length (tokens)")
        ax.set_title(title)
        for (i, j), value in np.ndenumerate(scores):
            if not np.isnan(value):
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=8)
    axes[0][0].set_ylabel("needle depth (% of the haystack)")
    fig.colorbar(shown, cax=axes[0][-1], label={"score": "score", "key_retention": "needle kept"}[args.metric])
    save(fig, args.out)


if __name__ == "__main__":
    main()
