#!/usr/bin/env python3
"""The counter-causal paper's task protocols, computed by its own tasks.py, for kvbench's comparison
(tests/text/test_tasks_reference.cpp): prompts, --auto_frozen texts and token counts, answer extraction and
scores, and the NLTK Porter stems its LoCoMo scorer uses.

  reference_tasks.py SHARED_DIR LONGHEALTH_FIXTURE

tasks.py is imported in place from SHARED_DIR/reference/counter_causal (the test passes $KVBENCH_SHARED or
../shared), never copied; it needs nltk (else it does not stem) and math_verify. One JSON line per item:
  {"kind": "text", "key": k, "text": t}                a long shared string (a LoCoMo conversation, a Qasper
                                                        paper's sections), sent once
  {"kind": "file", "task": t, "path": p}               the dataset file the prompts below come from
  {"kind": "prompt", "task": t, "id": i, "parts": [...]}  the raw prompt, in sample order: the strings and
                                                        {"text": k} parts concatenated
  {"kind": "gold", "task": t, "id": i, "gold": g}      LongHealth's letter (null: none), Qasper's answers
  {"kind": "system", "task": t, "text": s, "tokens": {"qwen3": n, ...}}  what --auto_frozen counts
  {"kind": "math", "output": o, "pred": p|null, "gold": g, "correct": b}   extract_boxed_answer, compare_math
  {"kind": "letter", "output": o, "pred": p|null}      _extract_letter
  {"kind": "score", "task": t, "id": i, "output": o, "score": x}   _score_qasper / _score_locomo
  {"kind": "stem", "word": w, "stem": s}               nltk's PorterStemmer().stem
Outputs are seeded rewrites of the golds (tests/peers/reference_grade.py's for MATH500), model-like answers,
garbage and degenerate strings (empty, non-ASCII punctuation, long).
"""
import glob
import json
import multiprocessing
import os
import random
import re
import string
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def import_reference(shared):
    os.environ.setdefault("TQDM_DISABLE", "1")
    import transformers  # noqa: F401  (before the stand-in: transformers must see the real datasets, or none)
    stand_in = types.ModuleType("datasets")
    stand_in.load_dataset = lambda *a, **k: (_ for _ in ()).throw(RuntimeError("no hub in tests"))
    sys.modules["datasets"] = stand_in
    sys.path.insert(0, os.path.join(shared, "reference", "counter_causal"))
    import tasks
    import nltk.stem  # noqa: F401  (tasks.py silently skips stemming without it; the comparison needs it)
    assert tasks._stem("running") == "run", "tasks.py runs without nltk's stemmer"
    return tasks


def emit(**item):
    sys.stdout.write(json.dumps(item, ensure_ascii=False) + "\n")


def split_prompt(prompt, long_text, key):
    """The prompt as [before, {"text": key}, after] around long_text (sent once under key)."""
    i = prompt.find(long_text)
    return [prompt[:i], {"text": key}, prompt[i + len(long_text):]]


NOISE = ["“the", "the”", "‘a’", "—and—", "«an»", "the\u00a0end", "İstanbul", "ΣΟΦΊΑ", "café", "naïve", "\u3000the",
         "(the)", "A.", "AND", "an,", "x\u200by", "\t", "\u2028", "…"]


def rewrites(rng, gold):
    """Answers a model might give for `gold`, and some it should not."""
    words = gold.split()
    out = [gold, gold.upper(), gold.lower(), f"The answer is {gold}.", f"“{gold}”", gold.replace(" ", "\u00a0"),
           f"{gold}, {gold}", " , ".join(words[:3]), "", " ", ",", "the", "the, a, an", "no information available",
           "Not mentioned in the conversation.", "Unanswerable", "Yes, it does.", "No.", "yes no",
           " ".join(rng.sample(words, len(words))) if words else "x",
           " ".join(words[: max(1, len(words) // 2)]),
           " ".join(rng.choice(NOISE) + w for w in words),
           " ".join(w + rng.choice(NOISE) for w in words),
           "".join(rng.choice(string.printable + "“”‘’—–…éİΣ\u00a0") for _ in range(rng.randrange(0, 60))),
           gold + " " + " ".join(rng.choice(NOISE) for _ in range(3))]
    return out


def math_cases(tasks, problems, rng):
    sys.path.insert(0, HERE)
    import reference_grade as rg
    cases = []
    for row in problems:
        gold = row["answer"]
        styled = []
        for core, _rule, truth in rg.rewrites(gold, "math500", rng):
            styled += [o for o, _s, _t in rg.styles(core, truth, gold, rng)]
        outputs = rng.sample(styled, min(4, len(styled)))
        for o in outputs[:2]:  # prefixes: the stop rule sees every partial generation
            outputs.append(o[:rng.randrange(0, len(o) + 1)])
        outputs += rng.sample([o for o, _s, _t in rg.degenerate(gold, rng)], 3)
        outputs += [f"\\boxed{{{gold}}} then \\boxed{{{gold}", f"\\boxed {{{gold}}}", f"\\fbox{{{gold}}}",
                    f"\\boxed{{\u00a0{gold}\u2003}}", f"\\boxed{{{{{gold}}}}}", f"The answer is {gold}."]
        cases += [(o, gold) for o in outputs]
    return cases


def grade_math(chunk):
    import logging
    logging.disable(logging.CRITICAL)
    tasks = sys.modules.get("tasks") or __import__("tasks")
    out = []
    for output, gold in chunk:
        pred = tasks.extract_boxed_answer(output)
        out.append({"kind": "math", "output": output, "pred": pred, "gold": gold,
                    "correct": bool(tasks.compare_math(pred, gold))})
    return out


def main():
    shared, fixture = sys.argv[1], sys.argv[2]
    tasks = import_reference(shared)
    rng = random.Random(20260810)
    datasets = os.path.join(shared, "datasets")

    # --auto_frozen: evaluate.py's system_prompts table, counted as tokenizer.encode counts it.
    from tokenizers import Tokenizer
    systems = {"math500": tasks.MATH500_SYSTEM, "longhealth": tasks.LONGHEALTH_SYSTEM,
               "qasper-paper": tasks.QASPER_SYSTEM, "locomo-paper": tasks.LOCOMO_SYSTEM.format(speaker1="", speaker2="")}
    tokenizers = {name: Tokenizer.from_file(path) for path in sorted(glob.glob(os.path.join(shared, "tokenizers/*/tokenizer.json")))
                  for name in [os.path.basename(os.path.dirname(path))]}
    for task, text in systems.items():
        emit(kind="system", task=task, text=text,
             tokens={n: len(t.encode(text, add_special_tokens=True).ids) for n, t in tokenizers.items()})

    # MATH500: every problem's prompt; extraction and math-verify's verdict on seeded outputs.
    with open(os.path.join(datasets, "math500/test.jsonl")) as f:
        problems = [json.loads(line) for line in f if line.strip()]
    emit(kind="file", task="math500", path=os.path.join(datasets, "math500/test.jsonl"))
    for row in problems:
        emit(kind="prompt", task="math500", id=row["unique_id"], parts=[tasks.build_math500_prompt(row)])
    cases = math_cases(tasks, problems, rng)
    chunks = [cases[i:i + 50] for i in range(0, len(cases), 50)]
    with multiprocessing.get_context("fork").Pool(max(1, os.cpu_count() or 1)) as pool:
        for graded in pool.imap(grade_math, chunks):
            for item in graded:
                emit(**item)

    # LongHealth (the fixture; tasks.py's sample list, prompt and gold letter).
    with open(fixture) as f:
        data = json.load(f)
    emit(kind="file", task="longhealth", path=fixture)
    for pid, pd in data.items():
        context = "\n\n".join(pd["texts"].values())
        for q in pd["questions"]:
            sid = f"{pid}/q{q['No']}"
            emit(kind="prompt", task="longhealth", id=sid, parts=[tasks._build_longhealth_prompt(context, q)])
            emit(kind="gold", task="longhealth", id=sid, gold=tasks._longhealth_correct_letter(q))
    letters = ["A", "B", " C) x", "\n\nE", "Answer: D", "The answer is B", "based", "none", "", "  ", "é B", "ÄB",
               "(c) or (D)", "**B**", "abcde", "E.", "\u00a0B"]
    letters += ["".join(rng.choice(string.printable + "ÀÉ—") for _ in range(rng.randrange(0, 20))) for _ in range(400)]
    for o in letters:
        emit(kind="letter", output=o, pred=tasks._extract_letter(o))

    # Qasper: the dev split when present (the paper's), else the test split; papers in file order.
    qasper = sorted(glob.glob(os.path.join(datasets, "qasper/qasper-dev-*.json"))) or \
        sorted(glob.glob(os.path.join(datasets, "qasper/qasper-test-*.json")))
    with open(qasper[0]) as f:
        raw_data = json.load(f)
    emit(kind="file", task="qasper-paper", path=qasper[0])
    for pid, paper in raw_data.items():
        sections = tasks._build_qasper_context(paper)
        emit(kind="text", key="qasper:" + pid, text=sections)
        for qa in paper["qas"]:
            prompt = tasks._build_qasper_prompt({**paper, "id": pid}, qa["question"])
            golds = tasks._get_qasper_gold_answers(qa["answers"])
            emit(kind="prompt", task="qasper-paper", id=qa["question_id"], parts=split_prompt(prompt, sections, "qasper:" + pid))
            emit(kind="gold", task="qasper-paper", id=qa["question_id"], gold=golds)
            for o in {o for g in golds for o in rewrites(rng, g)}:
                emit(kind="score", task="qasper-paper", id=qa["question_id"], output=o, score=tasks._score_qasper(o, golds))

    # LoCoMo: run_locomo_task's prompt line and _score_locomo on every QA of every conversation.
    path = os.path.join(datasets, "locomo/locomo10.json")
    emit(kind="file", task="locomo-paper", path=path)
    with open(path) as f:
        conversations = json.load(f)
    words = set()
    for item in conversations:
        conv_text, speaker1, speaker2 = tasks._build_locomo_conversation(item["conversation"])
        key = "locomo:" + item["sample_id"]
        emit(kind="text", key=key, text=conv_text)
        for index, qa in enumerate(item["qa"]):
            cat, question, answer = qa.get("category", 1), qa.get("question", ""), qa.get("answer", "")
            template = tasks._LOCOMO_ADVERSARIAL_PROMPT if cat == 5 else tasks._LOCOMO_PROMPT
            prompt = template.format(speaker1=speaker1, speaker2=speaker2, conversation=conv_text, question=question)
            sid = f"{item['sample_id']}/q{index}"
            emit(kind="prompt", task="locomo-paper", id=sid, parts=split_prompt(prompt, conv_text, key))
            for o in set(rewrites(rng, str(answer)) + rewrites(rng, str(qa.get("adversarial_answer", "")))):
                emit(kind="score", task="locomo-paper", id=sid, output=o, score=tasks._score_locomo(o, answer, cat))
        words.update(t for t in str(item).lower().translate(str.maketrans("", "", string.punctuation)).split()
                     if t not in {"a", "an", "the", "and"})
    # Every word of the file as _normalize_locomo sees it, stemmed by nltk (kvbench has its own Porter port).
    for w in sorted(words):
        emit(kind="stem", word=w, stem=tasks._stem(w))


if __name__ == "__main__":
    main()
