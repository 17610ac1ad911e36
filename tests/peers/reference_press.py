#!/usr/bin/env python3
"""kvpress's presses applied at the end of the prompt, for kvbench's eviction tests
(tests/core/test_kvpress_reference.cpp).

  reference_press.py run CASES.json

CASES.json: a list of {"model": DIR, "prompt": [ids], "press": NAME, "ratio": r, "args": {...},
"new_tokens": n, "output": FILE}. For each, kvpress's press NAME (a class of kvpress 0.5.5, e.g.
"SnapKVPress", with compression_ratio r and the keyword args) compresses transformers' DynamicCache while
the model prefills the prompt (eager attention, float32), exactly as kvpress's pipeline does. FILE gets
JSON: "kept" [L][KV][M], the original positions each layer and KV head kept (ascending), "scores"
[L][KV][N], the press's scores of the full prompt's entries (for telling ties apart), and "generated",
the greedy tokens: the first from the prompt's logits, then one per step from the compressed cache at
positions P, P+1, … (kvbench's --mode prefill_end). Run with the project's environment (.venv/bin/python).
"""
import json
import sys

import kvpress
import torch
from transformers import AutoModelForCausalLM, DynamicCache


def load(path):
    return AutoModelForCausalLM.from_pretrained(path, attn_implementation="eager", dtype=torch.float32).eval()


def run_case(model, case):
    press = getattr(kvpress, case["press"])(compression_ratio=case["ratio"], **case.get("args", {}))
    scored, kept = {}, {}
    score = press.score

    def recording_score(module, hidden_states, keys, *args, **kwargs):
        scores = score(module, hidden_states, keys, *args, **kwargs)
        n_kept = kvpress.presses.scorer_press.compute_n_kept(keys.shape[2], press.compression_ratio)
        scored[module.layer_idx] = scores[0]
        kept[module.layer_idx] = scores[0].topk(n_kept, dim=-1).indices.sort(dim=-1).values  # as compress() keeps
        return scores

    press.score = recording_score
    prompt = torch.tensor([case["prompt"]])
    cache = DynamicCache(config=model.config)
    with torch.no_grad():
        with press(model):
            logits = model(input_ids=prompt, past_key_values=cache, use_cache=True, logits_to_keep=1).logits
        generated = [int(logits[0, -1].argmax())]
        for step in range(case["new_tokens"] - 1):
            position = torch.tensor([[prompt.shape[1] + step]])
            logits = model(input_ids=torch.tensor([[generated[-1]]]), position_ids=position, past_key_values=cache,
                           use_cache=True).logits
            generated.append(int(logits[0, -1].argmax()))
    layers = range(model.config.num_hidden_layers)
    with open(case["output"], "w") as f:
        json.dump({"kept": [kept[l].tolist() for l in layers], "scores": [scored[l].tolist() for l in layers],
                   "generated": generated}, f)


def main():
    if len(sys.argv) != 3 or sys.argv[1] != "run":
        sys.exit(__doc__)
    with open(sys.argv[2]) as f:
        cases = json.load(f)
    models = {}
    for case in cases:
        if case["model"] not in models:
            models[case["model"]] = load(case["model"])
        run_case(models[case["model"]], case)


if __name__ == "__main__":
    main()
