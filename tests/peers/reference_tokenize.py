#!/usr/bin/env python3
"""Reference tokenizations from HF `tokenizers` (the Rust library) and chat renderings from HF
`transformers` (its Jinja `apply_chat_template`), for kvbench's tokenizer tests.

  reference_tokenize.py DIR [COUNT]     seeded varied strings -> JSON lines
      {"text": s, "ids": encode(s, no special tokens), "decoded": decode(ids, special tokens kept)}
  reference_tokenize.py DIR --chat      chat template renderings -> JSON lines
      {"messages": [...], "add_generation_prompt": b, "enable_thinking": b, "text": rendering}

DIR holds tokenizer.json (and tokenizer_config.json for --chat). Run with the project's environment
(.venv/bin/python, made by scripts/setup.sh).
"""
import json
import random
import sys

FRAGMENTS = {
    "english": ["Hello", "world", "The quick brown fox", "jumps over the lazy dog", "tokenizer", "KV-cache",
                "eviction", "a", "I", "HELLO", "CamelCaseWord", "snake_case_name", "e.g.", "U.S.A."],
    "contractions": ["I'm", "don't", "they're", "we've", "He'll", "she'd", "IT'S", "WE'VE", "it's", "'s", "'t",
                     "'re", "'LL", "rock'n'roll", "O'Neil", "\u2019s"],
    "cjk": ["你好世界", "日本語のテキストです", "한국어 문장입니다", "漢字", "カタカナ", "ひらがな", "中文，标点。", "「引用」"],
    "scripts": ["مرحبا بالعالم", "Привет, мир!", "नमस्ते दुनिया", "สวัสดีครับ", "Γειά σου Κόσμε", "שלום עולם",
                "Ελληνικά", "Україна", "ქართული", "Türkçe", "Tiếng Việt", "বাংলা", "தமிழ்"],
    "accents": ["café", "naïve", "Ångström", "résumé", "façade", "e\u0301", "n\u0303", "A\u030A", "o\u0308\u0304",
                "Cafe\u0301", "\u1E9B\u0323", "ﬁ", "\u212B", "ǅ", "한\u11A8", "\u1100\u1161", "a\u0301\u0301\u0316",
                "\u0915\u093C", "\u0F40\u0FB5"],
    "digits": ["0", "7", "42", "123", "1234", "12345", "3.14159", "1,000,000", "2024-01-01", "100%", "$9.99",
               "-17", "1e10", "0x1F", "١٢٣", "४२", "１２３", "½", "\U0001D7CE\U0001D7CF"],
    # U+0085 and U+FEFF are in: HF's regex engine treats them as Unicode defines them, as kvbench must.
    "whitespace": [" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\r\n\r\n", " \n", "\n ", " \t ",
                   "\u00A0", "\u3000", "    ", "\r", "\u2003", "\u200B", "\u0085", "\uFEFF", "\u2028", "\u000B",
                   "\u000C"],
    "code": ["def foo(x):\n    return x ** 2\n", "int main() { return 0; }", "for (let i = 0; i < n; ++i) {",
             "<div class=\"a\">", "{\"key\": [1, 2, 3]}", "#include <vector>", "x += 1;", "a->b", "if (a && b) || c:",
             "SELECT * FROM t WHERE id = 1;", "\tindent();", "// comment", "/* block */", "`code`", "$ ls -la",
             "\\frac{1}{2}", "\\boxed{42}", "$$x^2 + y^2 = z^2$$"],
    "emoji": ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "❤️", "🙂", "🤖", "🇩🇪", "👩🏾‍💻", "✨", "1️⃣", "☕"],
    "special": ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<|begin_of_text|>",
                "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>", "<|end_of_text|>", "<|im_start",
                "<|", "|>", "<tool_call>", "<|reserved_special_token_5|>"],
    "punctuation": ["!!!", "...", "?!", "—", "–", "«»", "“quoted”", "‘single’", "(", ")", "[]", "{}", ",", ";",
                    ":", "@", "#", "&", "*", "~", "^", "\\", "/", "|", "''", "\"", "…", "§", "©", "€", "£"],
}

# Code point ranges whose properties have been stable for many Unicode versions (kvbench's regex
# engine and HF's need not share one): ASCII, Latin, Greek, Cyrillic, CJK, kana, Hangul, Arabic,
# Devanagari, punctuation, maths, emoji, combining marks, and astral letters and ideographs.
BLOCKS = [(0x20, 0x7E), (0xA1, 0x17F), (0x370, 0x3FF), (0x400, 0x4FF), (0x4E00, 0x9FA5), (0x3041, 0x3096),
          (0xAC00, 0xD7A3), (0x621, 0x64A), (0x905, 0x939), (0x2010, 0x2027), (0x2200, 0x22FF),
          (0x1F600, 0x1F64F), (0x300, 0x36F), (0x1AB0, 0x1ABE), (0x20D0, 0x20F0), (0x1D400, 0x1D454),
          (0x20000, 0x2A6D6), (0x10400, 0x1044F), (0x1F300, 0x1F5FF)]


def random_string(rng):
    kinds = list(FRAGMENTS)
    separators = ["", " ", " ", " ", "  ", "\n", "\t", ", ", ". "]
    parts = []
    for _ in range(1 + rng.randrange(12)):
        roll = rng.random()
        if roll < 0.12:
            lo, hi = rng.choice(BLOCKS)
            parts.append("".join(chr(rng.randint(lo, hi)) for _ in range(1 + rng.randrange(6))))
        elif roll < 0.20:
            parts.append("".join(str(rng.randrange(10)) for _ in range(1 + rng.randrange(25))))
        elif roll < 0.23:  # whitespace runs, mixed
            parts.append("".join(rng.choice(FRAGMENTS["whitespace"]) for _ in range(1 + rng.randrange(8))))
        elif roll < 0.25:  # a degenerate generation: one fragment repeated
            parts.append(rng.choice(FRAGMENTS[rng.choice(kinds)]) * (2 + rng.randrange(300)))
        else:
            parts.append(rng.choice(FRAGMENTS[rng.choice(kinds)]))
        parts.append(rng.choice(separators))
    return "".join(parts)


def fixed_strings():
    return ["", " ", "\n", "\n\n\n", "   leading", "trailing   ", "\t\tx", "a\r\nb", "  \n  \n", "x" + " " * 40 + "y",
            "Hello, my dog is cute. 你好世界 12345", "<|im_start|>user\nHi<|im_end|>\n",
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
            "9" * 100, "ab" * 500, "The café's naïve résumé, isn't it? 😀👍🏽", "\u00A0\u00A0x", "\u0085x\uFEFFy",
            "the " * 2000, "\n" * 500, " " * 1000 + "x"]


def seeded_strings(count):
    rng = random.Random(20240611)
    texts = fixed_strings()
    while len(texts) < count:
        texts.append(random_string(rng))
    return texts[:count]


def encodings(tokenizer, count, extra_strings=()):
    """{"text", "ids", "decoded"} for `extra_strings` then seeded strings, `count` in all (also used by
    reference_tokenizer_forms.py)."""
    texts = list(extra_strings) + seeded_strings(count - len(extra_strings))
    ids = [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False)]
    decoded = tokenizer.decode_batch(ids, skip_special_tokens=False)
    for text, i, d in zip(texts, ids, decoded):
        yield {"text": text, "ids": i, "decoded": d}


def emit_encodings(tokenizer, count):
    for record in encodings(tokenizer, count):
        print(json.dumps(record, ensure_ascii=False))


CONVERSATIONS = [
    [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "What is 2+2?"}],
    [{"role": "user", "content": "  Hello there!\n"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
     {"role": "assistant", "content": "Hello! How can I help?"}, {"role": "user", "content": "Tell me a joke."}],
    [{"role": "user", "content": "Solve x^2 = 4."},
     {"role": "assistant", "content": "<think>\nx is 2 or -2.\n</think>\n\n$x = \\pm 2$"},
     {"role": "user", "content": "And x^2 = 9?"}],
]


def emit_chat(directory):
    from transformers import AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained(directory)
    for messages in CONVERSATIONS:
        for add_generation_prompt in (True, False):
            for enable_thinking in (True, False):
                text = tokenizer.apply_chat_template(messages, tokenize=False,
                                                     add_generation_prompt=add_generation_prompt,
                                                     enable_thinking=enable_thinking)
                print(json.dumps({"messages": messages, "add_generation_prompt": add_generation_prompt,
                                  "enable_thinking": enable_thinking, "text": text}, ensure_ascii=False))


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: reference_tokenize.py DIR [COUNT | --chat]")
    directory, argument = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "2200")
    if argument == "--chat":
        emit_chat(directory)
    else:
        from tokenizers import Tokenizer
        emit_encodings(Tokenizer.from_file(f"{directory}/tokenizer.json"), int(argument))


if __name__ == "__main__":
    main()
