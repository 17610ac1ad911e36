"""A small sweep from Python and its figure: four policies (one of them the Python Knorm of examples/knorm.py)
× three budgets on the embedded demo model's rare-fact task, then accuracy vs J from the results frame.

    .venv/bin/python examples/accuracy_vs_j.py [--samples 24] [--out results/python-example]

Rerunning skips finished jobs (the results files are the sweep's state). Knorm scores 0 at every J here, as the
built-in knorm does (the tests check they keep the same entries): on this two-layer model the keys of smallest
norm are not the ones the answer needs.
"""
import argparse
import pathlib
import runpy

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import kvbench  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
runpy.run_path(str(HERE / "knorm.py"))  # registers py-knorm

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--samples", type=int, default=24)
parser.add_argument("--out", default="results/python-example")
args = parser.parse_args()

config = {
    "base": {"model": str(HERE.parent / "models" / "kvbench-demo"), "task": "rare-fact",
             "data": f"rare-fact:seed=0,samples={args.samples},words=150,facts=1"},
    "grid": {"policy": ["sliding", "h2o", "counter-causal-fast", "py-knorm"], "J": [32, 64, 128], "h": ["J/4"]},
}
jobs = kvbench.sweep(config, out_dir=args.out)
frame = kvbench.results.load([job["out"] for job in jobs])

# pass@1 per job: mean over a sample's rollouts, then over samples (the summary's score)
accuracy = (frame.groupby(["config.policy", "config.J", "sample_id"])["score"].mean()
            .groupby(["config.policy", "config.J"]).mean().unstack("config.J"))
print(accuracy.round(2).to_string())

figure, axes = plt.subplots(figsize=(5, 3.5))
for policy, row in accuracy.iterrows():
    axes.plot(row.index, row.values, marker="o", label=policy)
axes.set_xscale("log", base=2)
axes.set_xlabel("cache budget J")
axes.set_ylabel("accuracy (rare-fact)")
axes.set_title(f"kvbench-demo, {args.samples} stories")
axes.legend(fontsize=8)
figure.tight_layout()
path = pathlib.Path(args.out) / "accuracy_vs_j.png"
figure.savefig(path, dpi=120)
print(f"wrote {path}")
