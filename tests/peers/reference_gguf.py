#!/usr/bin/env python3
"""GGUF references for kvbench's GGUF loading (tests/core/test_gguf_reference.cpp), from the `gguf` package
(gguf-py, llama.cpp's own Python reader/writer) and transformers' GGUF loader, which dequantizes with it.

  reference_gguf.py make DIR                  DIR/blocks.gguf: one [3, 512] tensor of random blocks per type
                                              kvbench reads (F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q4_K Q5_K
                                              Q6_K): random bytes, with every fp16 scale a random finite value
                                              (subnormals included); DIR/tiny-llama.gguf, tiny-qwen2.gguf,
                                              tiny-qwen3.gguf: 2-layer models (GGUFWriter) with random weights,
                                              their matrices in mixed types (gguf.quants.quantize where gguf-py
                                              quantizes; random blocks with small finite scales for K-quants)
  reference_gguf.py dequantize FILE OUT       OUT (safetensors, float32): gguf.quants.dequantize of every tensor
                                              of FILE under its GGUF name, as stored (q/k not un-permuted)
  reference_gguf.py tensors FILE OUT          OUT (safetensors, float32): transformers' model loaded from FILE
                                              (from_pretrained(gguf_file=...)), every tensor under its HF name
                                              (a tied lm_head left out, as HF saves tied models)
  reference_gguf.py logits FILE IDS OUT       raw little-endian float32 logits [T, V] of transformers' float32
                                              eager forward of IDS (comma-separated token ids)
  reference_gguf.py greedy FILE N OUT         OUT (JSON): 3 chat prompts tokenized by transformers' GGUF
                                              tokenizer, and transformers' greedy N-token continuations
                                              (generate, do_sample=False, eager, float32)

Run with the project's environment (.venv/bin/python: transformers 5.2.0, gguf 0.19.0).
"""
import json
import os
import sys

import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import GGML_QUANT_SIZES, GGUFReader, GGUFWriter
from gguf.quants import dequantize, quantize

ROWS, ROW = 3, 512
# Byte offsets of the fp16 scales (d, and dmin or m) in each block type (ggml-common.h's block structs).
SCALE_OFFSETS = {Q.Q4_0: [0], Q.Q4_1: [0, 2], Q.Q5_0: [0], Q.Q5_1: [0, 2], Q.Q8_0: [0],
                 Q.Q4_K: [0, 2], Q.Q5_K: [0, 2], Q.Q6_K: [208]}
QUANTIZABLE = {Q.F32, Q.F16, Q.BF16, Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0}  # gguf-py quantizes these


def random_finite_halves(rng, n):
    bits = rng.integers(0, 1 << 16, size=n, dtype=np.uint16)
    return np.where((bits & 0x7C00) == 0x7C00, bits & 0x83FF, bits).astype(np.uint16)  # inf/NaN → subnormal


def random_blocks(rng, qtype, rows, row, halves):
    """Random bytes of a [rows, row] tensor of `qtype`, each fp16 scale replaced by one of `halves()`."""
    block, size = GGML_QUANT_SIZES[qtype]
    blocks = rng.integers(0, 256, size=(rows * row // block, size), dtype=np.uint8)
    for offset in SCALE_OFFSETS[qtype]:
        blocks[:, offset:offset + 2] = halves(len(blocks)).view(np.uint8).reshape(-1, 2)
    return blocks.reshape(rows, row // block * size)


def random_floats(rng, qtype):
    if qtype == Q.F32:
        bits = rng.integers(0, 1 << 32, size=(ROWS, ROW), dtype=np.uint32)
        return np.where((bits & 0x7F800000) == 0x7F800000, bits & 0x807FFFFF, bits).view(np.float32)
    if qtype == Q.F16:
        return random_finite_halves(rng, ROWS * ROW).view(np.float16).reshape(ROWS, ROW)
    bits = rng.integers(0, 1 << 16, size=ROWS * ROW, dtype=np.uint16)  # BF16
    bits = np.where((bits & 0x7F80) == 0x7F80, bits & 0x807F, bits).astype(np.uint16)
    return bits.view(np.uint8).reshape(ROWS, ROW * 2)


def write_blocks(path, rng):
    writer = GGUFWriter(path, "llama")
    for qtype in [Q.F32, Q.F16, Q.BF16, *SCALE_OFFSETS]:
        if qtype in SCALE_OFFSETS:
            data = random_blocks(rng, qtype, ROWS, ROW, lambda n: random_finite_halves(rng, n))
        else:
            data = random_floats(rng, qtype)
        writer.add_tensor(f"blocks.{qtype.name}", data, raw_dtype=qtype if data.dtype == np.uint8 else None)
    finish(writer)


def finish(writer):
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


# Tiny models: vocab 320, hidden 256, MLP 512, 2 layers, 4 query / 2 KV heads (qwen3: head_dim 128, as
# transformers' Qwen3Config assumes for GGUF files, which carry no head_dim it reads).
VOCAB, HIDDEN, INTER, LAYERS, HEADS, KV_HEADS = 320, 256, 512, 2, 4, 2
# Each matrix's type, by layer: every type kvbench reads appears in a real model's place.
LAYER_TYPES = [
    {"attn_q": Q.Q4_0, "attn_k": Q.Q4_1, "attn_v": Q.Q5_0, "attn_output": Q.Q5_1,
     "ffn_gate": Q.Q8_0, "ffn_up": Q.Q4_K, "ffn_down": Q.Q5_K},
    {"attn_q": Q.Q6_K, "attn_k": Q.F16, "attn_v": Q.BF16, "attn_output": Q.F32,
     "ffn_gate": Q.Q4_K, "ffn_up": Q.Q6_K, "ffn_down": Q.Q8_0},
]
# Small fp16 scales for random K-quant blocks, so that their values are weights' size (~0.05).
K_SCALE = {Q.Q4_K: 2e-4, Q.Q5_K: 1e-4, Q.Q6_K: 1e-5}


def matrix(rng, qtype, rows, columns):
    if qtype in QUANTIZABLE:
        values = (rng.standard_normal((rows, columns)) * 0.08).astype(np.float32)
        data = quantize(values, qtype)
        return data, (qtype if data.dtype == np.uint8 else None)
    halves = lambda n: (K_SCALE[qtype] * rng.uniform(0.5, 1.5, n)).astype(np.float16).view(np.uint16)
    return random_blocks(rng, qtype, rows, columns, halves), qtype


def write_tiny(path, arch, rng):
    head_dim = 128 if arch == "qwen3" else HIDDEN // HEADS
    writer = GGUFWriter(path, arch)
    writer.add_name(f"tiny {arch}")
    writer.add_block_count(LAYERS)
    writer.add_context_length(4096)
    writer.add_embedding_length(HIDDEN)
    writer.add_feed_forward_length(INTER)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_key_length(head_dim)
    writer.add_value_length(head_dim)
    writer.add_rope_dimension_count(head_dim)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_freq_base(10000.0)
    writer.add_vocab_size(VOCAB)
    norm = lambda n: (1.0 + 0.3 * rng.standard_normal(n)).astype(np.float32)
    bias = lambda n: (0.3 * rng.standard_normal(n)).astype(np.float32)
    data, raw = matrix(rng, Q.Q8_0, VOCAB, HIDDEN)
    writer.add_tensor("token_embd.weight", data, raw_dtype=raw)
    writer.add_tensor("output_norm.weight", norm(HIDDEN))
    if arch != "qwen2":  # qwen2's head stays tied
        data, raw = matrix(rng, Q.Q6_K, VOCAB, HIDDEN)
        writer.add_tensor("output.weight", data, raw_dtype=raw)
    shapes = {"attn_q": (HEADS * head_dim, HIDDEN), "attn_k": (KV_HEADS * head_dim, HIDDEN),
              "attn_v": (KV_HEADS * head_dim, HIDDEN), "attn_output": (HIDDEN, HEADS * head_dim),
              "ffn_gate": (INTER, HIDDEN), "ffn_up": (INTER, HIDDEN), "ffn_down": (HIDDEN, INTER)}
    for layer, types in enumerate(LAYER_TYPES):
        p = f"blk.{layer}."
        writer.add_tensor(p + "attn_norm.weight", norm(HIDDEN))
        writer.add_tensor(p + "ffn_norm.weight", norm(HIDDEN))
        for name, qtype in types.items():
            data, raw = matrix(rng, qtype, *shapes[name])
            writer.add_tensor(p + name + ".weight", data, raw_dtype=raw)
        if arch == "qwen2":
            for name in ["attn_q", "attn_k", "attn_v"]:
                writer.add_tensor(p + name + ".bias", bias(shapes[name][0]))
        if arch == "qwen3":
            writer.add_tensor(p + "attn_q_norm.weight", norm(head_dim))
            writer.add_tensor(p + "attn_k_norm.weight", norm(head_dim))
    finish(writer)


def make(directory):
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(20261206)
    write_blocks(os.path.join(directory, "blocks.gguf"), rng)
    for arch in ["llama", "qwen2", "qwen3"]:
        write_tiny(os.path.join(directory, f"tiny-{arch}.gguf"), arch, rng)


def save(tensors, out):
    import torch
    from safetensors.torch import save_file
    save_file({name: torch.from_numpy(np.array(t)) if isinstance(t, np.ndarray) else t.contiguous()
               for name, t in tensors.items()}, out)


def dequantize_file(path, out):
    reader = GGUFReader(path)
    tensors = {}
    for t in reader.tensors:
        shape = tuple(int(d) for d in reversed(t.shape))  # ggml's dims reversed: PyTorch's order
        tensors[t.name] = dequantize(t.data, t.tensor_type).astype(np.float32, copy=False).reshape(shape)
    save(tensors, out)


def load_model(path):
    import torch
    from peer_models import load_causal_lm
    return load_causal_lm(path, dtype=torch.float32, attn_implementation="eager")


def hf_tensors(path, out):
    model = load_model(path)
    state = model.state_dict()
    embed = state["model.embed_tokens.weight"]
    tensors = {name: t for name, t in state.items()
               if not (name == "lm_head.weight" and t.data_ptr() == embed.data_ptr())}
    save(tensors, out)


def logits(path, ids, out):
    import torch
    model = load_model(path)
    with torch.no_grad():
        result = model(torch.tensor([[int(i) for i in ids.split(",")]])).logits[0]
    result.float().numpy().astype("<f4").tofile(out)


PROMPTS = ["What is the capital of France?", "Write a haiku about the sea.",
           "Explain in one sentence why the sky is blue."]


def greedy(path, new_tokens, out):
    import torch
    from transformers import AutoTokenizer
    directory, name = os.path.split(os.path.abspath(path))
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=name)
    model = load_model(path)
    model.generation_config.eos_token_id = None  # exactly N tokens, each the plain argmax (no end-of-text stop)
    cases = []
    for prompt in PROMPTS:
        ids = tokenizer.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                            tokenize=True, return_dict=False)
        prompt_ids = torch.tensor([ids])
        with torch.no_grad():  # an explicit mask: generate() would otherwise mask the prompt's pad-id tokens (<|im_end|>)
            output = model.generate(prompt_ids, attention_mask=torch.ones_like(prompt_ids), max_new_tokens=new_tokens,
                                    do_sample=False, pad_token_id=tokenizer.eos_token_id)
        cases.append({"prompt": prompt, "ids": list(map(int, ids)), "generated": output[0, len(ids):].tolist()})
    with open(out, "w") as f:
        json.dump({"cases": cases}, f)


def main():
    command, args = sys.argv[1], sys.argv[2:]
    commands = {"make": make, "dequantize": dequantize_file, "tensors": hf_tensors, "logits": logits,
                "greedy": lambda path, n, out: greedy(path, int(n), out)}
    if command not in commands:
        sys.exit(f"unknown command {command}; one of {', '.join(commands)}")
    commands[command](*args)


if __name__ == "__main__":
    main()
