#!/usr/bin/python3
"""Checks of `--shadow full` (engine/shadow.h), independent of kvbench.

  generate JSON MODEL_DIR   top-1 agreement recomputed with the numpy reference decoder (ref_decoder.py,
                            ../shared/tools): the full cache's argmax after prompt + the generated tokens so
                            far (a full causal pass) against the token the greedy policy chose; KL ≥ 0, and 0
                            while the policy's cache still equals the full one (before its first eviction).
  files FULL.h5 A.h5 ...    per row one KL / agreement per generated token; the full policy: KL exactly 0,
                            agreement 1; any policy: KL ≥ 0.
  table CSV FILE.h5 ...     `kvbench report --table fidelity --format csv` against the pooled means recomputed here.
  more FEW.h5 MANY.h5       more eviction (the smaller J) strays further: mean KL(FEW) > mean KL(MANY) > 0.
"""
import csv
import json
import os
import sys

import h5py
import numpy as np


def rows_of(path):
    f = h5py.File(path, "r")
    r = f["rows"]
    return json.loads(f.attrs["config"]), [(np.asarray(r["shadow_kl"][i]), np.asarray(r["shadow_top1"][i]),
                                            int(r["generated_length"][i])) for i in range(len(r["score"]))]


def check_generate(json_path, model_dir):
    sys.path.insert(0, os.path.join(os.environ["KVBENCH_SHARED"], "tools"))
    from ref_decoder import Decoder
    out = json.load(open(json_path))
    prompt, generated = out["prompt_ids"], out["generated_ids"]
    kl, top1 = np.asarray(out["shadow_kl"]), np.asarray(out["shadow_top1"])
    assert len(kl) == len(top1) == len(generated), (len(kl), len(top1), len(generated))
    logits = Decoder(model_dir).forward(np.asarray(prompt + generated[:-1]))[len(prompt) - 1:]
    for t, row in enumerate(logits):
        best, second = np.sort(row)[-1], np.sort(row)[-2]
        want = int(np.argmax(row) == generated[t])
        assert top1[t] == want or best - second < 1e-3, f"step {t}: top-1 {top1[t]}, numpy full cache says {want}"
    assert np.all(kl >= -1e-9), kl.min()
    # Token t is chosen from logits computed before step t's refresh: until the first refresh that evicts,
    # the policy's cache is the full one and the logits are the same (KL exactly 0); after, they differ.
    evictions = [r for r in out["refreshes"] if r["size_after"] < r["size_before"]]
    assert evictions, "the test needs a budget that evicts"
    if evictions[0]["phase"] == "decode":
        assert np.all(kl[:evictions[0]["step"] + 1] == 0), kl
    assert kl.max() > 0, "evicting changed no distribution"
    print(f"generate: {len(top1)} steps, top-1 agreement {top1.mean():.3f} (recomputed in numpy), mean KL {kl.mean():.4f}")


def check_files(full, *others):
    config, rows = rows_of(full)
    assert config["policy"] == "full" and config["shadow"] == "full", config
    for kl, top1, length in rows:
        assert len(kl) == len(top1) == length, (len(kl), len(top1), length)
        assert np.all(kl == 0) and np.all(top1 == 1), (kl, top1)
    for path in others:
        for kl, top1, length in rows_of(path)[1]:
            assert len(kl) == len(top1) == length and np.all(kl >= -1e-9) and set(top1.tolist()) <= {0, 1}
    print(f"files: full policy KL 0 / agreement 1 on {len(rows)} rows; {len(others)} other files well formed")


def pooled(path):
    rows = rows_of(path)[1]
    kl = np.concatenate([k for k, _, _ in rows]).astype(np.float64)
    top1 = np.concatenate([a for _, a, _ in rows])
    return kl.mean(), top1.mean()


def check_table(csv_path, *paths):
    lines = [line for line in open(csv_path) if not line.startswith("#")]
    table = list(csv.DictReader(lines))
    for path in paths:
        config, _ = rows_of(path)
        row = next(r for r in table if r["policy"] == config["policy"])
        kl, agree = pooled(path)
        assert row[f"J={config['J']}"] == f"KL {kl:.4f} / top-1 {agree:.3f}", (row, kl, agree)
    print(f"table: {len(paths)} cells recomputed")


def check_more(few, many):
    kl_few, kl_many = pooled(few)[0], pooled(many)[0]
    assert kl_few > kl_many > 0, (kl_few, kl_many)
    print(f"more eviction strays further: mean KL {kl_few:.4f} > {kl_many:.4f}")


if __name__ == "__main__":
    {"generate": check_generate, "files": check_files, "table": check_table, "more": check_more}[sys.argv[1]](*sys.argv[2:])
