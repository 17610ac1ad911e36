#!/usr/bin/env python3
"""kvpress's presses applied at the end of the prompt, for kvbench's eviction tests
(tests/core/test_kvpress_reference.cpp).

  reference_press.py run CASES.json

CASES.json: a list of {"model": DIR or FILE.gguf, "prompt": [ids], "press": NAME, "ratio": r, "args": {...},
"new_tokens": n, "output": FILE}, optionally with "inner": {"press": NAME, "args": {...}} and "seed" (torch's
generator is seeded with it before the prefill, for the presses that draw: LeverageScorePress, CompactorPress;
default 0); QFilterPress's "args" may hold "filters": a directory where seeded random filters are saved (unless
present) and read from, in place of the hub's; DuoAttentionPress's "patterns": a directory for seeded random
patterns (sink 4, recent 60), in place of DuoAttention's repository; KVzapPress's (also wrapped) "surrogates": a
directory for a seeded random KVzapModel (hidden_dim 16 for "mlp"), in place of the hub's nvidia/KVzap-*; DMSPress
wraps its press as the others do, its "args" threshold and sliding_window_size (the case's ratio goes to the inner
press, which DMSPress never reads). FinchPress's case has "window": the question's
tokens at the prompt's end, which a delimiter token (an id the prompt lacks) separates from the context as kvpress's
evaluation inserts it; KVzipPress's has "tokenizer": the GGUF file whose tokenizer (and chat template) it writes its
reconstruction request with, in place of the hub's. For each,
kvpress's press NAME (a class of kvpress 0.5.5, e.g. "SnapKVPress", with compression_ratio r and the
keyword args; a wrapper such as "AdaKVPress" gets the inner press instead) compresses transformers'
DynamicCache while the model prefills the prompt (float32; eager attention, sdpa for AdaKVPress and
PyramidKVPress), exactly as kvpress's pipeline does. FILE gets
JSON: "kept" [L][KV][M], the original positions each layer and KV head kept (ascending: the keys the press
left in the cache, found among the layer's keys before it compressed; AdaKV's: those it did not mask), "scores"
[L][KV][N], the press's scores of the full prompt's entries (for telling ties apart; null for a press without
scores), and "generated",
the greedy tokens: the first from the prompt's logits, then one per step from the compressed cache at
positions P, P+1, … (kvbench's --mode prefill_end; after key rerotation, FinchPress's and KeyRerotationPress's: at
M, M+1, … for the M entries kept, as kvpress's pipeline continues). Run with the project's environment (.venv/bin/python).
"""
import json
import os
import sys

import numpy

import kvpress
import torch
from kvpress.presses import kvzip_press
from kvpress.presses.key_rerotation_press import KeyRerotationPress
from kvpress.presses.kvzap_press import KVzapConfig, KVzapModel
from kvpress.presses.qfilter_press import QFilters
from transformers import AutoTokenizer, DynamicCache

from peer_models import gguf_file, load_causal_lm


# AdaKV masks entries through kvpress's attention patch, which refuses eager attention; PyramidKV leaves
# layers of different lengths, for which transformers sizes an eager mask by the first layer.
# ChunkKVPress refuses attention weights, which eager attention gives.
# KVzipPress masks entries as AdaKV does; ChunkPress refuses attention weights too.
# DMSPress and CriticalAdaKVPress mask as AdaKV does; PerLayerCompressionPress leaves layers of different lengths as
# PyramidKV does.
SDPA_PRESSES = {"AdaKVPress", "PyramidKVPress", "ChunkKVPress", "ChunkPress", "DuoAttentionPress", "KVzipPress",
                "DMSPress", "PerLayerCompressionPress", "CriticalAdaKVPress"}


def load(path, attention):
    return load_causal_lm(path, attn_implementation=attention, dtype=torch.float32)


def q_filters(model, directory):
    """Seeded random Q-filters saved where kvbench reads them (kvpress's QFilters.save_pretrained), then loaded
    back as QFilterPress loads the hub's."""
    if not os.path.exists(os.path.join(directory, "model.safetensors")):
        config = model.config
        torch.manual_seed(1234)
        QFilters(config.num_hidden_layers, config.num_key_value_heads,
                 getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads).save_pretrained(directory)
    return QFilters.from_pretrained(directory).q_filters.to(model.dtype)


def duo_patterns(model, directory):
    """Seeded random DuoAttention patterns (config.json: sink 4, recent 60; full_attention_heads.tsv: a score per
    layer and KV head) saved where kvbench reads them, then loaded back as DuoAttentionPress loads the repository's."""
    config = model.config
    if not os.path.exists(os.path.join(directory, "config.json")):
        os.makedirs(directory, exist_ok=True)
        generator = torch.Generator().manual_seed(4321)
        scores = torch.rand(config.num_hidden_layers, config.num_key_value_heads, generator=generator, dtype=torch.float64)
        with open(os.path.join(directory, "config.json"), "w") as f:
            json.dump({"sink_size": 4, "recent_size": 60}, f)
        with open(os.path.join(directory, "full_attention_heads.tsv"), "w") as f:
            f.writelines("\t".join(repr(float(x)) for x in row) + "\n" for row in scores)
    pattern = json.load(open(os.path.join(directory, "config.json")))
    scores = numpy.loadtxt(os.path.join(directory, "full_attention_heads.tsv"), dtype=float, delimiter="\t", ndmin=2)
    return pattern["sink_size"], pattern["recent_size"], numpy.clip(scores, 0, 1)


def gguf_tokenizer(path):
    gguf = gguf_file(path)
    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


def kvzap_surrogates(model, directory, model_type):
    """A seeded random KVzapModel saved where kvbench reads it (save_pretrained), then loaded back as KVzapPress loads
    the hub's."""
    if not os.path.exists(os.path.join(directory, "config.json")):
        config = model.config
        torch.manual_seed(2468)
        KVzapModel(KVzapConfig(input_dim=config.hidden_size, output_dim=config.num_key_value_heads,
                               n_modules=config.num_hidden_layers, hidden_dim=16 if model_type == "mlp" else None)
                   ).save_pretrained(directory)
    return KVzapModel.from_pretrained(directory)


def with_surrogates(press, args, model):
    """KVzapPress with the surrogates in `args` (popped), not the hub's."""
    directory = args.pop("surrogates", None)
    if directory is not None:
        press.kvzap_model = kvzap_surrogates(model, directory, press.model_type)
        press.post_init_from_model = lambda model: None
    return press


def make_press(case, model):
    args = dict(case.get("args", {}))
    if "tokenizer" in case:  # KVzipPress loads the model's tokenizer from the hub by its name: this one instead
        tokenizer = gguf_tokenizer(case["tokenizer"])
        kvzip_press.AutoTokenizer = type("Hub", (), {"from_pretrained": staticmethod(lambda *a, **k: tokenizer)})
    filters = args.pop("filters", None)  # QFilterPress: read from this directory, not the hub
    patterns = args.pop("patterns", None)  # DuoAttentionPress: read from this directory, not the repository
    if patterns is not None:  # its budget is head_compression_ratio, not compression_ratio
        press = kvpress.DuoAttentionPress(**args)
        loaded = duo_patterns(model, patterns)
        press.load_attention_pattern = lambda model: loaded
        return press, press
    if "inner" in case:
        inner_args = dict(case["inner"]["args"])
        surrogates = {"surrogates": inner_args.pop("surrogates")} if "surrogates" in inner_args else {}
        inner = getattr(kvpress, case["inner"]["press"])(compression_ratio=case["ratio"], **inner_args)
        press = getattr(kvpress, case["press"])(press=with_surrogates(inner, surrogates, model), **args)
        # CriticalKVPress scores (its weighting of the inner press's): the scores its kept set is cut from.
        return press, press if isinstance(press, kvpress.CriticalKVPress) else inner
    surrogates = {"surrogates": args.pop("surrogates")} if "surrogates" in args else {}
    press = with_surrogates(getattr(kvpress, case["press"])(compression_ratio=case["ratio"], **args), surrogates, model)
    if "window" in case:  # FinchPress: its delimiter, as update_model_and_tokenizer would add it
        press.delimiter_token_id = next(i for i in range(model.config.vocab_size) if i not in case["prompt"])
    if filters is not None:
        press.q_filters = q_filters(model, filters)
        press.post_init_from_model = lambda model: None
    return press, press


def kept_positions(module, compressed, shape):
    """[KV, M] positions the press keeps in this layer of `shape` (KV, N), ascending (it drops or masks the others)."""
    masked = getattr(module, "masked_key_indices", None)  # AdaKVPress, KVzipPress, DMSPress: (batch, head, position)
    if masked is not None or compressed is None:  # DMSPress leaves a layer it masks nothing of without indices
        kept = torch.ones(shape, dtype=torch.bool)
        if masked is not None:
            kept[masked[1], masked[2]] = False
        return [torch.nonzero(row).flatten().tolist() for row in kept]
    before, after = compressed  # keys [1, KV, N, D] entering and leaving compress()
    kept = []
    for head in range(before.shape[1]):
        position = {row.numpy().tobytes(): p for p, row in enumerate(before[0, head])}
        kept.append(sorted(position[row.numpy().tobytes()] for row in after[0, head]))
    return kept


def run_case(model, case):
    press, scorer = make_press(case, model)
    if not hasattr(model.config, "head_dim"):  # Critical*Press reads it; Qwen2's config derives it, naming none
        model.config.head_dim = model.config.hidden_size // model.config.num_attention_heads
    scored, modules, compressed = {}, {}, {}
    if hasattr(scorer, "score"):  # DuoAttentionPress keeps by head, scoring no entry
        score = scorer.score

        def recording_score(module, *args, **kwargs):
            scores = score(module, *args, **kwargs)
            if isinstance(press, kvpress.ChunkPress) and module.layer_idx in scored:  # a chunk at a time, in order
                scored[module.layer_idx] = torch.cat([scored[module.layer_idx], scores], dim=-1)
            else:
                scored[module.layer_idx] = scores.clone()
            return scores

        scorer.score = recording_score
    # PerLayerCompressionPress runs its inner press's hook, which compresses.
    compressor = scorer if isinstance(press, kvpress.PerLayerCompressionPress) else press
    compress = compressor.compress

    def recording_compress(module, hidden_states, keys, *args, **kwargs):
        kept_keys, values = compress(module, hidden_states, keys, *args, **kwargs)
        modules[module.layer_idx], compressed[module.layer_idx] = module, (keys.clone(), kept_keys.clone())
        return kept_keys, values

    compressor.compress = recording_compress
    rerotated = {}  # layer → [KV, M] kept positions, which key rerotation changes the keys of
    rerotate = KeyRerotationPress.rerotate_keys

    def recording_rerotate(module, indices, keys):
        rerotated[module.layer_idx] = indices[0].tolist()
        return rerotate(module, indices, keys)

    KeyRerotationPress.rerotate_keys = staticmethod(recording_rerotate)
    if isinstance(press, kvpress.KVzipPress):  # it scores and masks in one step after the prefill, for all layers
        compress_post = press.compress_post

        def recording_compress_post(model):
            scored.update({l: press.score_val[l] for l in range(len(press.score_val))})
            compress_post(model)

        press.compress_post = recording_compress_post
        modules.update({l: layer.self_attn for l, layer in enumerate(model.model.layers)})
    if isinstance(press, kvpress.DMSPress):  # it masks in its forward hook, compressing nothing
        modules.update({l: layer.self_attn for l, layer in enumerate(model.model.layers)})
    torch.manual_seed(case.get("seed", 0))
    prompt = list(case["prompt"])
    if "window" in case:
        prompt.insert(len(prompt) - case["window"], press.delimiter_token_id)
    prompt = torch.tensor([prompt])
    cache = DynamicCache(config=model.config)
    with torch.no_grad():
        with press(model):
            logits = model(input_ids=prompt, past_key_values=cache, use_cache=True, logits_to_keep=1).logits
        generated = [int(logits[0, -1].argmax())]
        # kvpress's pipeline continues a rerotated cache at its length, any other at the prompt's
        start = cache.get_seq_length() if rerotated else len(case["prompt"])
        for step in range(case["new_tokens"] - 1):
            position = torch.tensor([[start + step]])
            logits = model(input_ids=torch.tensor([[generated[-1]]]), position_ids=position, past_key_values=cache,
                           use_cache=True).logits
            generated.append(int(logits[0, -1].argmax()))
    KeyRerotationPress.rerotate_keys = staticmethod(rerotate)
    layers = range(model.config.num_hidden_layers)
    kept = [rerotated[l] if rerotated else kept_positions(modules[l], compressed.get(l), (model.config.num_key_value_heads, len(case["prompt"])))
            for l in layers]
    with open(case["output"], "w") as f:
        json.dump({"kept": kept,
                   "scores": [scored[l][0].tolist() for l in layers] if scored else None, "generated": generated}, f)


def main():
    if len(sys.argv) != 3 or sys.argv[1] != "run":
        sys.exit(__doc__)
    with open(sys.argv[2]) as f:
        cases = json.load(f)
    models = {}
    for case in cases:
        key = (case["model"], "sdpa" if case["press"] in SDPA_PRESSES else "eager")
        if key not in models:
            models[key] = load(*key)
        run_case(models[key], case)


if __name__ == "__main__":
    main()
