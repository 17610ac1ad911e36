"""RULER as lm-evaluation-harness 0.4.9 implements it (lm_eval/tasks/ruler), the oracle for kvbench's ruler task.

  reference_ruler.py check CASES.jsonl      one JSON line per case: does kvbench's prompt follow lm_eval's
                                            template and answer prefix for that task, and lm_eval's score of
                                            a fixed set of predictions made from the references
  reference_ruler.py samples TOKENIZER_DIR  lm_eval's own samples (the tasks it can make offline: no essay,
                                            no SQuAD/HotpotQA download) at 4096 tokens, with predictions and
                                            lm_eval's scores, one JSON line each

A case: {"task", "input", "answer_prefix", "outputs", "config": kvbench's RULER config of the task}.
lm_eval's ruler modules are loaded without lm_eval/__init__.py (which imports model back-ends that need
other transformers versions); they need wonderwords, nltk, scipy and datasets.
"""
import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tokenizers are read from directories; nothing is downloaded
import re
import sys
import types


def load_lm_eval_ruler():
    site = next(p for p in sys.path if p.endswith("site-packages") and os.path.isdir(os.path.join(p, "lm_eval")))
    for name in ["lm_eval", "lm_eval.tasks", "lm_eval.tasks.ruler"]:
        module = types.ModuleType(name)
        module.__path__ = [os.path.join(site, *name.split("."))]
        sys.modules[name] = module
    stdout, sys.stdout = sys.stdout, sys.stderr  # prepare_niah prints while importing
    try:
        from lm_eval.tasks.ruler import common_utils, cwe_utils, fwe_utils, niah_utils, qa_utils, vt_utils
    finally:
        sys.stdout = stdout
    return types.SimpleNamespace(common=common_utils, cwe=cwe_utils, fwe=fwe_utils, niah=niah_utils, qa=qa_utils,
                                 vt=vt_utils)


RULER = load_lm_eval_ruler()
NIAH_TASKS = ["niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1", "niah_multikey_2",
              "niah_multikey_3", "niah_multivalue", "niah_multiquery"]


def niah_configs():
    """Each niah task's arguments as lm_eval's task function passes them to generate_samples."""
    configs = {}
    originals = RULER.niah.generate_samples, RULER.niah.get_haystack, RULER.niah.get_tokenizer
    try:
        RULER.niah.get_haystack = lambda type_haystack: None
        RULER.niah.get_tokenizer = lambda **kwargs: None
        for task in NIAH_TASKS:
            def capture(haystack, TOKENIZER=None, task=task, **kwargs):
                configs[task] = kwargs
                return []
            RULER.niah.generate_samples = capture
            getattr(RULER.niah, task)(max_seq_lengths=[4096], tokenizer="unused")
    finally:
        RULER.niah.generate_samples, RULER.niah.get_haystack, RULER.niah.get_tokenizer = originals
    return configs


NIAH_CONFIGS = niah_configs()


def pattern(template, **fields):
    """`template` as a regex: the named fields as given (escaped), every other {field} any text."""
    parts = re.split(r"(\{\w+\})", template)
    out = []
    for part in parts:
        m = re.fullmatch(r"\{(\w+)\}", part)
        if not m:
            out.append(re.escape(part))
        elif m.group(1) in fields:
            out.append(re.escape(fields[m.group(1)]))
        else:
            out.append("(?:.|\n)*?")
    return "".join(out)


def niah_expectation(task):
    c = NIAH_CONFIGS[task]
    template, type_v = RULER.niah.TEMPLATE, c["type_needle_v"]
    singular = c.get("num_needle_q", 1) * c.get("num_needle_v", 1) == 1
    if singular:  # prepare_niah.generate_input_output's replacements
        for old, new in [("Some", "A"), ("are all", "is"), ("are", "is"), ("answers", "answer")]:
            template = template.replace(old, new)
        type_v = type_v[:-1]
    prefix = ("The special magic {type_needle_v} for {query} mentioned in the provided text is" if singular
              else "The special magic {type_needle_v} for {query} mentioned in the provided text are")
    return pattern(template, type_needle_v=type_v), pattern(prefix, type_needle_v=type_v)


def split_template(full, answer_prefix):
    """lm_eval keeps some templates with their answer prefix appended: the two parts."""
    return full[: full.rindex(answer_prefix)], answer_prefix


def expectation(task):
    """(regex of the prompt's task text, regex of the answer prefix stripped, regex the task text starts at)."""
    if task in NIAH_CONFIGS:
        body, prefix = niah_expectation(task)
        return body, prefix, None
    if task == "vt":
        body, prefix = split_template(RULER.vt.TEMPLATE, RULER.vt.CONFIG["variable_tracking"]["answer_prefix"])
        return pattern(body, num_v="5"), pattern(prefix.strip(), num_v="5"), "Memorize and track"
    if task == "cwe":
        return pattern(RULER.cwe.CONFIG["template"]), pattern(RULER.cwe.CONFIG["answer_prefix"].strip()), "Below is"
    if task == "fwe":
        return pattern(RULER.fwe.CONFIG["template"]), pattern(RULER.fwe.CONFIG["answer_prefix"].strip()), None
    if task in ("qa_1", "qa_2"):
        return pattern(RULER.qa.CONFIG["template"]), pattern(RULER.qa.CONFIG["answer_prefix"].strip()), None
    raise SystemExit(f"unknown task {task}")


def predictions(outputs):
    """A fixed set of predictions from the references: all, some, none, cased, with control characters."""
    joined = ", ".join(outputs)
    return [joined, " " + joined.upper() + ".", outputs[0], outputs[-1] + " and more", "", "I do not know.",
            "\x01" + joined + "\x1f", " ".join(reversed(outputs)), joined[: max(1, len(joined) // 2)],
            "\n\n  " + outputs[0].lower() + "\t"]


def lm_eval_score(task, outputs, prediction):
    doc = {"outputs": outputs, "max_length": 4096}
    process = RULER.common.process_results_part if task.startswith("qa") else RULER.common.process_results
    return process(doc, [prediction])["4096"]


def check(cases_file):
    for line in open(cases_file, encoding="utf-8"):
        case = json.loads(line)
        task, text, prefix = case["task"], case["input"], case["answer_prefix"]
        body, prefix_pattern, start = expectation(task)
        if start is not None:  # after the worked example kvbench (as RULER) puts first
            text = text[text.rindex(start):]
        result = {"task": task, "template": re.fullmatch(body, text) is not None,
                  "prefix": re.fullmatch(prefix_pattern, prefix.strip()) is not None}
        if task in NIAH_CONFIGS:
            c = NIAH_CONFIGS[task]
            ours = case["config"]
            haystack = {"repeat": "noise"}.get(c["type_haystack"], c["type_haystack"])
            result["config"] = (ours["haystack"], ours["key_type"], ours["value_type"], ours["keys"], ours["values"],
                                ours["queries"]) == (haystack, c["type_needle_k"], c["type_needle_v"],
                                                     max(c.get("num_needle_k", 1), c.get("num_needle_q", 1)),
                                                     c.get("num_needle_v", 1), c.get("num_needle_q", 1))
        if task == "vt":  # lm_eval's answer prefix spells "assgined" (RULER's own constants.py: "assigned")
            result["prefix_with_lm_eval_spelling"] = re.fullmatch(
                prefix_pattern, prefix.strip().replace("assigned", "assgined")) is not None
        preds = predictions(case["outputs"])
        result["predictions"] = preds
        result["scores"] = [lm_eval_score(task, case["outputs"], p) for p in preds]
        print(json.dumps(result))


def samples(tokenizer_dir):
    from transformers import AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    made = {}
    stdout, sys.stdout = sys.stdout, sys.stderr
    try:
        for task in ["niah_single_1", "niah_multikey_2", "niah_multikey_3"]:
            c = NIAH_CONFIGS[task]
            haystack = RULER.niah.get_haystack(type_haystack=c["type_haystack"])
            made[task] = RULER.niah.generate_samples(haystack, TOKENIZER=tokenizer, **{**c, "num_samples": 2})
        made["vt"] = RULER.vt.sys_vartrack_w_noise_random(
            tokenizer=tokenizer, num_samples=2, max_seq_length=4096,
            icl_example=RULER.vt.sys_vartrack_w_noise_random(tokenizer=tokenizer, num_samples=1,
                                                             max_seq_length=500, incremental=5)[0])
        made["cwe"] = RULER.cwe.sys_word_pair_random(num_samples=2, max_seq_length=4096, tokenizer=tokenizer)
        made["fwe"] = RULER.fwe.sys_kwext(tokenizer=tokenizer, max_seq_length=4096, num_samples=2)
    finally:
        sys.stdout = stdout
    for task, docs in made.items():
        for doc in docs:
            preds = predictions(doc["outputs"])
            print(json.dumps({"task": task, "index": doc["index"], "input": doc["input"], "outputs": doc["outputs"],
                              "gen_prefix": doc["gen_prefix"], "max_length": doc["max_length"],
                              "predictions": preds, "scores": [lm_eval_score(task, doc["outputs"], p) for p in preds]}))


if __name__ == "__main__":
    {"check": check, "samples": samples}[sys.argv[1]](sys.argv[2])
