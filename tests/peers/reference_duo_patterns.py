#!/usr/bin/env python3
"""kvpress's DuoAttention head scores computed on the fly (duo_attention_on_the_fly, DuoAttentionPress(
on_the_fly_scoring=True)), for tests/scripts/duo_patterns.sh.

  reference_duo_patterns.py MODEL TEXTS.jsonl LENGTH OUT.tsv

MODEL: an HF directory or a GGUF file (float32 on the CPU). kvpress draws 50 chapters of BookSum from the hub and
loads the model's tokenizer from the hub; here every text of TEXTS ({"text": ...} lines) stands for the chapters
(its sample of as many rows as there are: all of them, in its seeded order) and the model's own tokenizer for the
hub's. That one, read from a GGUF by transformers, prepends BOS to a text although the GGUF says add_bos_token false
(the hub's SmolLM2 tokenizer adds nothing): it tokenizes the texts without special tokens here, as the hub's would. OUT: a row per layer, a tab-separated score per KV head. Run with .venv/bin/python.
"""
import json
import sys

import pandas as pd
import torch
from kvpress.presses import duo_attention_press

from peer_models import load_causal_lm
from reference_pipeline import load_tokenizer


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    model_path, texts_path, length, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    texts = [json.loads(line)["text"] for line in open(texts_path) if line.strip()]
    chapters = pd.DataFrame({"chapter": texts})
    duo_attention_press.load_dataset = lambda *args, **kwargs: type("Split", (), {"to_pandas": lambda self: chapters})()
    tokenizer = load_tokenizer(model_path)

    def hub_tokenizer(text, **kwargs):
        return tokenizer(text, add_special_tokens=False, **kwargs)

    duo_attention_press.AutoTokenizer = type("Hub", (), {"from_pretrained": staticmethod(lambda *a, **k: hub_tokenizer)})
    model = load_causal_lm(model_path, attn_implementation="sdpa", dtype=torch.float32)
    scores = duo_attention_press.duo_attention_on_the_fly.__wrapped__(model, num_samples=len(texts), q_len=length)
    with open(out, "w") as f:
        f.writelines("\t".join(repr(float(x)) for x in row) + "\n" for row in scores)


if __name__ == "__main__":
    main()
