"""kvbench from Python: load a model, generate with eviction, run jobs and sweeps, read results as DataFrames,
and write eviction policies in Python (:class:`kvbench.Policy`) that run everywhere the built-in ones do.

    import kvbench
    model = kvbench.load_model("models/kvbench-demo")
    out = kvbench.generate(model, "Once upon a time", policy="counter-causal", J=32, max_new=20)
    kvbench.run({"model": "models/kvbench-demo", "task": "rare-fact", "policy": "h2o", "J": 64})
    frame = kvbench.results.load("results/*.h5")

The engine is kvbench's C++ (the same library as the `kvbench` command); tensors cross without copies.
"""
import json as _json

import torch  # noqa: F401  (first: the extension runs on the libtorch this torch loads)

from . import _kvbench, results
from ._kvbench import Error
from .policy import KvCache, Policy, ScoringContext, Step, register_policy

__all__ = ["Error", "Policy", "ScoringContext", "Step", "KvCache", "register_policy", "load_model", "generate",
           "run", "sweep", "results", "job_fields", "policy_names", "main"]


def load_model(model, device="cpu", dtype=""):
    """An HF model directory (config.json + safetensors, tokenizer.json for text), a GGUF file (or a directory
    holding one; its vocabulary is the tokenizer), or ``"random:PRESET"``;
    ``dtype``: float32, bfloat16, float16 (default float32 on CPU, bfloat16 on CUDA)."""
    return _kvbench.load_model(str(model), device, dtype or "")


def generate(model, prompt, *, policy="full", system="", chat=False, thinking=True, top_k=0, stop=(), **fields):
    """Generate from one prompt (text, or a list of token ids) with eviction; what ``kvbench generate --format
    json`` prints, as a dict, with each refresh's ``positions_before``, ``kept_positions`` and ``scores`` as
    tensors (rollout 0). ``policy``: a name or spec (``"snapkv:window=32"``) or a :class:`Policy` instance.
    ``fields``: job fields (:func:`job_fields`) — ``J``, ``h``, ``recent``, ``frozen``, ``mode``, ``min_gap``,
    ``sinks``, ``allocator``, ``smooth``, ``keep_span``, ``max_new`` (256), ``temperature`` (0: greedy), ``top_p``,
    ``rollouts``, ``seed``, ``policy_seed``, ``shadow``, ``profile``; model, task and data are not read."""
    text, ids = (prompt, []) if isinstance(prompt, str) else ("", [int(i) for i in prompt])
    job = dict(fields)
    instance, name = None, ""
    if isinstance(policy, Policy):
        instance, name = policy, type(policy).__name__
    else:
        job["policy"] = str(policy)
    record, tensors = _kvbench.generate(model, text, ids, system, chat, thinking, _json.dumps(job), top_k, list(stop),
                                        instance, name)
    out = _json.loads(record)
    for refresh, own in zip(out["refreshes"], tensors):
        refresh.update(own)
    return out


def run(job, *, out="", batch=0, force=False, progress=True, data_root=""):
    """Run one job (a dict of job fields: model, task, policy, J, h, ...; see ``kvbench run --help``) into a
    results file (default ``results/<label>.h5``), resumably; Ctrl-C stops it after the next finished sample
    (``kvbench.Error``), and running it again resumes. Returns ``out``, ``summary``, ``resumed``,
    ``already_complete``, ``held``."""
    return _json.loads(_kvbench.run(_json.dumps(job), str(out), force, progress, batch, str(data_root)))


def sweep(config, *, out_dir="", batch=0, force=False, progress=True, limit=0, sets=(), models_dir="",
          data_root="", dry_run=False):
    """Run a sweep (a config dict, or the path of a sweep config or recipe; see ``kvbench sweep --help``),
    one results file per job, skipping finished ones. Returns a list with each job's outcome (``dry_run``:
    the jobs alone)."""
    is_dict = isinstance(config, dict)
    text = _json.dumps(config) if is_dict else str(config)
    return _json.loads(_kvbench.sweep(text, is_dict, str(out_dir), str(data_root), str(models_dir), list(sets), limit,
                                      force, progress, batch, dry_run))


def job_fields():
    """Every field of a job, ``{name: {"help", "default", "choices", "option"}}``: the keys of the dicts
    :func:`run` takes and results files record (the table the JSON reader, the command line's options and this
    share). ``choices``: the values a string field takes (empty: any); ``option``: its ``kvbench run`` option
    ("" for ``ratio``, which ``--J ratio:R`` sets)."""
    return {f["name"]: {k: f[k] for k in ("help", "default", "choices", "option")}
            for f in _json.loads(_kvbench.job_fields())}


def policy_names():
    """Every policy name kvbench knows: built-in and registered."""
    return _kvbench.policy_names()


def main(argv=None):
    """The ``kvbench`` command line in this process (``python -m kvbench``): Python policies registered here
    (or with ``--plugin FILE.py``) are usable by name. Returns the exit status."""
    from .__main__ import main as _main
    return _main(argv)
