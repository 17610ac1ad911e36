#!/usr/bin/env python3
"""The counter-causal paper's own code (../shared/reference/counter_causal, hooks.py) run on cases from
kvbench's `reference` profile test (tests/core/test_counter_causal_reference.cpp).

  reference_counter_causal.py make DIR      random-weight checkpoints written by transformers itself into
                                            DIR/<name> (tests/peers/reference_forward.py's shrunk real
                                            configs: Qwen2.5 tied, Llama-3.1 with llama3 rope scaling, Qwen3)
  reference_counter_causal.py hooks CASES   runs every case of CASES.json
  reference_counter_causal.py tasks JOBS    runs tasks.py's task runners on every job of JOBS.json

CASES.json: a list of {"model": DIR or FILE.gguf, "prompt": [ids], "hook": sliding|importance|h2o|counter_causal|
counter_fast, "J", "h", "recent" (null: evaluate.py's default), "frozen", "min_gap", "mode": chunked|
prefill_end, "max_new", "eos" (an id or null), "output": FILE}. Each runs `generate_with_kv_hook` with the
hook evaluate.py's build_hook makes (min_gap passed to the counter-causal hooks, which take it; h2o's
recent defaults to J/2, the others' to 0). One hook object serves all cases of the same "group" key in
order, as evaluate.py serves a dataset (h2o's accumulator leaks from one into the next). FILE gets JSON:
"generated" (the token ids the loop generated) and "calls", one per hook call: {"size_before", "kept"} with
the original positions the cache holds after the call.

JOBS.json: a list of {"task": math500|longhealth|qasper|locomo, "model": DIR (with its tokenizer), "data": FILE
in the task's published format, "hook", "J", "h" (null: J/4), "recent" (null), "auto_frozen": bool, "mode",
"max_new", "output": FILE}. Each runs evaluate.py's steps (its defaults, --auto_frozen, build_hook) and the
task's runner over every sample of FILE with one hook, as evaluate.py runs a dataset; the downloads are
served from FILE. FILE gets JSON: "frozen", "J" (after --auto_frozen), and per sample "prompt_ids",
"generated", "pred" and "score" (the runner's correct, f1 or score).
Run with the project's environment (.venv/bin/python).
"""
import json
import os
import sys

os.environ.setdefault("TQDM_DISABLE", "1")
import torch  # noqa: E402
import transformers  # noqa: E402,F401  (before hooks.py, as the reference's README says)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_forward  # noqa: E402
from peer_models import load_causal_lm  # noqa: E402


def reference_dir():
    shared = os.environ.get("KVBENCH_SHARED") or os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared")
    return os.path.join(shared, "reference", "counter_causal")


sys.path.insert(0, reference_dir())
import hooks  # noqa: E402

CHECKPOINTS = ["qwen2.5-tied", "llama-3.1", "qwen3"]


def make(directory):
    os.makedirs(directory, exist_ok=True)
    configs = reference_forward.checkpoint_configs()
    for index, name in enumerate(CHECKPOINTS):
        torch.manual_seed(3000 + index)
        model = transformers.AutoModelForCausalLM.from_config(configs[name], dtype=torch.float32)
        reference_forward.randomize(model, 4000 + index)
        model.save_pretrained(os.path.join(directory, name))


class IdTokenizer:
    """What generate_with_kv_hook reads of a tokenizer: eos_token_id, and decode (which here records the ids)."""

    def __init__(self, eos):
        self.eos_token_id = eos
        self.decoded = None

    def decode(self, ids, skip_special_tokens=True):
        self.decoded = list(ids)
        return ""


def build_hook(case, model):
    """evaluate.py's build_hook, plus min_gap for the counter-causal hooks."""
    J, frozen, recent, gap = case["J"], case["frozen"], case["recent"], case["min_gap"]
    name = case["hook"]
    if name == "sliding":
        return hooks.sliding_window_hook(window_size=J, frozen_size=frozen)
    if name == "importance":
        return hooks.importance_eviction_hook(cache_size=J, frozen_size=frozen)
    if name == "h2o":
        return hooks.h2o_eviction_hook(cache_size=J, recent_size=recent if recent is not None else J // 2,
                                       frozen_size=frozen)
    make_hook = hooks.counter_causal_hook if name == "counter_causal" else hooks.counter_causal_fast_hook
    return make_hook(model, cache_size=J, recent_size=recent or 0, frozen_size=frozen, min_gap=gap)


def recorded(hook, calls):
    def wrapped(state):
        size_before = state.tok.shape[1]
        state = hook(state)
        calls.append({"size_before": size_before, "kept": state.pos[0].tolist()})
        return state
    return wrapped


def run(cases):
    models, groups = {}, {}
    for case in cases:
        if case["model"] not in models:
            models[case["model"]] = load_causal_lm(case["model"], dtype=torch.float32)
        model = models[case["model"]]
        key = case.get("group") or id(case)
        if key not in groups:
            groups[key] = build_hook(case, model)
        calls = []
        tokenizer = IdTokenizer(case["eos"])
        hooks.generate_with_kv_hook(model, tokenizer, torch.tensor([case["prompt"]]), max_new_tokens=case["max_new"],
                                    chunk_size=case["h"], kv_hook=recorded(groups[key], calls),
                                    refresh_mode=case["mode"])
        with open(case["output"], "w") as f:
            json.dump({"generated": tokenizer.decoded, "calls": calls}, f)


def serve_downloads(tasks, job):
    """tasks.py downloads its data; here each download is the job's file, in the format it would fetch."""
    import io
    import tarfile
    import types as pytypes

    with open(job["data"], "rb") as f:
        raw = f.read()
    if job["task"] == "math500":
        rows = [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
        tasks.load_dataset = lambda *a, **k: rows
        return
    content = raw
    if job["task"] == "qasper":  # a .tgz holding qasper-dev-v0.3.json
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            info = tarfile.TarInfo(tasks._QASPER_DEV_FILE)
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))
        content = buffer.getvalue()
    response = pytypes.SimpleNamespace(content=content, json=lambda: json.loads(raw), raise_for_status=lambda: None)
    requests = pytypes.ModuleType("requests")
    requests.get = lambda *a, **k: response
    sys.modules["requests"] = requests


class RecordingTokenizer:
    """The job's tokenizer, recording each prompt's ids and the ids each generation decodes last."""

    def __init__(self, tokenizer):
        self.inner, self.prompts, self.last_decoded = tokenizer, [], None

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def __call__(self, *args, **kwargs):
        encoded = self.inner(*args, **kwargs)
        self.prompts.append(encoded["input_ids"][0].tolist())
        return encoded

    def decode(self, ids, **kwargs):
        self.last_decoded = list(ids)
        return self.inner.decode(ids, **kwargs)


def run_tasks(jobs):
    import types as pytypes

    stand_in = pytypes.ModuleType("datasets")
    stand_in.load_dataset = None
    sys.modules["datasets"] = stand_in
    import tasks

    for job in jobs:
        serve_downloads(tasks, job)
        model = transformers.AutoModelForCausalLM.from_pretrained(job["model"], dtype=torch.float32).eval()
        tokenizer = RecordingTokenizer(transformers.AutoTokenizer.from_pretrained(job["model"]))
        J, frozen = job["J"], 0
        if job["auto_frozen"]:  # evaluate.py's --auto_frozen
            system = {"math500": tasks.MATH500_SYSTEM, "longhealth": tasks.LONGHEALTH_SYSTEM,
                      "qasper": tasks.QASPER_SYSTEM,
                      "locomo": tasks.LOCOMO_SYSTEM.format(speaker1="", speaker2="")}[job["task"]]
            frozen = len(tokenizer.encode(system))
            J -= frozen
        case = {"hook": job["hook"], "J": J, "frozen": frozen, "recent": job["recent"], "min_gap": 0}
        generated = []
        generate = tasks.generate_with_kv_hook

        def recording_generate(*args, **kwargs):
            text = generate(*args, **kwargs)
            generated.append(tokenizer.last_decoded)
            return text

        tasks.generate_with_kv_hook = recording_generate
        common = dict(model=model, tokenizer=tokenizer, kv_hook=build_hook(case, model),
                      max_new_tokens=job["max_new"], chunk_size=job["h"] or job["J"] // 4, refresh_mode=job["mode"])
        runner = {"math500": tasks.run_math500_task, "longhealth": tasks.run_longhealth_task,
                  "qasper": tasks.run_qasper_task, "locomo": tasks.run_locomo_task}[job["task"]]
        if job["task"] == "locomo":
            common["data_path"] = job["data"]
        results = runner(**common)[0]
        tasks.generate_with_kv_hook = generate
        samples = [{"prompt_ids": p, "generated": g, "pred": r.get("pred"),
                    "score": float(r["correct"] if "correct" in r else r["f1"] if "f1" in r else r["score"])}
                   for p, g, r in zip(tokenizer.prompts, generated, results)]
        with open(job["output"], "w") as f:
            json.dump({"frozen": frozen, "J": J, "samples": samples}, f)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("make", "hooks", "tasks"):
        sys.exit(__doc__)
    torch.set_num_threads(1)
    if sys.argv[1] == "make":
        make(sys.argv[2])
        return
    with open(sys.argv[2]) as f:
        cases = json.load(f)
    run(cases) if sys.argv[1] == "hooks" else run_tasks(cases)


if __name__ == "__main__":
    main()
