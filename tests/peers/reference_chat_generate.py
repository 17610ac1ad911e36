#!/usr/bin/env python3
"""Greedy chat generation by transformers on a GGUF model, for kvbench's real-model test
(tests/core/test_real_model.cpp).

  reference_chat_generate.py FILE.gguf TOKENIZER_DIR CASES.json

TOKENIZER_DIR: the tokenizer the GGUF was converted from (reference_gguf_tokenizer.py writes it; transformers'
own GGUF tokenizer conversion changes SmolLM2's pipeline and end token). CASES.json: {"prompts": [text, ...],
"max_new": n}. For each prompt, the user turn through the chat template (apply_chat_template, generation
prompt added), transformers' model from the GGUF dequantized to float32 (eager attention), greedy until the
tokenizer's eos_token. Prints one JSON line per prompt: {"prompt_ids", "generated", "text"}.
"""
import json
import sys

import torch
from transformers import AutoTokenizer

from peer_models import load_causal_lm


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    gguf, tokenizer_dir, cases_file = sys.argv[1:]
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    model = load_causal_lm(gguf, attn_implementation="eager", dtype=torch.float32)
    with open(cases_file) as f:
        cases = json.load(f)
    for prompt in cases["prompts"]:
        ids = tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=True,
                                            add_generation_prompt=True, return_dict=False)
        prompt = torch.tensor([ids])
        with torch.no_grad():  # the mask explicit: the prompt's <|im_end|> is also the pad id
            out = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=cases["max_new"],
                                 do_sample=False, eos_token_id=tokenizer.eos_token_id,
                                 pad_token_id=tokenizer.eos_token_id)
        generated = out[0, len(ids):].tolist()
        print(json.dumps({"prompt_ids": ids, "generated": generated,
                          "text": tokenizer.decode(generated, skip_special_tokens=True)}))


if __name__ == "__main__":
    main()
