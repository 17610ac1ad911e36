#!/usr/bin/env python3
"""tokenizer.json files in the forms causal LMs ship, written by HF `tokenizers`' own Python API, and their
reference tokenizations, for tests/text/test_tokenizer_forms.cpp.

  reference_tokenizer_forms.py SCRATCH synthetic COUNT
  reference_tokenizer_forms.py SCRATCH smollm2 GGUF COUNT

For every form below: trains a small BPE (BpeTrainer on seeded varied strings and their fragments, merging until no pair is left: every training word becomes one token, so that splitting a word differently changes ids) with
the form's normalizer and pre-tokenizer, builds the tokenizer with the form's decoder and added tokens
(special <|endoftext|>, <|im_start|>, <|im_end|>; normalized "KV-cache"), saves it as
SCRATCH/FORM/tokenizer.json, and prints reference_tokenize.py's records for COUNT seeded strings as JSON
lines {"form", "text", "ids", "decoded", "random_ids", "random_decoded"} (the last two: a seeded sequence of
any ids and its decode). With `smollm2`, the one form "smollm2" instead: SmolLM2's real
vocabulary and merges, read from GGUF (SmolLM2-135M-Instruct's .gguf) with the `gguf` package, in SmolLM2's
pipeline. Run with the project's environment (.venv/bin/python, made by scripts/setup.sh).
"""
import json
import os
import random
import sys

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_tokenize import FRAGMENTS, encodings, random_string  # noqa: E402

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

# Strings every form meets before the seeded ones: what the normalizers and pre-tokenizers treat specially
# (case mappings that change length or need context, compatibility characters with long decompositions,
# \w's marks and joiners, leading deletions), and hostile model outputs: one token repeated thousands of times.
EDGE_STRINGS = [
    "½ cup", "ﬁx", "ΣΑΣ ΟΔΟΣ", "İstanbul", "ẞ straße", "ǅemal ǈ", "ﬀ ﬃ ﬆ", "㍿ ㌀", "① Ⅻ ⅷ x² ₃", "ﷺ ﷻ", "ｶﾀｶﾅ ﾞ", "ⅨⅩ",
    "a\u200db a\u200cb", "under_score x\u203fy", "e\u0301e\u0301 \u0345", "-17 - x", "  - spaced", "--x--",
    "   ", "\u3000x\u3000", "x\u2028y\u2029z\u0085", "\t\n ab", "<|im_start|> x <|im_end|>", " KV-cache kv-cache",
    "1" * 20000, " " * 20000, "\n" * 5000 + "x", "a" * 20000, "'s" * 5000, "e\u0301" * 3000, "\u0301" * 5000,
    "..." * 3000, "\u2581" * 5000, "9 " * 5000, "ab," * 4000, "你好" * 5000, "😀" * 5000, "\u00A0" * 5000,
]

# Model kinds: "bytes" = byte-level BPE (the byte alphabet, ByteLevel decoder unless a form says otherwise);
# "fallback" = BPE over characters with byte fallback (<0xNN> tokens), as Llama 2 / Mistral / Gemma ship.
BYTES, FALLBACK = "bytes", "fallback"


def byte_level(add_prefix_space=False, use_regex=False):
    return pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space, use_regex=use_regex)


def gpt2():
    return byte_level(use_regex=True)


def then_bytes(pre_tokenizer):
    """A splitting pre-tokenizer followed by the byte mapping, as Llama 3 and Qwen ship theirs."""
    return pre_tokenizers.Sequence([pre_tokenizer, byte_level()])


def split(pattern, behavior, invert=False):
    return then_bytes(pre_tokenizers.Split(pattern, behavior, invert=invert))


def metaspace(scheme, split_pieces=True):
    return (pre_tokenizers.Metaspace(prepend_scheme=scheme, split=split_pieces),
            decoders.Metaspace(prepend_scheme=scheme, split=split_pieces))


def punctuation(behavior):
    return pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation(behavior)])


LLAMA2_DECODER = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(),
                                    decoders.Strip(" ", 1, 0)])
FALLBACK_DECODER = decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()])
SEPARATORS = Regex(r"\s|\p{P}")  # single characters, so neighbouring matches exercise the merging behaviors

# name: (kind, normalizer, pre_tokenizer, decoder); decoder "default" = ByteLevel for bytes, FALLBACK_DECODER.
FORMS = {
    # pre-tokenizers
    "bytelevel-gpt2": (BYTES, None, gpt2(), "default"),
    "bytelevel-gpt2-prefix-space": (BYTES, None, byte_level(add_prefix_space=True, use_regex=True), "default"),
    "bytelevel-prefix-space": (BYTES, None, byte_level(add_prefix_space=True), "default"),
    "smollm2-synthetic": (BYTES, None, pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), gpt2()]),
                          "default"),
    "digits-contiguous": (BYTES, None, then_bytes(pre_tokenizers.Digits(individual_digits=False)), "default"),
    "split-removed": (BYTES, None, split(SEPARATORS, "removed"), "default"),
    "split-isolated": (BYTES, None, split(SEPARATORS, "isolated"), "default"),
    "split-merged-with-previous": (BYTES, None, split(SEPARATORS, "merged_with_previous"), "default"),
    "split-merged-with-next": (BYTES, None, split(SEPARATORS, "merged_with_next"), "default"),
    "split-contiguous": (BYTES, None, split(SEPARATORS, "contiguous"), "default"),
    "split-invert-removed": (BYTES, None, split(Regex(r"\p{L}+|\p{N}+"), "removed", invert=True), "default"),
    "split-invert-merged-with-previous": (BYTES, None, split(Regex(r"\p{L}+"), "merged_with_previous", invert=True),
                                          "default"),
    "split-string": (BYTES, None, split(", ", "merged_with_next"), "default"),
    "split-empty-matches": (BYTES, None, split(Regex(r"\d*"), "isolated"), "default"),
    "metaspace-always": (FALLBACK, None, *metaspace("always")),
    "metaspace-first": (FALLBACK, None, *metaspace("first")),
    "metaspace-never": (FALLBACK, None, *metaspace("never")),
    "metaspace-no-split": (FALLBACK, None, *metaspace("always", split_pieces=False)),
    # "first" means "at original offset 0": not after normalizers deleted leading characters
    "metaspace-first-after-deletions": (
        FALLBACK, normalizers.Sequence([normalizers.Strip(left=True, right=False), normalizers.Replace("-", "")]),
        pre_tokenizers.Sequence([pre_tokenizers.Punctuation(), pre_tokenizers.Metaspace(prepend_scheme="first")]),
        decoders.Metaspace(prepend_scheme="first")),
    "punctuation-isolated": (FALLBACK, None, punctuation("isolated"), "default"),
    "punctuation-removed": (FALLBACK, None, punctuation("removed"), "default"),
    "punctuation-merged-with-previous": (FALLBACK, None, punctuation("merged_with_previous"), "default"),
    "punctuation-merged-with-next": (FALLBACK, None, punctuation("merged_with_next"), "default"),
    "punctuation-contiguous": (FALLBACK, None, punctuation("contiguous"), "default"),
    "whitespace": (FALLBACK, None, pre_tokenizers.Whitespace(), None),  # no decoder: HF joins with spaces
    "whitespace-split": (FALLBACK, None, pre_tokenizers.WhitespaceSplit(), decoders.Fuse()),
    # normalizers (before GPT-2's pre-tokenizer)
    "nfc": (BYTES, normalizers.NFC(), gpt2(), "default"),
    "nfd": (BYTES, normalizers.NFD(), gpt2(), "default"),
    "nfkc": (BYTES, normalizers.NFKC(), gpt2(), "default"),
    "nfkd": (BYTES, normalizers.NFKD(), gpt2(), "default"),
    "lowercase": (BYTES, normalizers.Lowercase(), gpt2(), "default"),
    "replace-regex": (BYTES, normalizers.Replace(Regex(r"\s+"), " "), gpt2(), "default"),
    "strip-left": (BYTES, normalizers.Strip(left=True, right=False), gpt2(), "default"),
    "strip-right": (BYTES, normalizers.Strip(left=False, right=True), gpt2(), "default"),
    "strip-both": (BYTES, normalizers.Strip(), gpt2(), "default"),
    "normalizer-sequence": (BYTES, normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase(),
                                                         normalizers.Replace(Regex(r"\d"), "0"), normalizers.Strip()]),
                            gpt2(), "default"),
    # Llama 2's form: Prepend and Replace (String) normalizers, no pre-tokenizer, the decoder sequence
    # Replace, ByteFallback, Fuse, Strip
    "llama2": (FALLBACK, normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")]),
               None, LLAMA2_DECODER),
    # decoders
    "decoder-replace-regex-strip-end": (FALLBACK, None, pre_tokenizers.Metaspace(),
                                        decoders.Sequence([decoders.ByteFallback(), decoders.Strip("\u2581", 0, 1),
                                                           decoders.Replace(Regex("\u2581+"), " ")])),
    # every kind of stage at once, sequences nested
    "kitchen-sink": (
        BYTES,
        normalizers.Sequence([normalizers.NFKC(), normalizers.NFD(), normalizers.Lowercase(),
                              normalizers.Sequence([normalizers.Strip(left=True, right=False),
                                                    normalizers.Replace(Regex(r"\s+"), " ")]),
                              normalizers.Replace("-", ""), normalizers.NFC(), normalizers.Prepend("\u2581")]),
        pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=False),
            pre_tokenizers.Split(Regex(r"\s|\p{P}"), "merged_with_next", invert=True),
            pre_tokenizers.Split(", ", "contiguous"), pre_tokenizers.Punctuation("merged_with_previous"),
            pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Whitespace()]),
            pre_tokenizers.Metaspace(prepend_scheme="first"),
            pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=True)]),
        decoders.Sequence([decoders.ByteLevel(), decoders.Metaspace(prepend_scheme="always"),
                           decoders.Replace(Regex("a+"), "A"), decoders.ByteFallback(), decoders.Fuse(),
                           decoders.Strip(" ", 1, 0)])),
}


def training_corpus():
    """Seeded varied strings, and every fragment they are made of often enough to have merges of its own
    (runs of punctuation, digits, spaces), so that splitting them wrongly changes ids."""
    rng = random.Random(7)
    fragments = [fragment for kind in FRAGMENTS.values() for fragment in kind]
    return [random_string(rng) for _ in range(1500)] + fragments * 20


def trained_bpe(kind, normalizer, pre_tokenizer):
    """vocab and merges of a BPE trained with this normalizer and pre-tokenizer."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.normalizer = normalizer
    tokenizer.pre_tokenizer = pre_tokenizer
    alphabet = pre_tokenizers.ByteLevel.alphabet() if kind == BYTES else []
    tokenizer.train_from_iterator(training_corpus(), trainers.BpeTrainer(vocab_size=30000, initial_alphabet=alphabet,
                                                                        show_progress=False))
    model = json.loads(tokenizer.to_str())["model"]
    return model["vocab"], [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in model["merges"]]


def build(kind, normalizer, pre_tokenizer, decoder):
    vocab, merges = trained_bpe(kind, normalizer, pre_tokenizer)
    if kind == FALLBACK:
        for byte in range(256):
            vocab.setdefault(f"<0x{byte:02X}>", len(vocab))
    tokenizer = Tokenizer(models.BPE(vocab, merges, byte_fallback=kind == FALLBACK))
    tokenizer.normalizer = normalizer
    tokenizer.pre_tokenizer = pre_tokenizer
    if decoder == "default":
        decoder = decoders.ByteLevel() if kind == BYTES else FALLBACK_DECODER
    if decoder is not None:
        tokenizer.decoder = decoder
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS])
    tokenizer.add_tokens([AddedToken("KV-cache", normalized=True)])
    return tokenizer


def smollm2(gguf_path):
    """SmolLM2's tokenizer from its GGUF: real vocabulary and merges, SmolLM2's pipeline, control tokens added."""
    from reference_gguf_tokenizer import published_tokenizer
    return published_tokenizer(gguf_path)[0]


def random_id_sequences(tokenizer, count):
    """Seeded sequences of any ids (added tokens included), so that decoders meet every kind of token in every
    position, not only the sequences encoding produces."""
    rng = random.Random(20240612)
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    return [[rng.randrange(size) for _ in range(1 + rng.randrange(12))] for _ in range(count)]


def emit(name, tokenizer, scratch, count):
    """Saves the tokenizer and prints its records, each with a random id sequence and its decode besides."""
    os.makedirs(os.path.join(scratch, name), exist_ok=True)
    tokenizer.save(os.path.join(scratch, name, "tokenizer.json"))
    random_ids = random_id_sequences(tokenizer, count)
    random_decoded = tokenizer.decode_batch(random_ids, skip_special_tokens=False)
    for record, ids, decoded in zip(encodings(tokenizer, count, EDGE_STRINGS), random_ids, random_decoded):
        print(json.dumps({"form": name, **record, "random_ids": ids, "random_decoded": decoded}, ensure_ascii=False))


def main():
    if len(sys.argv) == 4 and sys.argv[2] == "synthetic":
        for name, (kind, normalizer, pre_tokenizer, decoder) in FORMS.items():
            emit(name, build(kind, normalizer, pre_tokenizer, decoder), sys.argv[1], int(sys.argv[3]))
    elif len(sys.argv) == 5 and sys.argv[2] == "smollm2":
        emit("smollm2", smollm2(sys.argv[3]), sys.argv[1], int(sys.argv[4]))
    else:
        sys.exit("usage: reference_tokenizer_forms.py SCRATCH synthetic COUNT | SCRATCH smollm2 GGUF COUNT")


if __name__ == "__main__":
    main()
