#!/usr/bin/env python3
"""kvpress's own evaluation (evaluation/evaluate.py of the NVIDIA/kvpress repository, which the wheel lacks) on
kvpress-format rows, the oracle for a kvbench sweep of the same grid (tests/scripts/kvpress_evaluate.sh).

  reference_evaluate.py EVALUATION_DIR MODEL ROWS.jsonl CASES.json

EVALUATION_DIR: a checkout's evaluation/ directory (evaluate.py, evaluate_registry.py, benchmarks/), run as it is.
MODEL: an HF directory or a GGUF file, loaded once per attention kind (float32 on the CPU). ROWS: JSON lines in
kvpress's RULER format (`kvbench datasets export`). CASES: a list of {"press_name" (a PRESS_REGISTRY name),
"compression_ratio", "query_aware", "max_new_tokens", "output": OUT}, with "threshold" for DMSPress (the registry's
kvzap_linear and kvzap_mlp) and "surrogates" for KVzapPress: a directory whose kvzap_linear/ and kvzap_mlp/ hold
seeded random surrogates (written there by reference_press.py's kvzap_surrogates unless present) in place of the
hub's nvidia/KVzap-*. Each case runs evaluate.py's
EvaluationRunner.run_evaluation with dataset "ruler" and two things replaced, as no network is here: the dataset
(load_dataset reads ROWS) and the model pipeline (_setup_model_pipeline builds kvpress's pipeline on MODEL on the
CPU: eager attention for ObservedAttentionPress as evaluate.py asks, sdpa otherwise, flash-attn being absent).
A press that draws random numbers (Compactor's sketch) draws from torch's generator, which evaluate.py seeds once
per run; with "reseed": S in a case torch is seeded S again before each row, as kvbench seeds each sample.
OUT gets: "predictions" (predicted_answer by row index, as predictions.csv has it), "scores" (each row scored
alone by evaluate.py's RULER metric, 0..100) and "metrics" (metrics.json). Run with .venv/bin/python.
"""
import glob
import importlib.util
import json
import os
import sys
import tempfile
import types

import pandas as pd
import torch


def absent_module(name):
    """A stand-in whose every attribute is a do-nothing callable (scorers build theirs at import)."""
    class Absent:
        def __init__(self, *args, **kwargs):
            pass

        def __call__(self, *args, **kwargs):
            raise RuntimeError(f"{name} is not installed: only RULER's scorer runs here")

    module = types.ModuleType(name)
    def attribute(attribute_name):
        if attribute_name.startswith("__"):
            raise AttributeError(attribute_name)
        return Absent

    module.__getattr__ = attribute
    return module


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    evaluation_dir, model_path, rows_path, cases_path = sys.argv[1:]
    sys.path.insert(0, evaluation_dir)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    # evaluate_registry.py imports every benchmark's scorer; those of LongBench, LooGLE and InfiniteBench need
    # packages the environment lacks. Only RULER's scorer runs here, so absent ones are left as empty modules.
    for name in ("jieba", "fuzzywuzzy", "rouge", "bert_score"):
        if importlib.util.find_spec(name) is None:
            sys.modules[name] = absent_module(name)
    # By its path: the name `evaluate` is also HF's evaluate package, which the environment may hold.
    spec = importlib.util.spec_from_file_location("kvpress_evaluate", os.path.join(evaluation_dir, "evaluate.py"))
    evaluate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(evaluate)
    from benchmarks.ruler.calculate_metrics import calculate_metrics
    from kvpress import FinchPress, ObservedAttentionPress
    from kvpress.presses import kvzip_press
    from kvpress.presses.kvzap_press import KVzapPress
    from kvpress.pipeline import KVPressTextGenerationPipeline
    from peer_models import load_causal_lm
    from reference_pipeline import load_tokenizer
    from reference_press import kvzap_surrogates

    class Rows:
        def to_pandas(self):
            return pd.read_json(rows_path, lines=True, dtype=False)

    evaluate.load_dataset = lambda *args, **kwargs: Rows()
    tokenizer = load_tokenizer(model_path)
    # KVzipPress loads the model's tokenizer from the hub by the model's name: the same one instead.
    kvzip_press.AutoTokenizer = type("Hub", (), {"from_pretrained": staticmethod(lambda *a, **k: tokenizer)})
    pipelines = {}

    def setup_pipeline(runner):
        attention = "eager" if isinstance(runner.press, ObservedAttentionPress) else "sdpa"
        # FinchPress adds its delimiter to the tokenizer and the embeddings: a model and tokenizer of its own.
        key = (attention, isinstance(runner.press, FinchPress))
        if key not in pipelines:
            model = load_causal_lm(model_path, attn_implementation=attention, dtype=torch.float32)
            own = load_tokenizer(model_path) if key[1] else tokenizer
            pipelines[key] = KVPressTextGenerationPipeline(model=model, tokenizer=own, device=model.device)
        runner.pipeline = pipelines[key]

    evaluate.EvaluationRunner._setup_model_pipeline = setup_pipeline
    reseed = {"seed": None}
    call = KVPressTextGenerationPipeline.__call__

    def reseeded(self, *args, **kwargs):  # evaluate.py calls the pipeline once per row (each context differs)
        if reseed["seed"] is not None:
            torch.manual_seed(reseed["seed"])
        return call(self, *args, **kwargs)

    KVPressTextGenerationPipeline.__call__ = reseeded
    surrogates = {"directory": None}

    def surrogates_init(self, model):  # the case's surrogates, not the hub's
        self.kvzap_model = kvzap_surrogates(model, os.path.join(surrogates["directory"], f"kvzap_{self.model_type}"),
                                            self.model_type)

    KVzapPress.post_init_from_model = surrogates_init
    for case in json.load(open(cases_path)):
        with tempfile.TemporaryDirectory() as output_dir:
            config = evaluate.EvaluationConfig(
                dataset="ruler", model=model_path, device="cpu", press_name=case["press_name"],
                compression_ratio=case["compression_ratio"], query_aware=case["query_aware"],
                max_new_tokens=case["max_new_tokens"], threshold=case.get("threshold"), output_dir=output_dir,
                log_level="WARNING")
            reseed["seed"] = case.get("reseed")
            surrogates["directory"] = case.get("surrogates")
            evaluate.EvaluationRunner(config).run_evaluation()
            predictions = pd.read_csv(glob.glob(f"{output_dir}/**/predictions.csv", recursive=True)[0],
                                      dtype={"predicted_answer": str}, keep_default_na=False)
            metrics = json.load(open(glob.glob(f"{output_dir}/**/metrics.json", recursive=True)[0]))
        predictions = predictions.sort_values("index")
        rows = pd.read_json(rows_path, lines=True, dtype=False).set_index("index")
        scores = []
        for _, row in predictions.iterrows():  # evaluate.py's metric, one row at a time
            alone = pd.DataFrame({"task": [row["task"]], "predicted_answer": [row["predicted_answer"]],
                                  "answer": [rows.loc[row["index"], "answer"]]})
            scores.append(calculate_metrics(alone)[row["task"]]["string_match"])
        with open(case["output"], "w") as f:
            json.dump({"predictions": predictions["predicted_answer"].astype(str).tolist(), "scores": scores,
                       "metrics": metrics}, f)


if __name__ == "__main__":
    main()
