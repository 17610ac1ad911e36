#!/usr/bin/python3
"""The paper's Figure 4: what the cache holds after every refresh of one generation.

Rows = refresh cycles, columns = cache slots, colour = the original position (timestep) of the token in
that slot. For per-head policies pick the layer and KV head. Needs python3-matplotlib and python3-h5py.
Example: scripts/plot_retention.py results/demo/stories260K__rare-fact__counter-causal__J64__h16__s0__r1.h5 \\
             --row 0 --out results/demo/retention.png
"""
import json

import h5py
import numpy as np

from plot_common import argument_parser, plt, save


def main():
    parser = argument_parser(__doc__)
    parser.add_argument("file")
    parser.add_argument("--row", type=int, default=0, help="index into /rows (sample × rollout)")
    parser.add_argument("--layer", type=int, default=0)
    parser.add_argument("--head", type=int, default=0, help="KV head")
    args = parser.parse_args()
    with h5py.File(args.file, "r") as f:
        config = json.loads(f["/"].attrs["config"])
        rows = f["refreshes/row"][:]
        chosen = np.flatnonzero(rows == args.row)
        if chosen.size == 0:
            raise SystemExit(f"{args.file}: row {args.row} has no refreshes (policy {config['policy']})")
        layers, heads = f["refreshes/layers"][:], f["refreshes/kv_heads"][:]
        kept = [np.asarray(f["refreshes/kept_positions"][k]).reshape(layers[k], heads[k], -1)[
            min(args.layer, layers[k] - 1), min(args.head, heads[k] - 1)] for k in chosen]
        sample = f["rows/sample_id"].asstr()[args.row]
    width = max(len(k) for k in kept)
    image = np.full((len(kept), width), np.nan)
    for i, positions in enumerate(kept):
        image[i, :len(positions)] = positions
    fig, ax = plt.subplots(figsize=(8, 5))
    shown = ax.imshow(image, aspect="auto", interpolation="nearest", cmap="viridis")
    fig.colorbar(shown, ax=ax, label="original position of the kept token")
    ax.set_xlabel("cache slot")
    ax.set_ylabel("refresh cycle")
    ax.set_title(f"{config['policy']} J={config['J']} h={config['h']}: sample {sample}")
    save(fig, args.out)


if __name__ == "__main__":
    main()
