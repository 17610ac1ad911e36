#!/usr/bin/python3
"""Training curves of a model trained by `kvbench train-demo`, from its training.json: the training loss
(every 50 steps) and the held-out recall probe (full-cache greedy accuracy on rare-fact stories the model
never saw) against the step. Needs python3-matplotlib.
Example: scripts/plot_training.py models/kvbench-demo/training.json --out models/kvbench-demo/training.png
"""
import json

from plot_common import argument_parser, plt, save


def main():
    parser = argument_parser(__doc__)
    parser.add_argument("training_json")
    args = parser.parse_args()
    with open(args.training_json) as f:
        training = json.load(f)
    losses = training["losses_every_50"]
    probes = training.get("recall_probes", [])
    fig, loss_ax = plt.subplots(figsize=(6, 4))
    loss_ax.plot([50 * i + 1 for i in range(len(losses))], losses, color="tab:blue", label="training loss")
    loss_ax.set_xlabel("step")
    loss_ax.set_ylabel("training loss (weighted cross-entropy)", color="tab:blue")
    if probes:
        recall_ax = loss_ax.twinx()
        recall_ax.plot([p["step"] for p in probes], [p["recall"] for p in probes], color="tab:red", marker="o",
                       markersize=3, label="held-out recall")
        recall_ax.set_ylabel("held-out recall (full cache)", color="tab:red")
        recall_ax.set_ylim(-0.02, 1.02)
    loss_ax.set_title("kvbench train-demo")
    save(fig, args.out)


if __name__ == "__main__":
    main()
