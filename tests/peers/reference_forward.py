#!/usr/bin/env python3
"""Reference forwards and generations from HF transformers for kvbench's model tests
(tests/core/test_hf_reference.cpp).

  reference_forward.py make DIR           random-weight checkpoints, written by transformers itself
                                          (from_config(...).save_pretrained, safetensors), into DIR/<name>
  reference_forward.py forward DIR        make, then DIR/reference.json: per checkpoint, seeded 512-token
                                          prompts and eager logits (float32 and bfloat16) at start positions
                                          0 and 16384, and greedy 128-token generations (model.generate)
                                          from those at 0; KVBENCH_HF_PROMPTS prompts per start (default 2)
  reference_forward.py replay TRACES.json transformers' own DynamicCache, cropped to the positions kvbench
                                          kept at each refresh: the next-token logits of every feed

The checkpoints are the real configs of Llama-3.1-8B (rope_scaling llama3), Llama-3.2-1B (tied
embeddings), Qwen2.5-0.5B (q/k/v biases, tied), Qwen2.5-7B (untied; saved in shards) and Qwen3-0.6B
(q/k-norm, explicit head_dim != hidden/heads), shrunk in depth (2 layers), width (fewer heads, same
query/KV ratio and head_dim; smaller MLP) and vocabulary (1024: prompts are ids, no tokenizer). Weights
are redrawn with scales that keep attention and logits far from flat, and norms and biases away from
their 1/0 initialisation, so every weight matters. Logits go to raw little-endian float32 files [T, V].
Run with the project's environment (.venv/bin/python, made by scripts/setup.sh).
"""
import json
import math
import os
import sys

import torch
from transformers import AutoModelForCausalLM, DynamicCache, LlamaConfig, Qwen2Config, Qwen3Config

VOCAB = 1024
PROMPT = 512
NEW_TOKENS = 128
STARTS = [0, 16384]
PROMPTS_PER_START = int(os.environ.get("KVBENCH_HF_PROMPTS", "2"))  # more for a longer offline comparison


def checkpoint_configs():
    common = dict(vocab_size=VOCAB, num_hidden_layers=2, bos_token_id=None, eos_token_id=None, pad_token_id=None)
    return {
        # meta-llama/Llama-3.1-8B: 32/8 heads of 128, rope_theta 5e5, llama3 scaling x8 from 8192, eps 1e-5.
        "llama-3.1": LlamaConfig(hidden_size=512, intermediate_size=1024, num_attention_heads=4, num_key_value_heads=1,
                                 head_dim=128, max_position_embeddings=131072, rms_norm_eps=1e-5,
                                 rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                               "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
                                 rope_theta=500000.0, tie_word_embeddings=False, **common),
        # meta-llama/Llama-3.2-1B: 32/8 heads of 64, tied, llama3 scaling x32.
        "llama-3.2": LlamaConfig(hidden_size=256, intermediate_size=512, num_attention_heads=4, num_key_value_heads=1,
                                 head_dim=64, max_position_embeddings=131072, rms_norm_eps=1e-5,
                                 rope_scaling={"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                                               "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
                                 rope_theta=500000.0, tie_word_embeddings=True, **common),
        # Qwen/Qwen2.5-0.5B: 14/2 heads of 64, tied, rope_theta 1e6.
        "qwen2.5-tied": Qwen2Config(hidden_size=448, intermediate_size=768, num_attention_heads=7, num_key_value_heads=1,
                                    max_position_embeddings=32768, rms_norm_eps=1e-6, rope_theta=1000000.0,
                                    tie_word_embeddings=True, use_sliding_window=False, **common),
        # Qwen/Qwen2.5-7B: 28/4 heads of 128, untied.
        "qwen2.5-untied": Qwen2Config(hidden_size=896, intermediate_size=512, num_attention_heads=7,
                                      num_key_value_heads=1, max_position_embeddings=32768, rms_norm_eps=1e-6,
                                      rope_theta=1000000.0, tie_word_embeddings=False, use_sliding_window=False,
                                      **common),
        # Qwen/Qwen3-0.6B: 16/8 heads of 128 with hidden 1024 (head_dim explicit, not hidden/heads), tied.
        "qwen3": Qwen3Config(hidden_size=256, intermediate_size=768, num_attention_heads=4, num_key_value_heads=2,
                             head_dim=128, max_position_embeddings=40960, rms_norm_eps=1e-6, rope_theta=1000000.0,
                             tie_word_embeddings=True, **common),
    }


SHARDED = "qwen2.5-untied"


def randomize(model, seed):
    generator = torch.Generator().manual_seed(seed)
    hidden = model.config.hidden_size
    with torch.no_grad():
        for name, p in model.named_parameters():  # a tied embedding is listed once
            noise = torch.randn(p.shape, generator=generator)
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.3 * noise)
            elif name.endswith("bias"):
                p.copy_(0.5 * noise)
            elif "embed_tokens" in name or "lm_head" in name:
                p.copy_(noise * (3.0 / math.sqrt(hidden)))  # logits of std ~3
            else:
                p.copy_(noise / math.sqrt(p.shape[1]))  # attention scores of std ~1


def make(directory):
    os.makedirs(directory, exist_ok=True)
    names = []
    for index, (name, config) in enumerate(checkpoint_configs().items()):
        torch.manual_seed(1000 + index)
        model = AutoModelForCausalLM.from_config(config, attn_implementation="eager", dtype=torch.float32)
        randomize(model, 2000 + index)
        model.save_pretrained(os.path.join(directory, name), max_shard_size="8MB" if name == SHARDED else "2GB")
        names.append(name)
    return names


def load(path, dtype):
    model = AutoModelForCausalLM.from_pretrained(path, attn_implementation="eager", dtype=torch.float32)
    return model.to(dtype).eval()


def write_matrix(path, tensor):
    tensor.detach().to(torch.float32).contiguous().numpy().astype("<f4").tofile(path)


def forward(directory):
    names = make(directory)
    generator = torch.Generator().manual_seed(31)
    cases = []
    for name in names:
        path = os.path.join(directory, name)
        models = {"float32": load(path, torch.float32), "bfloat16": load(path, torch.bfloat16)}
        prompts = [torch.randint(0, VOCAB, (PROMPT,), generator=generator).tolist()
                   for _ in range(PROMPTS_PER_START * len(STARTS))]
        for index, ids in enumerate(prompts):
            start = STARTS[index % len(STARTS)]
            case = {"model": name, "ids": ids, "start": start, "logits": {}}
            for dtype, model in models.items():
                with torch.no_grad():
                    positions = torch.arange(start, start + PROMPT).unsqueeze(0)
                    logits = model(input_ids=torch.tensor([ids]), position_ids=positions, use_cache=False).logits[0]
                file = os.path.join(directory, f"{name}.{index}.{dtype}.bin")
                write_matrix(file, logits)
                case["logits"][dtype] = file
            if start == 0:  # greedy continuation through transformers' own generate()
                with torch.no_grad():
                    out = models["float32"].generate(
                        torch.tensor([ids]), attention_mask=torch.ones(1, PROMPT, dtype=torch.long),
                        max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, do_sample=False, eos_token_id=None,
                        pad_token_id=0, output_logits=True, return_dict_in_generate=True)
                case["generated"] = out.sequences[0, PROMPT:].tolist()
                file = os.path.join(directory, f"{name}.{index}.generate.bin")
                write_matrix(file, torch.cat(out.logits, 0))  # [NEW_TOKENS, V], the logits each token came from
                case["generate_logits"] = file
            cases.append(case)
    with open(os.path.join(directory, "reference.json"), "w") as f:
        json.dump({"vocab": VOCAB, "cases": cases}, f)


def crop(cache, positions, keep):
    """Keeps, in every layer and KV head, the entries at the original positions `keep` ([L][KV][M]);
    `positions` [L, KV, N] are the cache's original positions, updated in place."""
    for layer_index, layer in enumerate(cache.layers):
        held = positions[layer_index]  # [KV, N], ascending
        wanted = torch.tensor(keep[layer_index], dtype=torch.long)  # [KV, M], ascending
        index = torch.searchsorted(held, wanted)
        if not torch.equal(held.gather(1, index.clamp(max=held.shape[1] - 1)), wanted):
            raise SystemExit(f"replay: layer {layer_index} keeps a position the cache does not hold")
        gather = index[None, :, :, None].expand(1, -1, -1, layer.keys.shape[-1])
        layer.keys = layer.keys.gather(2, gather)
        layer.values = layer.values.gather(2, gather)
        positions[layer_index] = wanted


def replay(traces_path):
    """TRACES.json: a list of {"model": DIR, "dtype", "output": FILE, "feeds": [{"ids", "start", "keep"}]};
    "keep" (after that feed; null: none) is [M] positions kept in every layer and head, or [L][KV][M]."""
    with open(traces_path) as f:
        traces = json.load(f)
    models = {}
    for trace in traces:
        key = (trace["model"], trace.get("dtype", "float32"))
        if key not in models:
            models[key] = load(trace["model"], {"float32": torch.float32, "bfloat16": torch.bfloat16}[key[1]])
        replay_one(models[key], trace)


def replay_one(model, trace):
    config = model.config
    cache = DynamicCache(config=config)
    layers, kv_heads = config.num_hidden_layers, config.num_key_value_heads
    positions = None  # [L, KV, N] original positions of the cache entries
    rows = []
    for feed in trace["feeds"]:
        ids, start = feed["ids"], feed["start"]
        new = torch.arange(start, start + len(ids))
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids]), position_ids=new.unsqueeze(0), past_key_values=cache,
                        use_cache=True)
        rows.append(out.logits[0, -1])
        new = new.expand(layers, kv_heads, -1)
        positions = new.clone() if positions is None else torch.cat([positions, new], -1)
        if feed.get("keep") is not None:
            keep = feed["keep"]  # [M] token level, or [L][KV][M] per KV head
            if not isinstance(keep[0], list):
                keep = [[keep] * kv_heads] * layers
            positions = list(positions)
            crop(cache, positions, keep)
            positions = torch.stack(positions)
    write_matrix(trace["output"], torch.stack(rows))


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("make", "forward", "replay"):
        sys.exit(__doc__)
    torch.set_num_threads(int(os.environ.get("KVBENCH_PEER_THREADS", "1")))  # small models: one thread is fastest
    {"make": make, "forward": forward, "replay": replay}[sys.argv[1]](sys.argv[2])


if __name__ == "__main__":
    main()
