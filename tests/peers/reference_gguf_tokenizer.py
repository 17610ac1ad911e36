#!/usr/bin/env python3
"""Writes the tokenizer a GGUF file was converted from, as its authors publish it, with HF `tokenizers`' own
Python API — the reference for kvbench's tokenizer read from the GGUF's metadata (tokenizer/gguf_vocab.cpp).

  reference_gguf_tokenizer.py FILE.gguf OUTDIR

OUTDIR gets tokenizer.json (BPE from tokenizer.ggml.tokens / merges; the pre-tokenizer that llama.cpp's
`tokenizer.ggml.pre` names, as in the published tokenizer.json; ByteLevel decoder; control tokens as special
added tokens) and tokenizer_config.json (bos/eos tokens, chat_template), for reference_tokenize.py.
The pipelines are spelled here from the published files (e.g. SmolLM2's: Sequence[Digits(individual_digits),
ByteLevel(use_regex)]), independently of kvbench's table.
"""
import json
import pathlib
import sys

from gguf import GGUFReader
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

LLAMA3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def pre_tokenizer(pre):
    if pre == "smollm":
        return pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    if pre == "gpt-2":
        return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    pattern = {"llama-bpe": LLAMA3, "qwen2": QWEN2}[pre]
    return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
                                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


def published_tokenizer(gguf_path):
    """(HF Tokenizer, tokenizer_config dict) of the tokenizer the GGUF file was converted from."""
    reader = GGUFReader(gguf_path)
    field = lambda key: reader.fields[key].contents() if key in reader.fields else None
    tokens, types, merges = field("tokenizer.ggml.tokens"), field("tokenizer.ggml.token_type"), field("tokenizer.ggml.merges")
    pre = field("tokenizer.ggml.pre") or "gpt-2"
    vocab = {}
    for i, token in enumerate(tokens):
        vocab.setdefault(token, i)
    tokenizer = Tokenizer(models.BPE(vocab, [tuple(m.split(" ", 1)) for m in merges], ignore_merges=pre == "llama-bpe"))
    tokenizer.pre_tokenizer = pre_tokenizer(pre)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([AddedToken(tokens[i], special=True, normalized=False)
                                  for i, t in enumerate(types) if t == 3])  # 3: control
    config = {"bos_token": tokens[field("tokenizer.ggml.bos_token_id")],
              "eos_token": tokens[field("tokenizer.ggml.eos_token_id")], "chat_template": field("tokenizer.chat_template")}
    return tokenizer, config


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: reference_gguf_tokenizer.py FILE.gguf OUTDIR")
    tokenizer, config = published_tokenizer(sys.argv[1])
    out = pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(out / "tokenizer.json"))
    (out / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False))


if __name__ == "__main__":
    main()
