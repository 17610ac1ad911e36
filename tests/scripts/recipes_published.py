"""Every published cell of recipes/*.json against a table written by hand from the paper notes in
../shared/papers (not from the recipes), each citing the line it comes from, so a future edit of a
recipe cannot drift silently. Checked both ways: each listed cell is in its recipe with that value, and
each published value in a recipe is listed. DMS cells must sit on reference rows (a method kvbench
cannot run), the others on rows with jobs. With ../shared, each cited line must hold the number.

usage: recipes_published.py RECIPES_DIR [PAPERS_DIR]
"""
import glob
import json
import os
import sys

CC, KV = "000_4f57797a551d231b.txt", "004_eec6da487b1d4063.txt"  # the two papers' notes
CC_ID, KV_ID = "arXiv 2607.27600", "arXiv 2607.05061"

# (paper, table, metric, row, column, published text, notes file, line). "<1" is a bound ("under 1 ms").
CELLS = [
    # Counter-causal Table 1 (Qwen2.5-7B, RTX 4090, fp16): refresh latency, time per sample, peak memory.
    (CC_ID, "Table 1", "refresh_ms", "counter-causal (full)", "n=512", "54", CC, 170),
    (CC_ID, "Table 1", "refresh_ms", "counter-causal (full)", "n=4096", "496", CC, 170),
    (CC_ID, "Table 1", "refresh_ms", "counter-causal fast", "n=512", "7.9", CC, 170),
    (CC_ID, "Table 1", "refresh_ms", "counter-causal fast", "n=4096", "52.6", CC, 170),
    (CC_ID, "Table 1", "refresh_ms", "H2O", "n=512", "<1", CC, 170),
    (CC_ID, "Table 1", "refresh_ms", "H2O", "n=4096", "<1", CC, 170),
    (CC_ID, "Table 1", "refresh_ms", "importance", "n=512", "<1", CC, 170),
    (CC_ID, "Table 1", "refresh_ms", "importance", "n=4096", "<1", CC, 170),
    (CC_ID, "Table 1", "seconds_per_sample", "counter-causal", "Qwen2.5-7B", "10.2", CC, 170),
    (CC_ID, "Table 1", "seconds_per_sample", "counter-causal fast", "Qwen2.5-7B", "10.2", CC, 170),
    (CC_ID, "Table 1", "seconds_per_sample", "without eviction", "Qwen2.5-7B", "10.6", CC, 170),
    (CC_ID, "Table 1", "peak_memory_gb", "counter-causal", "Qwen2.5-7B", "16.0", CC, 170),
    (CC_ID, "Table 1", "peak_memory_gb", "counter-causal fast", "Qwen2.5-7B", "15.6", CC, 170),
    (CC_ID, "Table 1", "peak_memory_gb", "without eviction", "Qwen2.5-7B", "15.4", CC, 170),
    # Counter-causal Table 2: MATH500 accuracy (%), J = 512, h = 256.
    (CC_ID, "Table 2", "score", "counter-causal", "Qwen2.5-3B", "60.2", CC, 172),
    (CC_ID, "Table 2", "score", "counter-causal", "Qwen2.5-7B", "74.4", CC, 172),
    (CC_ID, "Table 2", "score", "counter-causal", "Qwen2.5-14B", "75.8", CC, 172),
    (CC_ID, "Table 2", "score", "counter-causal", "Llama-3.1-8B", "48.2", CC, 172),
    (CC_ID, "Table 2", "score", "full cache", "Llama-3.1-8B", "48.8", CC, 172),
    (CC_ID, "Table 2", "score", "H2O", "Qwen2.5-7B", "76.2", CC, 172),
    (CC_ID, "Table 2", "score", "H2O", "Qwen2.5-3B", "52.6", CC, 300),
    (CC_ID, "Table 2", "score", "H2O", "Qwen2.5-14B", "64.6", CC, 300),
    (CC_ID, "Table 2", "score", "counter-causal fast", "Qwen2.5-7B", "73.6", CC, 93),
    # Counter-causal Table 3: AIME, Qwen3-8B thinking, J = 4096.
    (CC_ID, "Table 3", "score", "Qwen3-8B", "counter-causal", "36.7", CC, 178),
    (CC_ID, "Table 3", "score", "Qwen3-8B", "sliding", "26.7", CC, 178),
    (CC_ID, "Table 3", "score", "Qwen3-8B", "importance", "14.4", CC, 178),
    (CC_ID, "Table 3", "score", "Qwen3-8B", "H2O", "33.3", CC, 178),
    (CC_ID, "Table 3", "score", "Qwen3-8B", "full", "50.0", CC, 178),
    (CC_ID, "Table 3", "pred_none", "Qwen3-8B", "counter-causal", "57", CC, 178),
    (CC_ID, "Table 3", "pred_none", "Qwen3-8B", "importance", "83", CC, 178),
    # KVpop Table 1: average pass@1 over AIME24, AIME25, HMMT Feb and Nov 2025 (line 119).
    (KV_ID, "Table 1", "score", "teacher", "Qwen3-4B 75%", ".45", KV, 121),
    (KV_ID, "Table 1", "score", "teacher", "Qwen3-8B 75%", ".43", KV, 121),
    (KV_ID, "Table 1", "score", "KVpop", "Qwen3-4B 75%", ".44", KV, 121),
    (KV_ID, "Table 1", "score", "KVpop", "Qwen3-8B 75%", ".44", KV, 121),
    (KV_ID, "Table 1", "score", "DMS", "Qwen3-4B 75%", ".43", KV, 121),
    (KV_ID, "Table 1", "score", "DMS", "Qwen3-8B 75%", ".41", KV, 121),
    (KV_ID, "Table 1", "score", "StreamingLLM", "Qwen3-4B 88%", ".21", KV, 121),
    (KV_ID, "Table 1", "score", "TOVA", "Qwen3-4B 88%", ".26", KV, 121),
    (KV_ID, "Table 1", "score", "KVpop", "Qwen3-4B 88%", ".44", KV, 121),
    (KV_ID, "Table 1", "score", "StreamingLLM", "Qwen3-8B 88%", ".08", KV, 121),
    (KV_ID, "Table 1", "score", "TOVA", "Qwen3-8B 88%", ".08", KV, 121),
    (KV_ID, "Table 1", "score", "KVpop", "Qwen3-8B 88%", ".43", KV, 121),
    # KVpop Table 2: Qwen3-4B on GPQA-Diamond and LiveCodeBench v6 (line 127).
    (KV_ID, "Table 2", "score", "teacher", "GPQA-D 75%", ".59", KV, 129),
    (KV_ID, "Table 2", "score", "teacher", "LCB 75%", ".35", KV, 129),
    (KV_ID, "Table 2", "score", "KVpop", "GPQA-D 75%", ".57", KV, 129),
    (KV_ID, "Table 2", "score", "KVpop", "LCB 75%", ".33", KV, 129),
    (KV_ID, "Table 2", "score", "KVpop-MLP", "GPQA-D 75%", ".59", KV, 129),
    (KV_ID, "Table 2", "score", "KVpop-MLP", "LCB 75%", ".35", KV, 129),
    (KV_ID, "Table 2", "score", "DMS", "GPQA-D 75%", ".55", KV, 129),
    (KV_ID, "Table 2", "score", "DMS", "LCB 75%", ".37", KV, 129),
    (KV_ID, "Table 2", "score", "KVpop", "GPQA-D 88%", ".56", KV, 129),
    (KV_ID, "Table 2", "score", "KVpop", "LCB 88%", ".34", KV, 129),
]
REFERENCE_ROWS = {"DMS"}  # published methods kvbench cannot run (they need a retrofitted model)


def fail(message):
    sys.exit("FAIL: " + message)


def recipe_cells(recipes_dir):
    """(paper, table, metric, row, column) → (published JSON value, row is a reference row), from every recipe."""
    cells = {}
    for path in sorted(glob.glob(os.path.join(recipes_dir, "*.json"))):
        recipe = json.load(open(path))["recipe"]
        cite = recipe["cite"]
        paper = CC_ID if CC_ID in cite else KV_ID if KV_ID in cite else None
        for table in recipe["tables"]:
            references = {row["name"] for row in table["rows"] if "reference" in row}
            for row, columns in table.get("published", {}).items():
                for column, value in columns.items():
                    if value is None:
                        continue  # the paper prints no number there
                    if paper is None:
                        fail(f"{path}: published value {row} / {column} in a recipe that cites neither paper")
                    number = cite.split(", ")[-1]
                    key = (paper, number, table.get("metric", "score"), row, column)
                    if key in cells:
                        fail(f"{path}: {key} is published twice")
                    cells[key] = (value, row in references, path)
    return cells


def expected_value(text):
    return {"below": 1} if text == "<1" else float(text)


def main():
    recipes_dir = sys.argv[1]
    papers_dir = sys.argv[2] if len(sys.argv) > 2 else ""
    cells = recipe_cells(recipes_dir)
    for paper, table, metric, row, column, text, notes, line in CELLS:
        key = (paper, table, metric, row, column)
        if key not in cells:
            fail(f"{key} (notes {notes}:{line}) is in no recipe")
        value, on_reference_row, path = cells.pop(key)
        if value != expected_value(text):
            fail(f"{path}: {key} is {value}, the notes ({notes}:{line}) say {text}")
        if on_reference_row != (row in REFERENCE_ROWS):
            fail(f"{path}: {key} must {'' if row in REFERENCE_ROWS else 'not '}be on a reference row")
        if papers_dir:
            cited = open(os.path.join(papers_dir, notes), encoding="utf-8").read().split("\n")[line - 1]
            if (text.lstrip("<") + ("ms" if text == "<1" else "")) not in cited:
                fail(f"{notes}:{line} does not hold {text} ({key})")
    if cells:
        fail(f"published in a recipe but not in the notes' table: {sorted(cells)}")
    print(f"ok: {len(CELLS)} published cells")


main()
