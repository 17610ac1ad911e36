#!/usr/bin/env python3
"""kvpress's own pipeline (kvpress 0.5.5's KVPressTextGenerationPipeline, kvpress/pipeline.py) on kvpress-format
rows, the oracle for `kvbench run --pipeline kvpress` (tests/scripts/kvpress_pipeline.sh).

  reference_pipeline.py MODEL ROWS.jsonl PRESS RATIO MAX_NEW COMPRESS_QUESTIONS OUT.json

MODEL: an HF directory or a GGUF file (float32, eager attention). ROWS: JSON lines of kvpress's RULER set
(context, question, answer_prefix). PRESS: a kvpress class name ("SnapKVPress"), or "none" for no press;
RATIO its compression_ratio. COMPRESS_QUESTIONS (0 or 1): as kvpress's evaluate.py does with
compress_questions, the question joins the context and the pipeline gets an empty one. OUT gets, per row:
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
    if len(sys.argv) != 8:
        sys.exit(__doc__)
    model_path, rows_path, press_name, ratio, max_new, compress_questions, out = sys.argv[1:]
    model = load_causal_lm(model_path, attn_implementation="eager", dtype=torch.float32)
    tokenizer = load_tokenizer(model_path)
    pipeline = KVPressTextGenerationPipeline(model=model, tokenizer=tokenizer, device=model.device)
    press = None if press_name == "none" else getattr(kvpress, press_name)(compression_ratio=float(ratio))
    decoded = []
    decode = tokenizer.decode
    tokenizer.decode = lambda ids, **kwargs: decoded.append([int(i) for i in ids]) or decode(ids, **kwargs)
    eos = model.generation_config.eos_token_id
    eos = eos if isinstance(eos, list) else [eos]
    results = []
    for line in open(rows_path):
        row = json.loads(line)
        context, question = row["context"], row["question"]
        if compress_questions == "1":
            context, question = context + question, ""
        tensors = pipeline.preprocess(context, [question], row["answer_prefix"], max_context_length=10**10)
        with torch.no_grad():
            answer = pipeline(context, question=question, answer_prefix=row["answer_prefix"], press=press,
                              max_new_tokens=int(max_new))["answer"]
        results.append({"ids": decoded[-1], "answer": answer, "context_tokens": tensors["context_ids"].shape[1],
                        "question_tokens": tensors["questions_ids"][0].shape[1], "eos": eos})
    with open(out, "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
