#!/usr/bin/env python3
"""kvpress's own pipeline (kvpress 0.5.5's KVPressTextGenerationPipeline, kvpress/pipeline.py) on kvpress-format
rows, the oracle for `kvbench run --pipeline kvpress` (tests/scripts/kvpress_pipeline.sh).

  reference_pipeline.py MODEL ROWS.jsonl CASES.json

MODEL: an HF directory or a GGUF file (float32, eager attention), loaded once. ROWS: JSON lines of kvpress's
RULER set (context, question, answer_prefix). CASES: a list of {"press": a kvpress class name ("SnapKVPress")
or "none" for no press, "ratio": its compression_ratio, "max_new", "compress_questions": as kvpress's
evaluate.py does with it, the question joins the context and the pipeline gets an empty one, "output": OUT}.
Each OUT gets, per row:
"ids", the greedy tokens the pipeline decoded into its answer; "answer"; "context_tokens" and
"question_tokens", the lengths of what preprocess() tokenized; "eos", the ids it stops at. Run with the project's environment
(.venv/bin/python).
"""
import json
import sys

import kvpress
import torch
from kvpress.pipeline import KVPressTextGenerationPipeline
from transformers import AutoTokenizer

from peer_models import gguf_file, load_causal_lm


def load_tokenizer(path):
    gguf = gguf_file(path)
    if gguf is not None:
        return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    return AutoTokenizer.from_pretrained(path)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    model_path, rows_path, cases_path = sys.argv[1:]
    model = load_causal_lm(model_path, attn_implementation="eager", dtype=torch.float32)
    tokenizer = load_tokenizer(model_path)
    pipeline = KVPressTextGenerationPipeline(model=model, tokenizer=tokenizer, device=model.device)
    decoded = []
    decode = tokenizer.decode
    tokenizer.decode = lambda ids, **kwargs: decoded.append([int(i) for i in ids]) or decode(ids, **kwargs)
    eos = model.generation_config.eos_token_id
    eos = eos if isinstance(eos, list) else [eos]
    rows = [json.loads(line) for line in open(rows_path)]
    for case in json.load(open(cases_path)):
        press = None if case["press"] == "none" else getattr(kvpress, case["press"])(compression_ratio=case["ratio"])
        results = []
        for row in rows:
            context, question = row["context"], row["question"]
            if case["compress_questions"]:
                context, question = context + question, ""
            tensors = pipeline.preprocess(context, [question], row["answer_prefix"], max_context_length=10**10)
            with torch.no_grad():
                answer = pipeline(context, question=question, answer_prefix=row["answer_prefix"], press=press,
                                  max_new_tokens=case["max_new"])["answer"]
            results.append({"ids": decoded[-1], "answer": answer, "context_tokens": tensors["context_ids"].shape[1],
                            "question_tokens": tensors["questions_ids"][0].shape[1], "eos": eos})
        with open(case["output"], "w") as f:
            json.dump(results, f)


if __name__ == "__main__":
    main()
