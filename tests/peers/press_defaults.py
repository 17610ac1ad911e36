#!/usr/bin/env python3
"""kvpress's defaults against kvbench's, for the presses kvbench implements (tests/scripts/press_defaults.sh).

  press_defaults.py KVBENCH

For each kvpress 0.5.5 press kvbench has (a policy, an allocator), every dataclass field's default is read
from kvpress (dataclasses.fields) and set against the kvbench knob or job field that plays its role, read
from the binary KVBENCH (`list policies|allocators --json`, `run --help`, and `generate --format json` on
models/kvbench-demo for a policy's resolved --recent). A few behaviours that are not fields but fixed in a
press's code (TOVA's per-layer scoring and its kept newest entry, SnapKV's kept window) are read from its
source and compared too. One line per parameter. Exit 1 when a default differs and ON_PURPOSE does not
give the reason, when an ON_PURPOSE entry no longer differs (or its values changed), or when a field or
knob has no place in the tables below. Run with the project's environment (.venv/bin/python).
"""
import dataclasses
import importlib.metadata
import inspect
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import kvpress

SOURCE = Path(os.environ.get("KVBENCH_SOURCE") or Path(__file__).resolve().parents[2])

# kvpress fields that are no default to compare (by name, or one press's: (press, name)).
NOT_DEFAULTS = {
    "compression_ratio": "the budget: every job states its own (--J ratio:R)",
    "press": "a wrapper's scorer (AdaKVPress, ChunkKVPress): the job's --policy",
    "_leverage_press": "CompactorPress's child LeverageScorePress, built from its fields",
    "_non_causal_press": "CompactorPress's child NonCausalAttnPress, built from its fields",
    "q_filters": "QFilterPress's filters, loaded from the hub (kvbench: qfilter:filters=DIR)",
    "compression_ratio_": "DuoAttentionPress's measured compression, set by a forward pass",
    "sink_size": "DuoAttentionPress's, from its patterns' config.json (kvbench: --sinks)",
    "recent_size": "DuoAttentionPress's, from its patterns' config.json (kvbench: J - sinks)",
    "streaming_mask": "DuoAttentionPress's streaming heads, from its patterns",
    "delimiter_token": "FinchPress's delimiter, added to the tokenizer by the evaluation (kvbench: the question's tokens apart)",
    "delimiter_token_id": "FinchPress's delimiter's id, set with the token",
    ("FinchPress", "window_size"): "FinchPress's question length, found at the delimiter (kvbench: the question's tokens)",
    "kvzap_model_name": "KVzapPress's hub name, from the model's name (kvbench: kvzap:model=DIR)",
    ("DMSPress", "scores_buffer"): "DMSPress's scores of the entries inside its window, set by a forward pass",
    ("DMSPress", "compression_ratios"): "DMSPress's measured compression per layer, set by a forward pass",
}

# kvbench knobs with no kvpress parameter: (policy, knob) -> why.
KVBENCH_ONLY = {
    ("leverage", "seed"): "kvpress draws the sketch from torch's global generator; kvbench's own, seeded per sample, "
                          "gives kvpress's sketches when torch is seeded alike (tests/core/test_kvpress_reference.cpp)",
    ("compactor", "seed"): "as leverage's seed",
    ("qfilter", "filters"): "kvpress downloads nthngdy/<model>_qfilt from the hub by the model's name; kvbench reads "
                            "the directory QFilters.save_pretrained writes",
    ("critical", "ada"): "CriticalKVPress or CriticalAdaKVPress: kvbench's critical is either, by this switch",
    ("duo", "patterns"): "kvpress downloads DuoAttention's attn_patterns for the model; kvbench reads that directory",
    ("kvzap", "model"): "kvpress downloads nvidia/KVzap-<type>-<model> from the hub by the model's name; kvbench reads "
                        "the directory KVzapModel.save_pretrained writes (a linear or MLP one: model_type)",
}

# kvpress values that kvbench spells otherwise: (press, parameter) -> {kvpress value: kvbench value}.
SPELLING = {
    ("CompactorPress", "blending"): {None: "ratio"},  # None: blend by the compression ratio
}

# press -> (kvbench's name for it, [(kvpress parameter, kvbench counterpart)]). A counterpart is
# ("knob", policy, knob), ("allocator", allocator, knob), ("field", job field) — a default in `run --help` —,
# ("recent", policy) — the --recent the policy resolves to (generate's json) —, or ("fixed", value, where)
# for a constant kvbench has no knob for. A parameter in <angle brackets> is a behaviour of the press's code
# (kvpress_code below), not a field.
PRESSES = {
    "KnormPress": ("knorm", []),
    "KeyDiffPress": ("keydiff", []),
    "ObservedAttentionPress": ("observed-attention", []),
    "SnapKVPress": ("snapkv", [
        ("window_size", ("knob", "snapkv", "window")),
        ("kernel_size", ("knob", "snapkv", "kernel")),
        ("<window kept>", ("recent", "snapkv")),
    ]),
    "ExpectedAttentionPress": ("expected-attention", [
        ("n_future_positions", ("knob", "expected-attention", "future")),
        ("n_sink", ("field", "sinks")),
        ("use_covariance", ("knob", "expected-attention", "covariance")),
        ("use_vnorm", ("knob", "expected-attention", "vnorm")),
        ("epsilon", ("knob", "expected-attention", "epsilon")),
    ]),
    "TOVAPress": ("tova", [
        ("<layers>", ("knob", "tova", "layers")),
        ("<newest entry kept>", ("recent", "tova")),
    ]),
    "StreamingLLMPress": ("streaming", [
        ("n_sink", ("field", "sinks")),
    ]),
    "RandomPress": ("random", [
        ("seed", ("knob", "random", "seed")),
    ]),
    "AdaKVPress": ("ada", [
        ("alpha_safeguard", ("allocator", "ada", "safeguard")),
    ]),
    "PyramidKVPress": ("pyramid", [
        ("window_size", ("knob", "snapkv", "window")),
        ("kernel_size", ("knob", "snapkv", "kernel")),
        ("beta", ("allocator", "pyramid", "ratio")),
    ]),
    "LagKVPress": ("lagkv", [
        ("n_sink", ("field", "sinks")),
        ("lag_size", ("knob", "lagkv", "lag")),
        ("cross_scoring", ("knob", "lagkv", "cross")),
    ]),
    "CURPress": ("cur", [
        ("num_sinks", ("field", "sinks")),
        ("leverage_type", ("knob", "cur", "leverage")),
        ("use_random_leverage", ("fixed", False, "cur, fixed (no random projection)")),
        ("use_local_approximation", ("knob", "cur", "local")),
        ("local_window_size", ("knob", "cur", "window")),
    ]),
    "LeverageScorePress": ("leverage", [
        ("sketch_dimension", ("knob", "leverage", "sketch")),
    ]),
    "NonCausalAttnPress": ("non-causal-attention", [
        ("chunk_size", ("knob", "non-causal-attention", "chunk")),
    ]),
    "CompactorPress": ("compactor", [
        ("sink_size_start", ("fixed", 8, "compactor, fixed (the first 8 stay)")),
        ("sink_size_end", ("fixed", 4, "compactor, fixed (the last 4 stay)")),
        ("chunk_size", ("knob", "compactor", "chunk")),
        ("sketch_dimension", ("knob", "compactor", "sketch")),
        ("blending", ("knob", "compactor", "blending")),
    ]),
    "ChunkKVPress": ("chunkkv", [
        ("chunk_length", ("allocator", "chunkkv", "length")),
    ]),
    "ChunkPress": ("chunk", [
        ("chunk_length", ("allocator", "chunk", "length")),
    ]),
    "QFilterPress": ("qfilter", []),
    "DuoAttentionPress": ("duo", [
        ("head_compression_ratio", ("allocator", "duo", "heads")),
        ("on_the_fly_scoring", ("fixed", False, "duo, fixed (patterns from a file; kvbench duo-patterns writes them)")),
    ]),
    "FinchPress": ("finch", [
        ("chunk_length", ("fixed", None, "finch with the uniform allocator (one ranking over the whole prompt; "
                                         "chunk_length=c: --allocator chunk:length=c)")),
        ("normalize_scores", ("knob", "finch", "normalize")),
        ("rerotate_keys", ("knob", "finch", "rerotate")),
    ]),
    "KVzipPress": ("kvzip", [
        ("layerwise", ("fixed", False, "kvzip with --allocator global (layerwise: --allocator ada)")),
        ("n_sink", ("field", "sinks")),
        ("kvzip_plus_normalization", ("fixed", False, "kvzip, fixed (KVzip+ not here)")),
        ("chunk_size", ("knob", "kvzip", "chunk")),
    ]),
    "DMSPress": ("dms", [
        ("threshold", ("allocator", "dms", "threshold")),
        ("sliding_window_size", ("allocator", "dms", "window")),
        ("decoding", ("fixed", False, "dms with --mode prefill_end (one refresh at the prompt's end)")),
    ]),
    "PerLayerCompressionPress": ("layers", [
        ("compression_ratios", ("allocator", "layers", "ratios")),
    ]),
    "CriticalKVPress": ("critical", [
        ("epsilon", ("allocator", "critical", "epsilon")),
        ("first_stage_ratio", ("allocator", "critical", "first_stage")),
    ]),
    "CriticalAdaKVPress": ("critical", [
        ("alpha_safeguard", ("allocator", "critical", "safeguard")),
        ("epsilon", ("allocator", "critical", "epsilon")),
        ("first_stage_ratio", ("allocator", "critical", "first_stage")),
    ]),
    "KVzapPress": ("kvzap", [
        ("model_type", ("fixed", "mlp", "kvzap:model=DIR, the directory of either type")),
    ]),
}

# kvbench's defaults that differ from kvpress's on purpose: (press, parameter) -> (kvpress's value, kvbench's
# value, why). Both values are checked, so an entry stays true: when a default changes, so must its entry.
ON_PURPOSE = {
    ("AdaKVPress", "alpha_safeguard"): (
        0.2, 0.0,
        "every results file written with --allocator ada recorded `ada`, i.e. safeguard 0: a new default would "
        "give those files another meaning under the same identity; the leaderboard recipe sets ada:safeguard=0.2"),
    ("PyramidKVPress", "beta"): (
        39.0, 2.0,
        "beta is no ratio: kvpress's first/last layer budget is 2 beta - 1 = 39 only unclamped, and varies with "
        "context length and compression ratio (clamped to q - window, or SnapKV's uniform budget when its last "
        "layer would fall under the window); and `pyramid` has meant ratio 2 in every results file since "
        "--pyramid-ratio; the leaderboard recipe sets r per compression ratio"),
    ("TOVAPress", "<layers>"): (
        "each", "last",
        "`tova` is the counter-causal paper's TOVA baseline (../shared/DESIGN.md: last query, last layer, "
        "mean over heads) in every results file and recipe naming it; kvpress's per-layer form is tova:layers=each"),
    ("TOVAPress", "<newest entry kept>"): (
        1, 0,
        "kvpress forces the newest entry in (its own comment: 'a very slight difference from TOVA'); TOVA's "
        "rule forces nothing, and `tova` names that in existing results; kvpress's form adds --recent 1"),
    ("RandomPress", "seed"): (
        None, 0,
        "kvpress's None draws from torch's global generator, which no kvbench seed reproduces (kvbench draws "
        "from its own mt19937_64); kvbench always seeds so a job repeats across resume, batching and devices"),
}


def kvpress_code(press):
    """Behaviours fixed in a press's code, each found by the line that does it (else the script must be
    re-read against the new code)."""
    source = inspect.getsource(press.score)
    needs = {
        "SnapKVPress": ("F.pad(scores, (0, self.window_size), value=scores.max().item() + 1)",),
        "TOVAPress": ("scores = attn_weights.mean(1)", "F.pad(scores, (0, 1), value=scores.max().item() + 1)"),
    }[press.__name__]
    missing = [line for line in needs if line not in source]
    if missing or press.forward_hook is not kvpress.presses.base_press.BasePress.forward_hook:
        raise SystemExit(f"FAILED: {press.__name__}'s code changed ({missing or 'forward_hook'}): re-read it")
    if press.__name__ == "SnapKVPress":
        # The window's scores are padded above every other: the newest window_size entries stay.
        return {"<window kept>": press.window_size}
    # The press hooks every attention layer (BasePress.forward_hook, module.layer_idx) and scores with that
    # layer's newest query, mean over its heads: each layer its own; the newest entry is padded to the top.
    return {"<layers>": "each", "<newest entry kept>": 1}


def run(binary, *args):
    done = subprocess.run([binary, "--threads", "1", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"FAILED: {binary} {' '.join(args)}:\n{done.stderr}")
    return done.stdout


def kvbench_defaults(binary):
    policies = {p["name"]: p["knobs"] for p in json.loads(run(binary, "list", "policies", "--json"))}
    allocators = {a["name"]: a["knobs"] for a in json.loads(run(binary, "list", "allocators", "--json"))}
    help_text = run(binary, "run", "--help")
    fields = {}
    for option in ("sinks",):
        found = re.search(rf"--{option} \w+=(\S+)", help_text)
        if not found:
            raise SystemExit(f"FAILED: no default of --{option} in `kvbench run --help`")
        fields[option] = int(found.group(1))
    demo = SOURCE / "models" / "kvbench-demo"
    prompt = ",".join(str(10 + i) for i in range(260))
    recent = {}
    for policy in ("snapkv", "tova"):
        out = json.loads(run(binary, "generate", "--model", str(demo), "--prompt-ids", prompt, "--policy", policy,
                             "--J", "200", "--max-new", "1", "--format", "json"))
        recent[policy] = out["recent"]
    return policies, allocators, fields, recent


def same(a, b):
    if a is dataclasses.MISSING:  # a field without a default: kvbench's knob must be required too (no value)
        return b in ("", None)
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None or isinstance(a, str):
        return a == b and type(a) is type(b)
    return math.isclose(a, b)


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    policies, allocators, fields, recent = kvbench_defaults(sys.argv[1])
    print(f"kvpress {importlib.metadata.version('kvpress')} against {sys.argv[1]}")
    problems, compared = [], set()
    for press_name, (kvbench_name, params) in PRESSES.items():
        press = getattr(kvpress, press_name)
        defaults = {f.name: f.default for f in dataclasses.fields(press)}
        for name, parameter in inspect.signature(press.__init__).parameters.items():  # a hand-written __init__'s too
            if name != "self" and name not in defaults:
                empty = parameter.default is inspect.Parameter.empty
                defaults[name] = dataclasses.MISSING if empty else parameter.default
        if kvbench_name not in policies and kvbench_name not in allocators:
            problems.append(f"{press_name}: kvbench has no policy or allocator {kvbench_name}")
            continue
        mapped = {name for name, _ in params}
        for name in defaults:
            why = NOT_DEFAULTS.get((press_name, name), NOT_DEFAULTS.get(name))
            if why:
                print(f"  --           {press_name}.{name}: not compared ({why})")
            elif name not in mapped:
                problems.append(f"{press_name}.{name} (default {defaults[name]!r}) has no kvbench counterpart "
                                "in PRESSES")
        code = kvpress_code(press) if any(name.startswith("<") for name in mapped) else {}
        for name, target in params:
            if name.startswith("<"):
                kvpress_value = code[name]
            elif name in defaults:
                kvpress_value = defaults[name]
            else:
                problems.append(f"{press_name} has no field {name} any more")
                continue
            shown = "(no default: required)" if kvpress_value is dataclasses.MISSING else repr(kvpress_value)
            if (press_name, name) in SPELLING:
                kvpress_value = SPELLING[(press_name, name)][kvpress_value]
                shown = f"{shown} (kvbench spells it {kvpress_value!r})"
            if name == "beta":  # PyramidKV's first/last layer budget, unclamped
                kvpress_value = 2.0 * kvpress_value - 1.0
                shown = f"{defaults[name]!r} (first/last layer budget 2 beta - 1 = {kvpress_value:g})"
            kind = target[0]
            if kind in ("knob", "allocator"):
                table = policies if kind == "knob" else allocators
                knobs = table.get(target[1], {})
                if target[2] not in knobs:
                    problems.append(f"{press_name}.{name}: {target[1]} has no knob {target[2]}")
                    continue
                kvbench_value, where = knobs[target[2]], f"{target[1]}:{target[2]}"
            elif kind == "field":
                kvbench_value, where = fields[target[1]], f"--{target[1]}"
            elif kind == "recent":
                kvbench_value, where = recent[target[1]], f"{target[1]}'s resolved --recent"
            else:
                kvbench_value, where = target[1], f"{target[2]}"
            compared.add((press_name, name))
            line = f"{press_name}.{name} = {shown}  |  {where} = {kvbench_value!r}"
            entry = ON_PURPOSE.get((press_name, name))
            if same(kvpress_value, kvbench_value):
                print(f"  same         {line}")
                if entry:
                    problems.append(f"{press_name}.{name}: ON_PURPOSE says it differs, but both are {kvbench_value!r}")
            elif entry:
                print(f"  on purpose   {line}\n               ({entry[2]})")
                if not (same(entry[0], kvpress_value) and same(entry[1], kvbench_value)):
                    problems.append(f"{press_name}.{name}: ON_PURPOSE records {entry[0]!r} vs {entry[1]!r}, now "
                                    f"{kvpress_value!r} vs {kvbench_value!r}: re-check the reason")
            else:
                print(f"  DIFFERS      {line}")
                problems.append(f"{press_name}.{name}: kvpress {shown}, kvbench {where} = {kvbench_value!r}")
    # Every knob of kvbench's counterparts has its kvpress parameter, so a new knob gets a line too.
    targets = {(t[1], t[2]) for _, params in PRESSES.values() for _, t in params if t[0] in ("knob", "allocator")}
    for owner in sorted({name for name, _ in PRESSES.values()} | {owner for owner, _ in targets}):
        knobs = policies.get(owner, allocators.get(owner, {}))
        for knob in knobs:
            if (owner, knob) in KVBENCH_ONLY:
                print(f"  kvbench only {owner}:{knob} ({KVBENCH_ONLY[(owner, knob)]})")
            elif (owner, knob) not in targets:
                problems.append(f"{owner}:{knob} (default {knobs[knob]!r}) has no kvpress parameter in PRESSES")
    for key in ON_PURPOSE:
        if key not in compared:
            problems.append(f"ON_PURPOSE entry {key[0]}.{key[1]} was not compared")
    if problems:
        print("FAILED: kvbench's defaults and kvpress's differ where ON_PURPOSE gives no reason, "
              "or the tables are stale:")
        for problem in problems:
            print(f"  {problem}")
        return 1
    print(f"press_defaults: {len(compared)} parameters of {len(PRESSES)} presses compared, "
          f"{len(ON_PURPOSE)} differences on purpose, none else")
    return 0


if __name__ == "__main__":
    sys.exit(main())
