#!/usr/bin/python3
"""Check one kvbench results file against results/README.md, reading it with h5py only.

Every documented attribute and dataset must be present with its type; lengths must agree; the summary
and the rare-fact scores are recomputed here independently of kvbench (rare-fact: the first 4-digit
number of the output must equal the code).
Usage: check_results_schema.py FILE.h5 EXPECTED_ROLLOUTS token|per-head
"""
import json
import math
import os
import re
import subprocess
import sys

import h5py
import numpy as np

ROOT_STRINGS = ["kvbench_version", "git_commit", "config", "torch_version", "device", "dtype", "host",
                "start_time", "end_time", "settings"]
CONFIG_FIELDS = ["model", "task", "data", "prompt_mode", "policy", "J", "h", "recent", "frozen", "min_gap", "sinks",
                 "mode", "policy_seed", "scorer", "smooth", "keep_span", "max_new", "temperature", "top_p", "rollouts", "seed", "limit", "samples",
                 "device", "dtype", "shadow", "profile"]
SUMMARY = {"samples": "i", "rows": "i", "score": "f", "score_ci_low": "f", "score_ci_high": "f",
           "pred_none_rate": "f", "mean_generated_length": "f"}
ROWS = {"sample_id": "str", "rollout": "i", "seed": "i", "prompt_length": "i", "generated_ids": "vlen",
        "generated_length": "i", "stop_reason": "str", "output": "str", "pred": "str", "pred_none": "i",
        "gold": "str", "score": "f", "wall_seconds": "f", "refresh_count": "i", "mean_cache_size": "f", "key_retention": "f",
        "peak_cache_size": "i", "budget_J": "i", "mean_entries_per_head": "f", "peak_cache_bytes": "f",
        "shadow_kl": "vlen-float32", "shadow_top1": "vlen"}
ALLOCATOR_FIELDS = {"allocator", "ratio", "tokenizer"}  # in the config only when set (not the defaults)


def registered_allocators():
    """The allocators the binary registers (`kvbench list allocators --json`), the default first."""
    listed = subprocess.run([os.environ["KVBENCH"], "list", "allocators", "--json"], capture_output=True, text=True,
                            check=True)
    return json.loads(listed.stdout)
REFRESHES = {"row": "i", "phase": "str", "step": "i", "processed": "i", "size_before": "i", "size_after": "i",
             "layers": "i", "kv_heads": "i", "kept_positions": "vlen", "scoring_ms": "f", "compaction_ms": "f",
             "scores": "vlen-float32", "candidates_begin": "i", "candidates_end": "i",
             "shadow_lost_queries": "i", "shadow_lost_mass": "f", "shadow_lost_by_layer": "vlen-float32"}


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def check_kind(dataset, kind, where):
    if kind == "str":
        assert h5py.check_string_dtype(dataset.dtype) is not None, f"{where}: not a string dataset"
    elif kind == "vlen":
        assert h5py.check_vlen_dtype(dataset.dtype) == np.dtype("int64"), f"{where}: not vlen int64"
    elif kind == "vlen-float32":
        assert h5py.check_vlen_dtype(dataset.dtype) == np.dtype("float32"), f"{where}: not vlen float32"
    else:
        assert dataset.dtype.kind == kind, f"{where}: dtype {dataset.dtype}, expected kind {kind}"


def columns(group, spec, name):
    assert set(group) == set(spec), f"/{name}: datasets {sorted(group)} != documented {sorted(spec)}"
    lengths = set()
    out = {}
    for key, kind in spec.items():
        check_kind(group[key], kind, f"/{name}/{key}")
        data = group[key][()]
        out[key] = [text(x) for x in data] if kind == "str" else data
        lengths.add(len(data))
    assert len(lengths) == 1, f"/{name}: columns of different lengths {lengths}"
    return out


def knob_values(spec_items):
    """{knob: text} of a spec's items ("ratio=3,x=a" → {"ratio": "3", "x": "a"})."""
    return dict(item.split("=", 1) for item in spec_items.split(",")) if spec_items else {}


def check_settings(settings, config, allocator, allocator_knobs):
    """The effective settings: every knob of the policy and allocator with its value (the normal-form spec in the
    config names only those away from their defaults), the budget with its resolved recent window."""
    policy_name, _, policy_knobs = config["policy"].partition(":")
    assert settings["policy"]["name"] == policy_name, settings["policy"]
    assert settings["allocator"]["name"] == allocator["name"], settings["allocator"]
    assert set(settings["allocator"]["knobs"]) == set(allocator["knobs"]), "allocator knobs differ from its listing"
    for part, knobs in (("policy", policy_knobs), ("allocator", allocator_knobs)):
        for knob, value in knob_values(knobs).items():
            assert knob in settings[part]["knobs"], f"{part} knob {knob} of the spec is not in the settings"
            typed = json.loads(value) if re.fullmatch(r"true|false|-?[0-9.]+(e[-+]?[0-9]+)?", value) else value
            assert settings[part]["knobs"][knob] == typed, (part, knob, value, settings[part]["knobs"][knob])
    budget = settings["budget"]
    if "ratio" in config:  # the J of the settings' example prompt
        assert budget["ratio"] == {"ratio": config["ratio"], "prompt_tokens": 1000}, budget
        assert budget["J"] == max(1, math.floor(1000 * (1 - config["ratio"]))), budget
    else:
        assert budget["J"] == config["J"] and budget["h"] == (config["h"] or budget["h"]), budget
    assert 0 <= budget["recent"] < budget["J"], "the effective recent window, resolved (the config may say -1)"
    if config["recent"] >= 0:
        assert budget["recent"] == config["recent"], budget


def main(path, expected_rollouts, granularity):
    f = h5py.File(path, "r")
    assert f.attrs["schema_version"] == 1
    for key in ROOT_STRINGS:
        assert isinstance(text(f.attrs[key]), str), f"root attribute {key} missing or not a string"
    doctor = subprocess.run([os.environ["KVBENCH"], "doctor"], capture_output=True, text=True, check=True).stdout
    blas = re.search(r"^BLAS kernels +(.+)$", doctor, re.M).group(1)
    if blas == "not OpenBLAS":
        assert "blas" not in f.attrs, "a blas attribute without OpenBLAS"
    else:
        assert text(f.attrs["blas"]) == blas, (text(f.attrs["blas"]), blas)
    config = json.loads(text(f.attrs["config"]))
    assert set(CONFIG_FIELDS) <= set(config) <= set(CONFIG_FIELDS) | ALLOCATOR_FIELDS, f"config fields {sorted(config)}"
    ragged = "allocator" in config
    default_allocator, *others = registered_allocators()
    allocator_name, _, allocator_knobs = config.get("allocator", default_allocator["name"]).partition(":")
    allocator = next((a for a in others if a["name"] == allocator_name), default_allocator)
    assert config.get("allocator") is None or allocator_name in [a["name"] for a in others], \
        f"{default_allocator['name']} must leave the identity as before allocators"
    assert ragged == allocator["ragged"], f"allocator {allocator['name']}: ragged is {allocator['ragged']}"
    check_settings(json.loads(text(f.attrs["settings"])), config, allocator, allocator_knobs)
    assert config["policy"].split(":")[0] in allocator["policies"], f"{allocator['name']} does not serve {config['policy']}"
    model = json.load(open(f"{config['model']}/config.json"))
    kv_bytes_per_slot = 2 * model["num_hidden_layers"] * model["num_key_value_heads"] * \
        model.get("head_dim", model["hidden_size"] // model["num_attention_heads"]) * (4 if config["dtype"] == "float32" else 2)
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", text(f.attrs["start_time"]))
    summary = {}
    for key, kind in SUMMARY.items():
        value = f["summary"].attrs[key]
        assert np.asarray(value).dtype.kind == kind, f"summary {key}: {np.asarray(value).dtype}"
        summary[key] = float(value)
    rows = columns(f["rows"], ROWS, "rows")
    refreshes = columns(f["refreshes"], REFRESHES, "refreshes")
    n = len(rows["score"])

    # Rows: rollouts consecutive per sample, lengths, pred=None, and an independent rare-fact grade.
    per_sample = {}
    for i in range(n):
        per_sample.setdefault(rows["sample_id"][i], []).append(i)
        assert rows["generated_length"][i] == len(rows["generated_ids"][i])
        assert rows["stop_reason"][i] in ("eos", "stop", "max_tokens")
        if "ratio" in config:
            assert rows["budget_J"][i] == max(1, math.floor(rows["prompt_length"][i] * (1 - config["ratio"])))
        elif config["frozen"] != "auto":
            assert rows["budget_J"][i] == config["J"], (rows["budget_J"][i], config["J"])
        gold = json.loads(rows["gold"][i])
        codes = re.findall(r"(?<!\d)\d{4}(?!\d)", rows["output"][i])
        assert rows["pred_none"][i] == (0 if codes else 1), (rows["output"][i], rows["pred_none"][i])
        assert rows["pred"][i] == ",".join(codes)
        expected = 1.0 if codes and codes[0] == gold["answers"][0] else 0.0
        assert rows["score"][i] == expected, (rows["output"][i], gold, rows["score"][i])
        assert rows["peak_cache_size"][i] >= rows["mean_cache_size"][i] > 0
        # Realised size and bytes, from the model's shape: every layer and head holds every slot unless ragged.
        if ragged:
            assert 0 < rows["mean_entries_per_head"][i] <= rows["mean_cache_size"][i]
            assert 0 < rows["peak_cache_bytes"][i] <= kv_bytes_per_slot * rows["peak_cache_size"][i]
        else:
            assert abs(rows["mean_entries_per_head"][i] - rows["mean_cache_size"][i]) < 1e-9
            assert rows["peak_cache_bytes"][i] == kv_bytes_per_slot * rows["peak_cache_size"][i]
        assert rows["wall_seconds"][i] > 0
        assert 0 <= rows["key_retention"][i] <= 1, rows["key_retention"][i]  # rare-fact names its facts
        # --shadow full: one KL and one agreement per generated token; none without it.
        shadow = rows["generated_length"][i] if config["shadow"] == "full" else 0
        assert len(rows["shadow_kl"][i]) == len(rows["shadow_top1"][i]) == shadow, (len(rows["shadow_kl"][i]), shadow)
    for sample, indices in per_sample.items():
        assert [rows["rollout"][i] for i in indices] == list(range(expected_rollouts)), sample
        assert indices == list(range(indices[0], indices[0] + expected_rollouts)), "rollouts not consecutive"

    # Summary recomputed: pass@1 = mean over rollouts, then over samples.
    sample_scores = [np.mean([rows["score"][i] for i in idx]) for idx in per_sample.values()]
    assert summary["samples"] == len(per_sample) and summary["rows"] == n
    assert abs(summary["score"] - np.mean(sample_scores)) < 1e-12
    assert abs(summary["pred_none_rate"] - np.mean(rows["pred_none"])) < 1e-12
    assert abs(summary["mean_generated_length"] - np.mean(rows["generated_length"])) < 1e-12
    assert summary["score_ci_low"] <= summary["score"] <= summary["score_ci_high"]

    # Refresh traces: valid rows, counts, kept positions shaped layers × kv_heads × M, ascending, seen.
    assert len(refreshes["row"]) > 0, "expected refreshes with this budget"
    counts = np.bincount(refreshes["row"], minlength=n)
    assert list(counts) == list(rows["refresh_count"]), "refresh_count disagrees with the traces"
    for k in range(len(refreshes["row"])):
        kept = np.asarray(refreshes["kept_positions"][k])
        layers, heads = refreshes["layers"][k], refreshes["kv_heads"][k]
        assert (layers * heads > 1) == (granularity == "per-head"), (layers, heads, granularity)
        assert kept.size == layers * heads * refreshes["size_after"][k]
        assert refreshes["size_after"][k] <= refreshes["size_before"][k] <= refreshes["processed"][k]
        for seq in kept.reshape(layers, heads, -1).reshape(-1, refreshes["size_after"][k]):
            held = seq[seq >= 0]  # ragged allocators pad rows with -1 at their end
            assert ragged or len(held) == len(seq), "padding without an allocator"
            assert np.all(seq[len(held):] == -1), "padding inside a row"
            assert np.all(np.diff(held) > 0) and held.max() < refreshes["processed"][k]
        assert refreshes["phase"][k] in ("prefill", "decode")
        assert refreshes["scoring_ms"][k] >= 0 and refreshes["compaction_ms"][k] >= 0
        # Raw scores of the n scored entries (token-level policies only); candidates inside [0, n].
        scores = refreshes["scores"][k]
        assert len(scores) == (refreshes["size_before"][k] if granularity == "token" else 0), len(scores)
        assert 0 <= refreshes["candidates_begin"][k] <= refreshes["candidates_end"][k] <= refreshes["size_before"][k]
        # Attention lost (--shadow full): queries × layers values; without a shadow −1, empty, NaN.
        queries, lost = refreshes["shadow_lost_queries"][k], refreshes["shadow_lost_by_layer"][k]
        if config["shadow"] == "full":
            assert queries >= 0 and len(lost) == queries * model["num_hidden_layers"], (queries, len(lost))
        else:
            assert queries == -1 and len(lost) == 0 and np.isnan(refreshes["shadow_lost_mass"][k])
    print(f"{path}: schema ok ({n} rows, {len(refreshes['row'])} refresh traces)")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
