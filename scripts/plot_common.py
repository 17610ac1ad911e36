"""Shared by the plot_*.py scripts: headless matplotlib, the command line, saving a figure."""
import argparse

import matplotlib

matplotlib.use("Agg")  # no display needed (clusters, CI)
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)


def argument_parser(doc):
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="image file (.png, .pdf, .svg)")
    return parser


def save(fig, out):
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")
