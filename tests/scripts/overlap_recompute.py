#!/usr/bin/python3
"""Recompute `kvbench report --table overlap` / `overlap-refreshes` from the HDF5 datasets alone and compare.

Jaccard per refresh, from the statement in report/overlap.h: refreshes matched by (sample id, rollout,
k-th refresh of that row) when both files have it and agree on `processed`; |A ∩ B| / |A ∪ B| of the kept
positions, per-head sets averaged over layers × KV heads (a token-level set stands for every head).

Usage: overlap_recompute.py A.h5 B.h5 REFRESHES.csv SUMMARY.csv
"""
import csv
import json
import sys

import h5py
import numpy as np


def traces_by_row(path):
    f = h5py.File(path, "r")
    sample = [x.decode() if isinstance(x, bytes) else x for x in f["rows/sample_id"][:]]
    rollout = f["rows/rollout"][:]
    r = f["refreshes"]
    out = {}
    for k in range(len(r["row"])):
        row = r["row"][k]
        kept = np.asarray(r["kept_positions"][k]).reshape(r["layers"][k] * r["kv_heads"][k], -1)
        out.setdefault((sample[row], int(rollout[row])), []).append(
            {"processed": int(r["processed"][k]), "phase": r["phase"].asstr()[k], "kept": kept})
    return out, json.loads(f.attrs["config"])


def jaccard(a, b):
    a, b = set(a.tolist()), set(b.tolist())
    return len(a & b) / len(a | b) if a | b else 1.0


def head_mean(ka, kb):
    heads = max(len(ka), len(kb))
    return float(np.mean([jaccard(ka[h % len(ka)], kb[h % len(kb)]) for h in range(heads)]))


def read_csv(path):
    with open(path) as f:
        lines = [line for line in f if not line.startswith("#")]
    return list(csv.DictReader(lines))


def main(a_path, b_path, refreshes_csv, summary_csv):
    a, _ = traces_by_row(a_path)
    b, _ = traces_by_row(b_path)
    matched, unmatched = {}, 0
    for key in set(a) | set(b):
        ta, tb = a.get(key, []), b.get(key, [])
        for k in range(max(len(ta), len(tb))):
            if k < len(ta) and k < len(tb) and ta[k]["processed"] == tb[k]["processed"]:
                matched[(key[0], key[1], k)] = (head_mean(ta[k]["kept"], tb[k]["kept"]), ta[k]["phase"])
            else:
                unmatched += (k < len(ta)) + (k < len(tb))
    assert matched, "no matched refreshes: the test needs two runs on the same samples"

    rows = read_csv(refreshes_csv)
    reported = {(r["sample"], int(r["rollout"]), int(r["refresh"])): float(r["jaccard"]) for r in rows}
    assert set(reported) == set(matched), f"matched refreshes differ: {sorted(set(reported) ^ set(matched))[:5]}"
    for key, (value, _) in matched.items():
        assert abs(reported[key] - value) <= 5e-5, f"refresh {key}: report {reported[key]} vs recomputed {value}"

    summary = read_csv(summary_csv)
    assert len(summary) == 1, summary
    s = summary[0]
    values = [v for v, _ in matched.values()]
    assert int(s["refreshes"]) == len(matched) and int(s["unmatched"]) == unmatched, (s, len(matched), unmatched)
    assert abs(float(s["mean"]) - np.mean(values)) <= 5e-4, (s["mean"], np.mean(values))
    assert abs(float(s["min"]) - min(values)) <= 5e-4, (s["min"], min(values))
    for phase in ("prefill", "decode"):
        of_phase = [v for v, p in matched.values() if p == phase]
        if of_phase:
            assert abs(float(s[phase]) - np.mean(of_phase)) <= 5e-4, (phase, s[phase], np.mean(of_phase))
        else:
            assert s[phase] == "–", s[phase]
    print(f"overlap {s['policy A']} vs {s['policy B']}: {len(matched)} refreshes, mean Jaccard {np.mean(values):.4f} "
          f"(recomputed), {unmatched} unmatched")


if __name__ == "__main__":
    main(*sys.argv[1:5])
