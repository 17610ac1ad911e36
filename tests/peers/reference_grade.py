#!/usr/bin/env python3
"""(prediction, gold) pairs graded by math-verify (HF's `math_verify`, the grader lighteval and open-r1
use), for kvbench's math grader comparison (tests/text/test_grader_reference.cpp, scripts/compare_peers.sh).

  reference_grade.py [DATASETS_DIR] [--per-gold N] [--workers W]

Golds: a built-in set (always) plus, when DATASETS_DIR (../shared/datasets) is given and present, every
answer of MATH500, AIME 2024/2025 and HMMT February 2025. From each gold, seeded rewrites of the answer
(equivalence-preserving and -breaking), wrapped in the answer styles of reasoning models, plus degenerate
generations. Output, one JSON line per pair:
  {"task": kvbench task, "gold": g, "pred_raw": output, "rule": rewrite, "style": wrapper,
   "truth": true|false|null (what the rewrite meant; null where conventions differ), "math_verify": bool}
math_verify's verdict is verify(parse("\\boxed{gold}"), parse(pred_raw)) with its default extraction
(LaTeX, then plain expressions) and its signal timeouts (5 s parse, 5 s verify), in a process pool.
"""
import json
import multiprocessing
import os
import random
import re
import sys

# Golds that exercise each answer shape, so the comparison runs without ../shared.
BUILTIN = {
    "math500": [
        "\\frac{14}{3}", "\\frac{3}{56}", "\\dfrac{17}{50}", "-\\frac{1}{2}", "\\frac{\\sqrt{21}}{5}", "\\sqrt{51}",
        "2\\sqrt{5}", "288 \\pi", "6 - 5i", "p - q", "x^2+7x+10", "0", "1", "17", "-9", "720", "8000", "3600",
        "1250000", ".35625", "0.5", "3.14", "(6,31,-1)", "(-\\sqrt{3}, \\sqrt{3})", "\\left( 3, \\frac{\\pi}{2} \\right)",
        "(1,2)", "[-2,7]", "(-\\infty, 3]", "(0,1) \\cup (1, \\infty)", "[1,2)", "\\{1,2,3\\}", "-2, 1", "1, 3, 5",
        "\\begin{pmatrix} 1 \\\\ -2 \\end{pmatrix}", "\\begin{pmatrix} 2 & 0 \\\\ 0 & 3 \\end{pmatrix}",
        "\\text{Evelyn}", "\\text{(C)}", "30^\\circ", "45", "10\\%", "12\\text{ cm}", "\\$18.90", "1 \\pm \\sqrt{2}",
        "\\frac{1}{4}", "\\frac{9}{256}", "\\frac{639}{40}", "\\sqrt{66}", "3\\sqrt{3}", "\\frac{5\\sqrt{2}}{2}",
        "2^{10}", "e^2", "\\pi", "\\frac{\\pi}{3}", "y = 2x + 3", "(2,3), (4,5)", "4, 6, 14, 15", "-3",
    ],
    "aime24": ["204", "025", "73", "0", "999", "110", "540", "033"],
    "hmmt-feb-2025": ["103", "\\frac{1}{576}", "-984", "\\frac{9 \\sqrt{23}}{23}", "1-\\frac{2}{\\pi}",
                      "\\frac{-1+\\sqrt{17}}{2}, \\frac{-1-\\sqrt{17}}{2}", "2^{25} \\cdot 26!", "8\\sqrt{10}",
                      "\\sqrt{23}-2 \\sqrt{3}", "\\sqrt{\\frac{95}{24}}", "14+4\\sqrt{37}", "3375"],
}

DATASETS = [("math500/test.jsonl", "math500"), ("aime24/test.jsonl", "aime24"), ("aime25/test.jsonl", "aime25"),
            ("hmmt_feb_2025/test.jsonl", "hmmt-feb-2025")]

INTEGER = re.compile(r"^-?\d+$")
DECIMAL = re.compile(r"^-?\d*\.\d+$")
FRACTION = re.compile(r"^(-?)\\[dt]?frac\{(\d+)\}\{(\d+)\}$")
NUMBER = re.compile(r"\d+")
THOUSANDS = re.compile(r"^(?:\\\$)?\d{1,3}(?:,(?:\\!)? ?\d{3})+$")  # "10,\!080", "\$32,\!348", "58,500"


def closing_bracket(text):
    depth = 0
    for i, c in enumerate(text):
        depth += c in "([{"
        depth -= c in ")]}"
        if depth == 0:
            return i
    return -1


def top_level_split(text):
    """Splits on commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def bump_number(text, rng):
    """Equivalence-breaking: the first number's last digit changed."""
    m = NUMBER.search(text)  # the first number: the leading digits of a decimal, not its last place
    if m is None:
        return None
    digits = m.group()
    last = (int(digits[-1]) + rng.choice([1, 2, 3, 7])) % 10
    changed = digits[:-1] + str(last)
    return text[:m.start()] + changed + text[m.end():]


def thousands(n):
    return f"{n:,}"


def rewrites(gold, task, rng):
    """(core answer, rule, truth): truth is whether the rewrite keeps the answer's value."""
    out = [(gold, "identity", True)]
    g = gold.strip()
    breaking = bump_number(g, rng)
    if breaking is not None and breaking != g:
        out.append((breaking, "digit-changed", False))
    if THOUSANDS.match(g):
        g = re.sub(r"^\\\$|,(?:\\!)? ?", "", g)
    if INTEGER.match(g):
        n = int(g)
        out += [(f"{n}.0", "integer-as-decimal", True), (f"{n} \\text{{ units}}", "units-text", True),
                (f"{n}^\\circ", "degrees", True), (f"{n}\\%", "percent-sign", True),
                (f"{n}\\text{{ cm}}^2", "units-squared", True), (str(n * 10) if n else "10", "times-ten", False),
                (f"{-n}" if n else "1", "sign-flip", False), (f"{n + 1}", "off-by-one", False)]
        if abs(n) >= 1000:
            t = thousands(n)
            out += [(t.replace(",", "{,}"), "thousands-braced-comma", True),
                    (t.replace(",", ",\\!"), "thousands-comma-negspace", True),
                    (t.replace(",", "\\,"), "thousands-thinspace", True), (t, "thousands-comma", True)]
        if task.startswith("aime"):
            out += [(g.zfill(3), "leading-zeros", True), (f"\\text{{{n}}}", "text-wrapped", True),
                    (f"{n}.5", "half-added", False)]
        else:
            out += [(f"\\frac{{{2 * n}}}{{2}}", "integer-as-fraction", True)]
        return out
    if DECIMAL.match(g):
        value = float(g)
        out += [((g if not g.startswith(".") else "0" + g), "leading-zero", True), (g + "0", "trailing-zero", True),
                (f"{value * 10:g}", "times-ten", False)]
        rounded = f"{value:.1f}"
        if abs(float(rounded) - value) > 1e-9:
            out.append((rounded, "rounded", False))
        return out
    m = FRACTION.match(g)
    if m:
        sign, a, b = m.group(1), int(m.group(2)), int(m.group(3))
        k = rng.choice([2, 3, 5])
        out += [(f"{sign}\\dfrac{{{a}}}{{{b}}}", "dfrac", True), (f"{sign}\\tfrac{{{a}}}{{{b}}}", "tfrac", True),
                (f"{sign}{a}/{b}", "slash", True), (f"{sign}\\frac{{{a * k}}}{{{b * k}}}", "unreduced", True),
                (f"{sign}\\frac{a}{b}" if a < 10 and b < 10 else f"{sign}\\frac {{{a}}} {{{b}}}", "frac-shorthand",
                 True), (f"{sign}\\frac{{{b}}}{{{a}}}" if a != b else f"{sign}\\frac{{{a + 1}}}{{{b}}}", "reciprocal",
                         False), (("" if sign else "-") + f"\\frac{{{a}}}{{{b}}}", "sign-flip", False),
                (f"{sign}{a}/{b + 1}", "slash-wrong-denominator", False)]
        value = a / b
        for digits in (10, 3):
            s = f"{value:.{digits}f}".rstrip("0")
            exact = abs(float(s) - value) < 1e-12
            out.append((sign + s, "decimal-exact" if exact else f"decimal-{digits}-digits", exact or digits == 10))
        if sign:
            out.append((f"\\frac{{-{a}}}{{{b}}}", "sign-in-numerator", True))
        return out
    if g.startswith("\\begin{pmatrix}"):
        out += [(g.replace("pmatrix", "bmatrix"), "bmatrix", True),
                (g.replace(" \\\\ ", "\\\\").replace(" & ", "&"), "matrix-spacing", True),
                (g.replace("pmatrix", "vmatrix"), "determinant-bars", None)]
        return out
    if g.startswith("\\{") and g.endswith("\\}"):
        items = top_level_split(g[2:-2])
        out += [("\\{" + ", ".join(reversed(items)) + "\\}", "set-reordered", True),
                ("\\{" + ",".join(items[:-1]) + "\\}", "set-element-dropped", False),
                (", ".join(items), "set-as-list", True)]
        return out
    if g[:1] in "([" and g[-1:] in ")]" and "\\cup" not in g and closing_bracket(g) == len(g) - 1:
        inner = g[1:-1]
        items = top_level_split(inner)
        if len(items) == 2 and "\\infty" not in items[0]:
            out.append((("[" if g[0] == "(" else "(") + inner + g[-1], "left-bracket-flipped", False))
        out += [("\\left" + g[0] + " " + inner + " \\right" + g[-1], "left-right", True),
                (g[0] + ", ".join(items) + g[-1], "comma-space", True),
                (g[0] + ",\\, ".join(items) + g[-1], "thinspace-after-comma", True)]
        if len(items) >= 2 and items[0] != items[-1]:
            out.append((g[0] + ", ".join(reversed(items)) + g[-1], "tuple-reversed", False))
            out.append((g[0] + ", ".join(items[:-1]) + g[-1], "tuple-element-dropped", False))
        return out
    if "," in g and "\\frac{-1" not in g[:1]:
        items = top_level_split(g)
        if len(items) >= 2:
            out += [(", ".join(reversed(items)), "list-reordered", True),
                    (", ".join(items[:-1]), "list-element-dropped", False),
                    (" \\text{ and } ".join(items), "list-joined-by-and", True),
                    ("\\{" + ", ".join(items) + "\\}", "list-as-set", True)]
            return out
    if re.match(r"^\\text\{[^{}]*\}$", g):
        inner = re.sub(r"\\text\{(.*)\}", r"\1", g)
        out += [(inner, "text-unwrapped", True), (f"\\textbf{{{inner}}}", "textbf", True)]
        return out
    # Expressions: spacing, \frac -> \dfrac, \left/\right, value changes.
    if "\\frac" in g:
        out.append((g.replace("\\frac", "\\dfrac"), "dfrac", True))
    kept = re.sub(r"(\\[a-zA-Z]+) (?=[a-zA-Z])", "\\1\x00", g)  # "\cot x" is not "\cotx"
    out += [(kept.replace(" ", "").replace("\x00", " "), "spaces-removed", True),
            (re.sub(r"([+\-=])", r" \1 ", g), "spaces-added", True)]
    if "=" not in g:
        out.append(("-(" + g + ")" if not g.startswith("-") else g[1:], "sign-flip", False))
    if "\\pm" in g:
        a, b = g.split("\\pm")
        out.append((f"{a.strip()} + {b.strip()}, {a.strip()} - {b.strip()}", "pm-expanded", True))
    if "\\sqrt{" in g:
        out.append((g.replace("\\sqrt{", "\\sqrt {"), "sqrt-spacing", True))
    return out


FILLER = ["First, let me understand the problem. ", "We need to compute the value carefully. ",
          "Let me double-check the arithmetic. ", "Hmm, wait. Let me reconsider. ",
          "So, substituting back, the equation holds. ", "Alternatively, we can verify by symmetry. "]


def reasoning(rng, n=None):
    return "".join(rng.choice(FILLER) for _ in range(n if n is not None else rng.randrange(1, 5)))


def single_value(core):
    return all(s not in core for s in (",", "\\begin", "=", "\\text", "\\textbf"))


def styles(core, truth, gold, rng):
    """(output, style, truth) for one rewritten answer in several answer styles."""
    wrong = bump_number(core, rng) or core + "+1"
    think = "<think>\n" + reasoning(rng) + "\n</think>\n\n"
    out = [
        (reasoning(rng) + f"Therefore, the answer is $\\boxed{{{core}}}$.", "boxed-sentence", truth),
        (think + reasoning(rng) + f"\n\n**Final Answer**\n\\[\n\\boxed{{{core}}}\n\\]", "final-answer-display", truth),
        (f"\\boxed{{{core}}}", "bare-box", truth),
        (reasoning(rng) + f"Maybe $\\boxed{{{wrong}}}$? No, recomputing: the answer is $\\boxed{{{core}}}$.",
         "several-boxes-last-counts", truth),
        (reasoning(rng) + f"So $\\boxed{{{core}}}$. Wait, that is wrong; the answer is $\\boxed{{{wrong}}}$.",
         "several-boxes-last-wrong", False if truth else None),
        (reasoning(rng) + f"The final answer is ${core}$.", "final-answer-unboxed", truth),
        (reasoning(rng) + f"So the answer is \\boxed{{{core}}} in this case.", "boxed-in-text", truth),
        ((reasoning(rng) + f"The answer is $\\boxed{{{core}}}$.").replace("\\", "\\\\"), "json-escaped-backslashes",
         truth),
    ]
    if single_value(core):
        out.append((reasoning(rng) + f"Hence $\\boxed{{x = {core}}}$.", "labelled-x", truth))
    items = top_level_split(core[1:-1]) if core[:1] == "(" and core[-1:] == ")" else []
    if len(items) == 2 and "\\infty" not in core:
        out.append((reasoning(rng) + f"Thus $\\boxed{{(p, q) = {core}}}$.", "labelled-tuple", truth))
    if INTEGER.match(core) and int(core) >= 1 and "%" not in gold:
        out.append((reasoning(rng) + f"The answer is $\\boxed{{{core}\\text{{ percent}}}}$.", "percent-word", None))
    if single_value(core) and "\\" not in core:
        out.append((reasoning(rng) + f"The final answer is {core}.", "plain-text-answer", truth))
    return out


def degenerate(gold, rng):
    """Generations that went wrong: cut off, looping, empty; none holds a complete answer box."""
    half = gold[: max(1, len(gold) // 2)]
    loop = rng.choice(FILLER)
    return [
        ("", "empty", False),
        (reasoning(rng, 6), "cut-off-reasoning", False),
        (reasoning(rng) + "So the answer is $\\boxed{" + half, "unclosed-box", False),
        ("\\boxed{" * rng.randrange(50, 400), "repeated-box-openers", False),
        (loop * rng.randrange(50, 300), "looping-sentence", False),
        (reasoning(rng) + "The answer is $\\boxed{}$.", "empty-box", False),
        (reasoning(rng) + ("\\boxed{" + gold + "} ") * rng.randrange(20, 60), "repeated-correct-box", True),
        ("".join(chr(rng.randrange(0x20, 0x2FF)) for _ in range(rng.randrange(10, 200))), "random-characters", None),
    ]


def pairs(golds, per_gold, seed=20250131):
    rng = random.Random(seed)
    result = []
    for task, gold in golds:
        cases = []
        for core, rule, truth in rewrites(gold, task, rng):
            for output, style, t in styles(core, truth, gold, rng):
                cases.append({"task": task, "gold": gold, "pred_raw": output, "rule": rule, "style": style, "truth": t})
        rng.shuffle(cases)
        cases = cases[:per_gold]
        for output, style, t in degenerate(gold, rng):
            cases.append({"task": task, "gold": gold, "pred_raw": output, "rule": "degenerate", "style": style,
                          "truth": t})
        result.append(cases)
    return result


def grade_gold(cases):
    # parse_latex_cached keeps 20 entries; one gold's rewrites repeat their answers across styles, so a
    # larger cache only saves time (the cached function is pure).
    from functools import lru_cache

    import math_verify.parser as parser
    from math_verify import parse, verify
    if not hasattr(parser.parse_latex_cached, "_kvbench"):
        parser.parse_latex_cached = lru_cache(maxsize=4096)(parser.parse_latex_cached.__wrapped__)
        parser.parse_latex_cached._kvbench = True
    gold = parse("\\boxed{" + cases[0]["gold"] + "}", parsing_timeout=5)
    for case in cases:
        try:
            case["math_verify"] = bool(verify(gold, parse(case["pred_raw"], parsing_timeout=5), timeout_seconds=5))
        except Exception:  # math_verify catches its own errors; anything else counts as not equal
            case["math_verify"] = False
    return cases


def main():
    args = sys.argv[1:]
    per_gold, workers, directory = 36, max(1, os.cpu_count() or 1), None
    while args:
        a = args.pop(0)
        if a == "--per-gold":
            per_gold = int(args.pop(0))
        elif a == "--workers":
            workers = int(args.pop(0))
        else:
            directory = a
    golds = [(task, g) for task, gs in BUILTIN.items() for g in gs]
    if directory and os.path.isdir(directory):
        for file, task in DATASETS:
            with open(os.path.join(directory, file)) as f:
                golds += [(task, json.loads(line)["answer"]) for line in f if line.strip()]
    groups = pairs(golds, per_gold)
    import logging
    logging.disable(logging.CRITICAL)
    if workers > 1:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            graded = pool.map(grade_gold, groups, chunksize=4)
    else:
        graded = [grade_gold(g) for g in groups]
    for cases in graded:
        for case in cases:
            print(json.dumps(case, ensure_ascii=False))


if __name__ == "__main__":
    main()
