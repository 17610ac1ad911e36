#!/usr/bin/python3
"""Checks of the attention mass lost under `--shadow full` (engine/shadow.h), independent of kvbench.

  generate JSON MODEL_DIR   each refresh's shadow_lost_by_layer recomputed in numpy: one causal pass of the
                            reference decoder (ref_decoder.py, ../shared/tools) over prompt + generated tokens
                            (all but the last, which is never fed) gives every layer's attention probabilities;
                            a refresh's window is the positions [processed, next refresh's processed) that were
                            fed; the entries the policy lacked are [0, processed) minus the refresh's kept
                            positions (per layer and KV head for per-head policies; query head h reads KV head
                            h // (H / KV)); the value is their probability summed, mean over query heads.
  files A.h5 ...            structure: per refresh, queries = |[processed, next) ∩ fed positions| of its row,
                            shadow_lost_by_layer = queries × layers values in [0, 1], shadow_lost_mass their mean
                            (NaN for an empty window); the dataset states its definition in an attribute.
  zero FILE.h5              nothing evicted ⇒ nothing lost: every recorded value is exactly 0.
  table CSV FILE.h5 ...     `kvbench report --table attention-loss --format csv` against the cell means
                            recomputed here from shadow_lost_by_layer, in both tables: all refreshes (row = mean
                            over refreshes with a window, 0 without; unit = (seed, sample) mean over rollouts;
                            cell = mean of units) and decode refreshes only (row = mean over decode refreshes
                            with a window; 0 for a row that never refreshed; a row that refreshed without such
                            a window has no value and is left out, and so is a unit none of whose rollouts has
                            one; "–" for a cell without units); the full policy's cells exactly 0.
  more FEW.h5 MANY.h5       on every sample, the smaller budget loses more attention than the larger.
"""
import csv
import json
import math
import os
import sys

import h5py
import numpy as np


def softmax_rows(scores):
    scores = scores - scores.max(-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(-1, keepdims=True)


def attention_probabilities(decoder, ids):
    """Per layer [H, S, S] float64: the causal attention of every position of `ids` (one full pass)."""
    S = len(ids)
    pos = np.arange(S)
    causal = np.tril(np.ones((S, S), bool))
    x = decoder.embed[np.asarray(ids)]
    probs = []
    for l in range(decoder.L):
        q = decoder.query(l, x, pos)
        k, v = decoder.keys_values(l, x, pos)
        keys = np.repeat(k, decoder.H // decoder.KV, 0).astype(np.float64)
        scores = q.astype(np.float64) @ keys.transpose(0, 2, 1) / math.sqrt(decoder.hd)
        probs.append(softmax_rows(np.where(causal[None], scores, -np.inf)))
        x = decoder.mlp_residual(l, decoder.attn_residual(l, x, q, k, v, causal))
    return probs


def kept_of(refresh, layer, kv_head):
    kept = np.asarray(refresh["kept_positions"])
    return set((kept if kept.ndim == 1 else kept[layer, kv_head]).tolist())


def check_generate(json_path, model_dir):
    sys.path.insert(0, os.path.join(os.environ["KVBENCH_SHARED"], "tools"))
    from ref_decoder import Decoder
    decoder = Decoder(model_dir)
    out = json.load(open(json_path))
    fed = out["prompt_ids"] + out["generated_ids"][:-1]
    probs = attention_probabilities(decoder, fed)
    refreshes = out["refreshes"]
    assert refreshes and any(r["size_after"] < r["size_before"] for r in refreshes), "the test needs evictions"
    worst, windows = 0.0, 0
    for i, refresh in enumerate(refreshes):
        begin = refresh["processed"]
        end = min(refreshes[i + 1]["processed"] if i + 1 < len(refreshes) else len(fed), len(fed))
        recorded = np.asarray(refresh["shadow_lost_by_layer"], np.float64).reshape(-1, decoder.L)
        assert len(recorded) == max(0, end - begin), (i, len(recorded), begin, end)
        for l in range(decoder.L):
            for h in range(decoder.H):
                absent = sorted(set(range(begin)) - kept_of(refresh, l, h // (decoder.H // decoder.KV)))
                lost = probs[l][h, begin:end][:, absent].sum(-1) / decoder.H
                recorded[:, l] -= lost
        worst = max(worst, np.abs(recorded).max(initial=0.0))
        windows += end > begin
    assert worst < 1e-4, f"recorded attention lost differs from the numpy recomputation by {worst:.2e}"
    lost_any = max(max(r["shadow_lost_by_layer"], default=0.0) for r in refreshes)
    assert lost_any > 0, "evicting lost no attention"
    print(f"generate ({out['policy']}): {len(refreshes)} refreshes, {windows} windows recomputed in numpy, "
          f"max |Δ| {worst:.1e}")


def load(path):
    f = h5py.File(path, "r")
    config = json.loads(f.attrs["config"])
    rows, refreshes = f["rows"], f["refreshes"]
    row_info = [{"sample": rows["sample_id"][i].decode() if isinstance(rows["sample_id"][i], bytes)
                 else str(rows["sample_id"][i]),
                 "fed": int(rows["prompt_length"][i]) + int(rows["generated_length"][i]) - 1}
                for i in range(len(rows["score"]))]
    traces = [{"row": int(refreshes["row"][k]), "processed": int(refreshes["processed"][k]),
               "phase": refreshes["phase"][k].decode() if isinstance(refreshes["phase"][k], bytes)
               else str(refreshes["phase"][k]),
               "queries": int(refreshes["shadow_lost_queries"][k]), "mass": float(refreshes["shadow_lost_mass"][k]),
               "by_layer": np.asarray(refreshes["shadow_lost_by_layer"][k], np.float64)}
              for k in range(len(refreshes["row"]))]
    return config, row_info, traces


def traces_by_row(rows, traces):
    out = [[] for _ in rows]
    for t in traces:
        out[t["row"]].append(t)
    return out


def check_files(*paths):
    for path in paths:
        config, rows, traces = load(path)
        assert config["shadow"] == "full", config
        definition = h5py.File(path, "r")["refreshes/shadow_lost_by_layer"].attrs["definition"]
        assert "evicted at this refresh or an earlier one" in str(definition), definition
        for row, own in zip(rows, traces_by_row(rows, traces)):
            for i, t in enumerate(own):
                end = own[i + 1]["processed"] if i + 1 < len(own) else row["fed"]
                want = max(0, min(end, row["fed"]) - t["processed"])
                assert t["queries"] == want, (path, row, i, t["queries"], want)
                assert len(t["by_layer"]) % max(t["queries"], 1) == 0, (path, i)
                values = t["by_layer"]
                assert np.all(values >= 0) and np.all(values <= 1 + 1e-6), (path, values.min(), values.max())
                if t["queries"]:
                    assert abs(t["mass"] - values.mean()) < 1e-9, (path, t["mass"], values.mean())
                else:
                    assert math.isnan(t["mass"]) and len(values) == 0, (path, t)
        print(f"files: {os.path.basename(path)}: {len(traces)} refresh windows well formed")


def check_zero(path):
    _, _, traces = load(path)
    values = [t["by_layer"] for t in traces]
    assert values and sum(len(v) for v in values) > 0, "the test needs refreshes followed by tokens"
    assert all(np.all(v == 0) for v in values), max(v.max(initial=0) for v in values)
    print(f"zero: {len(values)} windows, nothing lost")


def row_value(own, decode_only):
    """A row's attention lost from its refreshes, or None (decode only: refreshed, but no decode window)."""
    windows = [t["by_layer"].mean() for t in own
               if len(t["by_layer"]) and (not decode_only or t["phase"] == "decode")]
    if windows:
        return float(np.mean(windows))
    return 0.0 if not own or not decode_only else None


def row_values(path, decode_only=False):
    """Per (seed, sample): the mean over its rollouts with a value of the row's attention lost."""
    config, rows, traces = load(path)
    units = {}
    for row, own in zip(rows, traces_by_row(rows, traces)):
        value = row_value(own, decode_only)
        if value is not None:
            units.setdefault((config["seed"], row["sample"]), []).append(value)
    return config, {key: float(np.mean(v)) for key, v in units.items()}


def csv_tables(csv_path):
    """The CSV's tables by title (each a `# title` line, a header and rows)."""
    tables, title, lines = {}, None, []
    for line in open(csv_path).read().splitlines() + ["# end"]:
        if line.startswith("# "):
            if title:
                tables[title] = list(csv.DictReader(lines))
            title, lines = line[2:], []
        elif line.strip():
            lines.append(line)
    return tables


def check_cell(table, config, units, path):
    row = next(r for r in table if r["policy"] == config["policy"])
    cell = row[f"J={config['J']} h={config['h']}"]
    if not units:
        assert cell == "–", (path, cell)
        return None
    mean = float(np.mean(list(units.values())))
    shown, interval = cell.split(" ", 1)
    low, high = (float(x) for x in interval.strip("[]").split(", "))
    assert shown == f"{mean:.4f}" and low <= float(shown) <= high, (path, cell, mean)
    if config["policy"] == "full":  # never evicts: nothing can be lost
        assert cell == "0.0000 [0.0000, 0.0000]", cell
    return mean


def check_table(csv_path, *paths):
    tables = csv_tables(csv_path)
    everything = next(t for title, t in tables.items() if ", all refreshes:" in title)
    decode = next(t for title, t in tables.items() if ", decode refreshes:" in title)
    left_out = differs = 0
    for path in paths:
        config, units = row_values(path)
        all_mean = check_cell(everything, config, units, path)
        _, decode_units = row_values(path, decode_only=True)
        decode_mean = check_cell(decode, config, decode_units, path)
        left_out += len(units) - len(decode_units)
        differs += decode_mean is not None and abs(decode_mean - all_mean) > 1e-3
    assert differs, "the decode-only table repeats the one over all refreshes"
    print(f"table: {len(paths)} cells recomputed in each table; decode only: {left_out} samples without a decode "
          f"window left out, {differs} cells differ from all refreshes")


def check_more(few, many):
    _, lost_few = row_values(few)
    _, lost_many = row_values(many)
    assert lost_few.keys() == lost_many.keys()
    for key in lost_few:
        assert lost_few[key] > lost_many[key], (key, lost_few[key], lost_many[key])
    print("more eviction loses more attention on every sample: "
          f"mean {np.mean(list(lost_few.values())):.4f} > {np.mean(list(lost_many.values())):.4f}")


if __name__ == "__main__":
    {"generate": check_generate, "files": check_files, "zero": check_zero, "table": check_table,
     "more": check_more}[sys.argv[1]](*sys.argv[2:])
