"""Every published cell of recipes/*.json against a table written by hand from the paper notes in
../shared/papers (not from the recipes), each citing the line it comes from, so a future edit of a
recipe cannot drift silently. Checked both ways: each listed cell is in its recipe with that value, and
each published value in a recipe is listed. DMS cells must sit on reference rows (a method kvbench
cannot run), the others on rows with jobs.

With ../shared (PAPERS_DIR; its parent holds DESIGN.md and reference/), each cited line (or block of lines)
must hold the number, and must place it in the cell's row and column: every cell lists the text on the
line that holds the number (`at`, once in it) and, where `at` alone does not name them, the text naming
its row (`row_at`) and its column (`col_at`). Row and column labels are recognised in that text by the
forms in FORMS (the notes' wording: 反因果 = counter-causal, 75% 压缩 = 75%, ...; matching ignores case,
spaces and $); a label of several parts ("Qwen3-4B 75%") needs all of them. The row text must name the
cell's row and no other row of its recipe table, the column text likewise; where the number stands in a
list (".21/.26", "60.2% vs 52.6%", "7.9ms 和 52.6ms") and the text names as many labels as the list has
numbers, the label in the number's place is the one named. A cell moved to another row or column, with
or without its entry here, fails.

usage: recipes_published.py RECIPES_DIR [PAPERS_DIR]
"""
import glob
import json
import os
import re
import sys

CC, KV = "000_4f57797a551d231b.txt", "004_eec6da487b1d4063.txt"  # the two papers' notes (in PAPERS_DIR)
DESIGN = "DESIGN.md"  # ../shared/DESIGN.md: §2 "Reference results" holds Table 2 values the notes omit
UPSTREAM = "reference/counter_causal/README.upstream.md"  # the paper's code's README, also accepted as a source
SOURCES = {CC: "papers", KV: "papers", DESIGN: ".", UPSTREAM: "."}  # where each source lies under ../shared
CC_ID, KV_ID = "arXiv 2607.27600", "arXiv 2607.05061"


def cell(paper, table, metric, row, column, text, source, line, at, row_at=(), col_at=(), written=None, scale=1):
    """text: the value as the recipe publishes it ("<1" is a bound, "under 1 ms"); line: a line number or a
    (first, last) block; written: the number as the source writes it, when it differs (".766" for 76.6, scale
    100)."""
    return dict(paper=paper, table=table, metric=metric, row=row, column=column, text=text, source=source,
                line=line, at=at, row_at=tuple(row_at), col_at=tuple(col_at), written=written or text, scale=scale)


# Notes 000 line 170 (Table 1), 172 and 300 (Table 2), 93 (Table 2's fast cell), 178 (Table 3); notes 004
# line 121 (KVpop Table 1) and 129 (KVpop Table 2); DESIGN.md lines 80-82 (Table 2 cells the notes omit).
L170_N = "在缓存大小 $n=512$ 时耗时 54ms，$n=4096$"
CELLS = [
    # Counter-causal Table 1 (Qwen2.5-7B, RTX 4090, fp16): refresh latency, time per sample, peak memory.
    cell(CC_ID, "Table 1", "refresh_ms", "counter-causal (full)", "n=512", "54", CC, 170,
         "$n=512$ 时耗时 54ms", row_at=["完整的 $L$ 层反因果传播"]),
    cell(CC_ID, "Table 1", "refresh_ms", "counter-causal (full)", "n=4096", "496", CC, 170,
         "$n=4096$ 时耗时 496ms", row_at=["完整的 $L$ 层反因果传播"]),
    cell(CC_ID, "Table 1", "refresh_ms", "counter-causal fast", "n=512", "7.9", CC, 170,
         "快速单层近似把这个开销压到 7.9ms 和 52.6ms", col_at=[L170_N]),
    cell(CC_ID, "Table 1", "refresh_ms", "counter-causal fast", "n=4096", "52.6", CC, 170,
         "快速单层近似把这个开销压到 7.9ms 和 52.6ms", col_at=[L170_N]),
    cell(CC_ID, "Table 1", "refresh_ms", "H2O", "n=512", "<1", CC, 170, "基于注意力的基线方法耗时不到 1ms",
         col_at=["$n=512$ 时"], written="1"),
    cell(CC_ID, "Table 1", "refresh_ms", "H2O", "n=4096", "<1", CC, 170, "基于注意力的基线方法耗时不到 1ms",
         col_at=["$n=4096$ 时"], written="1"),
    cell(CC_ID, "Table 1", "refresh_ms", "importance", "n=512", "<1", CC, 170, "基于注意力的基线方法耗时不到 1ms",
         col_at=["$n=512$ 时"], written="1"),
    cell(CC_ID, "Table 1", "refresh_ms", "importance", "n=4096", "<1", CC, 170, "基于注意力的基线方法耗时不到 1ms",
         col_at=["$n=4096$ 时"], written="1"),
    cell(CC_ID, "Table 1", "seconds_per_sample", "counter-causal", "Qwen2.5-7B", "10.2", CC, 170,
         "两个反因果变体都是 10.2s", col_at=["在 Qwen2.5-7B 上"]),
    cell(CC_ID, "Table 1", "seconds_per_sample", "counter-causal fast", "Qwen2.5-7B", "10.2", CC, 170,
         "两个反因果变体都是 10.2s", col_at=["在 Qwen2.5-7B 上"]),
    cell(CC_ID, "Table 1", "seconds_per_sample", "without eviction", "Qwen2.5-7B", "10.6", CC, 170,
         "不淘汰基线（10.6s）", col_at=["在 Qwen2.5-7B 上"]),
    cell(CC_ID, "Table 1", "peak_memory_gb", "counter-causal", "Qwen2.5-7B", "16.0", CC, 170, "完整版 16.0GB",
         col_at=["在 Qwen2.5-7B 上"]),
    cell(CC_ID, "Table 1", "peak_memory_gb", "counter-causal fast", "Qwen2.5-7B", "15.6", CC, 170, "快速版 15.6GB",
         col_at=["在 Qwen2.5-7B 上"]),
    cell(CC_ID, "Table 1", "peak_memory_gb", "without eviction", "Qwen2.5-7B", "15.4", CC, 170, "对比基线的 15.4GB",
         col_at=["在 Qwen2.5-7B 上"]),
    # Counter-causal Table 2: MATH500 accuracy (%), J = 512, h = 256.
    cell(CC_ID, "Table 2", "score", "counter-causal", "Qwen2.5-3B", "60.2", CC, 172, "Qwen2.5-3B 上 60.2%",
         row_at=["反因果方法在 4 个模型中的 3 个上是最好的淘汰方法"]),
    cell(CC_ID, "Table 2", "score", "counter-causal", "Qwen2.5-7B", "74.4", CC, 172, "Qwen2.5-7B 上 74.4%",
         row_at=["反因果方法在 4 个模型中的 3 个上是最好的淘汰方法"]),
    cell(CC_ID, "Table 2", "score", "counter-causal", "Qwen2.5-14B", "75.8", CC, 172, "Qwen2.5-14B 上 75.8%",
         row_at=["反因果方法在 4 个模型中的 3 个上是最好的淘汰方法"]),
    cell(CC_ID, "Table 2", "score", "counter-causal", "Llama-3.1-8B", "48.2", CC, 172, "在 LLaMA-3.1-8B 上它达到 48.2%",
         row_at=["反因果方法在 4 个模型中的 3 个上是最好的淘汰方法"]),
    cell(CC_ID, "Table 2", "score", "full cache", "Llama-3.1-8B", "48.8", CC, 172, "几乎追平 48.8% 的不淘汰上限",
         col_at=["在 LLaMA-3.1-8B 上"]),
    cell(CC_ID, "Table 2", "score", "H2O", "Qwen2.5-7B", "76.2", CC, 172, "H2O 在这一个模型上以 76.2%",
         col_at=["Qwen2.5-7B 上 74.4%（不过"]),
    cell(CC_ID, "Table 2", "score", "H2O", "Qwen2.5-3B", "52.6", CC, 300, "在 Qwen2.5-3B 上，反因果比 H2O 高 7.6 个百分点（60.2% vs 52.6%）"),
    cell(CC_ID, "Table 2", "score", "H2O", "Qwen2.5-14B", "64.6", CC, 300, "75.8% vs 64.6%",
         row_at=["反因果比 H2O"], col_at=["到了 Qwen2.5-14B"]),
    cell(CC_ID, "Table 2", "score", "counter-causal fast", "Qwen2.5-7B", "73.6", CC, 93, "Qwen2.5-7B 上 MATH500 的 73.6%",
         row_at=["快速近似"]),
    # Table 2 values the notes omit: DESIGN.md §2 "Reference results (H100, fp16, MATH500, J=512, h=256)", as fractions.
    cell(CC_ID, "Table 2", "score", "full cache", "Qwen2.5-7B", "76.6", DESIGN, (80, 82), "Qwen2.5-7B full .766",
         written=".766", scale=100),
    cell(CC_ID, "Table 2", "score", "sliding", "Qwen2.5-7B", "69.2", DESIGN, (80, 82), "sliding .692",
         col_at=["Qwen2.5-7B full"], written=".692", scale=100),
    cell(CC_ID, "Table 2", "score", "sliding", "Llama-3.1-8B", "45.8", DESIGN, (80, 82), "sliding .458",
         col_at=["Llama-3.1-8B full"], written=".458", scale=100),
    cell(CC_ID, "Table 2", "score", "H2O", "Llama-3.1-8B", "46.4", DESIGN, (80, 82), "H2O .464",
         col_at=["Llama-3.1-8B full"], written=".464", scale=100),
    cell(CC_ID, "Table 2", "score", "counter-causal fast", "Llama-3.1-8B", "48.0", DESIGN, (80, 82), "fast .480",
         col_at=["Llama-3.1-8B full"], written=".480", scale=100),
    # Counter-causal Table 3: AIME, Qwen3-8B thinking, J = 4096.
    cell(CC_ID, "Table 3", "score_after_think", "Qwen3-8B", "counter-causal", "36.7", CC, 178, "反因果方法达到 36.7%",
         row_at=["Qwen3-8B 处于思考模式"]),
    cell(CC_ID, "Table 3", "score_after_think", "Qwen3-8B", "sliding", "26.7", CC, 178, "滑动窗口 26.7%", row_at=["Qwen3-8B 处于思考模式"]),
    cell(CC_ID, "Table 3", "score_after_think", "Qwen3-8B", "importance", "14.4", CC, 178, "重要性采样 14.4%",
         row_at=["Qwen3-8B 处于思考模式"]),
    cell(CC_ID, "Table 3", "score_after_think", "Qwen3-8B", "H2O", "33.3", CC, 178, "H2O 33.3%", row_at=["Qwen3-8B 处于思考模式"]),
    cell(CC_ID, "Table 3", "score_after_think", "Qwen3-8B", "full", "50.0", CC, 178, "50.0% 的不受限缓存上限",
         row_at=["Qwen3-8B 处于思考模式"]),
    cell(CC_ID, "Table 3", "pred_none_think", "Qwen3-8B", "counter-causal", "57", CC, 178, "它的 pred=None 比例也相对较低（57%",
         row_at=["Qwen3-8B 处于思考模式"], col_at=["反因果方法达到"]),
    cell(CC_ID, "Table 3", "pred_none_think", "Qwen3-8B", "importance", "83", CC, 178, "对比重要性采样的 83%",
         row_at=["Qwen3-8B 处于思考模式"]),
    # KVpop Table 1: average pass@1 over AIME24, AIME25, HMMT Feb and Nov 2025 (line 119), and relative to teacher.
    cell(KV_ID, "Table 1", "score", "teacher", "Qwen3-4B 75%", ".45", KV, 121, "Qwen3-4B teacher 平均 pass@1 是 .45",
         col_at=["先看 75% 压缩"]),
    cell(KV_ID, "Table 1", "score", "teacher", "Qwen3-8B 75%", ".43", KV, 121, "Qwen3-8B teacher 平均 .43",
         col_at=["先看 75% 压缩"]),
    cell(KV_ID, "Table 1", "score", "KVpop", "Qwen3-4B 75%", ".44", KV, 121, "KVpop 达到 .44，相对 teacher 为 .98",
         col_at=["先看 75% 压缩：Qwen3-4B"]),
    cell(KV_ID, "Table 1", "score", "KVpop", "Qwen3-8B 75%", ".44", KV, 121, "KVpop 达到 .44，相对值显示为 1.00",
         col_at=["先看 75% 压缩", "Qwen3-8B teacher"]),
    cell(KV_ID, "Table 1", "score", "DMS", "Qwen3-4B 75%", ".43", KV, 121, "DMS 在 Qwen3-4B 平均 .43",
         col_at=["先看 75% 压缩"]),
    cell(KV_ID, "Table 1", "score", "DMS", "Qwen3-8B 75%", ".41", KV, 121, "在 Qwen3-8B 平均 .41",
         row_at=["DMS 在 Qwen3-4B"], col_at=["先看 75% 压缩"]),
    cell(KV_ID, "Table 1", "score", "StreamingLLM", "Qwen3-4B 88%", ".21", KV, 121,
         "StreamingLLM 和 TOVA 在 Qwen3-4B 平均只到 .21/.26", col_at=["更激进的 88% 压缩"]),
    cell(KV_ID, "Table 1", "score", "TOVA", "Qwen3-4B 88%", ".26", KV, 121,
         "StreamingLLM 和 TOVA 在 Qwen3-4B 平均只到 .21/.26", col_at=["更激进的 88% 压缩"]),
    cell(KV_ID, "Table 1", "score", "KVpop", "Qwen3-4B 88%", ".44", KV, 121, "KVpop 达到 .44，相对 .97",
         col_at=["更激进的 88% 压缩", "在 Qwen3-4B 平均只到"]),
    cell(KV_ID, "Table 1", "score", "StreamingLLM", "Qwen3-8B 88%", ".08", KV, 121, "StreamingLLM 和 TOVA 平均都只有 .08",
         col_at=["Qwen3-8B 上", "更激进的 88% 压缩"]),
    cell(KV_ID, "Table 1", "score", "TOVA", "Qwen3-8B 88%", ".08", KV, 121, "StreamingLLM 和 TOVA 平均都只有 .08",
         col_at=["Qwen3-8B 上", "更激进的 88% 压缩"]),
    cell(KV_ID, "Table 1", "score", "KVpop", "Qwen3-8B 88%", ".43", KV, 121, "而 KVpop 达到 .43，相对 1.00",
         col_at=["Qwen3-8B 上", "更激进的 88% 压缩"]),
    cell(KV_ID, "Table 1", "relative_score", "KVpop", "Qwen3-4B 75%", ".98", KV, 121, "KVpop 达到 .44，相对 teacher 为 .98",
         col_at=["先看 75% 压缩：Qwen3-4B"]),
    cell(KV_ID, "Table 1", "relative_score", "KVpop", "Qwen3-8B 75%", "1.00", KV, 121, "KVpop 达到 .44，相对值显示为 1.00",
         col_at=["先看 75% 压缩", "Qwen3-8B teacher"]),
    cell(KV_ID, "Table 1", "relative_score", "DMS", "Qwen3-4B 75%", ".96", KV, 121, "DMS 在 Qwen3-4B 平均 .43、相对 .96",
         col_at=["先看 75% 压缩"]),
    cell(KV_ID, "Table 1", "relative_score", "DMS", "Qwen3-8B 75%", ".95", KV, 121, "在 Qwen3-8B 平均 .41、相对 .95",
         row_at=["DMS 在 Qwen3-4B"], col_at=["先看 75% 压缩"]),
    cell(KV_ID, "Table 1", "relative_score", "StreamingLLM", "Qwen3-4B 88%", ".47", KV, 121,
         "StreamingLLM 和 TOVA 在 Qwen3-4B 平均只到 .21/.26，相对 .47/.58", col_at=["更激进的 88% 压缩"]),
    cell(KV_ID, "Table 1", "relative_score", "TOVA", "Qwen3-4B 88%", ".58", KV, 121,
         "StreamingLLM 和 TOVA 在 Qwen3-4B 平均只到 .21/.26，相对 .47/.58", col_at=["更激进的 88% 压缩"]),
    cell(KV_ID, "Table 1", "relative_score", "KVpop", "Qwen3-4B 88%", ".97", KV, 121, "KVpop 达到 .44，相对 .97",
         col_at=["更激进的 88% 压缩", "在 Qwen3-4B 平均只到"]),
    cell(KV_ID, "Table 1", "relative_score", "KVpop", "Qwen3-8B 88%", "1.00", KV, 121, "而 KVpop 达到 .43，相对 1.00",
         col_at=["Qwen3-8B 上", "更激进的 88% 压缩"]),
    # KVpop Table 2: Qwen3-4B on GPQA-Diamond and LiveCodeBench v6 (line 127).
    cell(KV_ID, "Table 2", "score", "teacher", "GPQA-D 75%", ".59", KV, 129, "Qwen3-4B teacher 在 GPQA-D/LCB 上为 .59/.35",
         col_at=["75% 压缩下"]),
    cell(KV_ID, "Table 2", "score", "teacher", "LCB 75%", ".35", KV, 129, "Qwen3-4B teacher 在 GPQA-D/LCB 上为 .59/.35",
         col_at=["75% 压缩下"]),
    cell(KV_ID, "Table 2", "score", "KVpop", "GPQA-D 75%", ".57", KV, 129, "GPQA-D/LCB 上为 .59/.35，KVpop 为 .57/.33",
         col_at=["75% 压缩下"]),
    cell(KV_ID, "Table 2", "score", "KVpop", "LCB 75%", ".33", KV, 129, "GPQA-D/LCB 上为 .59/.35，KVpop 为 .57/.33",
         col_at=["75% 压缩下"]),
    cell(KV_ID, "Table 2", "score", "KVpop-MLP", "GPQA-D 75%", ".59", KV, 129, "KVpop MLP 为 .59/.35",
         col_at=["75% 压缩下", "GPQA-D/LCB"]),
    cell(KV_ID, "Table 2", "score", "KVpop-MLP", "LCB 75%", ".35", KV, 129, "KVpop MLP 为 .59/.35",
         col_at=["75% 压缩下", "GPQA-D/LCB"]),
    cell(KV_ID, "Table 2", "score", "DMS", "GPQA-D 75%", ".55", KV, 129, "DMS 为 .55/.37", col_at=["75% 压缩下", "GPQA-D/LCB"]),
    cell(KV_ID, "Table 2", "score", "DMS", "LCB 75%", ".37", KV, 129, "DMS 为 .55/.37", col_at=["75% 压缩下", "GPQA-D/LCB"]),
    cell(KV_ID, "Table 2", "score", "KVpop", "GPQA-D 88%", ".56", KV, 129, "88% 压缩下，KVpop 为 .56/.34",
         col_at=["GPQA-D/LCB"]),
    cell(KV_ID, "Table 2", "score", "KVpop", "LCB 88%", ".34", KV, 129, "88% 压缩下，KVpop 为 .56/.34",
         col_at=["GPQA-D/LCB"]),
]
REFERENCE_ROWS = {"DMS"}  # published methods kvbench cannot run (they need a retrofitted model)

# How the sources write the recipes' labels. A label is one part, or the parts PARTS gives it (all must be
# named); a part is named by any of its forms (default: the part itself). GROUPS: one phrase naming several
# parts at once (the number holds for each). NEUTRAL: phrases that contain a label but do not name it.
PARTS = {
    "Qwen3-4B 75%": ["Qwen3-4B", "75%"], "Qwen3-8B 75%": ["Qwen3-8B", "75%"],
    "Qwen3-4B 88%": ["Qwen3-4B", "88%"], "Qwen3-8B 88%": ["Qwen3-8B", "88%"],
    "GPQA-D 75%": ["GPQA-D", "75%"], "LCB 75%": ["LCB", "75%"], "GPQA-D 88%": ["GPQA-D", "88%"], "LCB 88%": ["LCB", "88%"],
}
FORMS = {
    "counter-causal": ["counter-causal", "反因果", "完整版"],
    "counter-causal (full)": ["完整的 $L$ 层反因果传播"],
    "counter-causal fast": ["fast", "快速近似", "快速单层近似", "快速版"],
    "full cache": ["full", "不淘汰"],
    "full": ["full", "不受限缓存"],
    "without eviction": ["不淘汰", "基线"],
    "sliding": ["sliding", "滑动窗口"],
    "importance": ["importance", "重要性采样"],
    "75%": ["75% 压缩"], "88%": ["88% 压缩"],
    "KVpop-MLP": ["KVpop MLP", "KVpop-MLP"],
}
GROUPS = {
    "两个反因果变体": ["counter-causal", "counter-causal fast"],
    "基于注意力的基线方法": ["H2O", "importance"],
    "StreamingLLM 和 TOVA 平均都": ["StreamingLLM", "TOVA"],
}
NEUTRAL = ["相对 teacher"]


def fail(message):
    sys.exit("FAIL: " + message)


def norm(text):
    return re.sub(r"[\s$]", "", text).lower()


def recipe_cells(recipes_dir):
    """(paper, table, metric, row, column) → (published JSON value, row is a reference row, path, the
    table's row names, its column names), from every recipe."""
    cells = {}
    for path in sorted(glob.glob(os.path.join(recipes_dir, "*.json"))):
        recipe = json.load(open(path))["recipe"]
        cite = recipe["cite"]
        paper = CC_ID if CC_ID in cite else KV_ID if KV_ID in cite else None
        for table in recipe["tables"]:
            references = {row["name"] for row in table["rows"] if "reference" in row}
            names = ([row["name"] for row in table["rows"]], [column["name"] for column in table["columns"]])
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
                    cells[key] = (value, row in references, path) + names
    return cells


def expected_value(text):
    return {"below": 1} if text == "<1" else float(text)


def number_place(at, written):
    """Where `written` stands in `at` (which must hold it once, as a whole number): (k, n) when it is the
    k-th of a list of n numbers joined by '/', 'vs' or '和', else None."""
    number = re.compile(r"(?<![\d.])" + re.escape(written) + r"(?![\d])")
    hits = [m.start() for m in number.finditer(at)]
    if len(hits) != 1:
        return "missing" if not hits else "twice"
    item = r"[\d.]+(?:%|ms|s|GB)?"
    for group in re.finditer(item + r"(?:\s*(?:/|vs|和)\s*" + item + r")+", at):
        if group.start() <= hits[0] < group.end():
            items = [m.start() + group.start() for m in re.finditer(item, group.group())]
            return (items.index(hits[0]), len(items)) if hits[0] in items else None
    return None


def named(texts, labels, place):
    """The labels (of `labels`) each text names, as a list per text of spans, each span the set of
    (label, part) it names, longest forms first and non-overlapping; a text naming as many labels as the
    number's list has numbers names only the one in the number's place."""
    forms = {}
    for label in labels:
        for part in PARTS.get(label, [label]):
            for form in FORMS.get(part, [part]):
                forms.setdefault(norm(form), set()).add((label, part))
    for phrase, parts in GROUPS.items():
        for label in labels:
            for part in PARTS.get(label, [label]):
                if part in parts:
                    forms.setdefault(norm(phrase), set()).add((label, part))
    for phrase in NEUTRAL:
        forms.setdefault(norm(phrase), set())
    spans = []
    for text in texts:
        text = norm(text)
        taken, found = [False] * len(text), []
        for form in sorted(forms, key=len, reverse=True):
            for m in re.finditer(re.escape(form), text):
                if not any(taken[m.start():m.end()]):
                    taken[m.start():m.end()] = [True] * (m.end() - m.start())
                    if forms[form]:
                        found.append((m.start(), forms[form]))
        found = [parts for _, parts in sorted(found, key=lambda item: item[0])]
        if isinstance(place, tuple) and place[1] > 1 and len(found) == place[1]:
            found = [found[place[0]]]
        spans += found
    return spans


def check_names(entry, kind, label, labels, texts, place):
    """The texts name `label` (every part of it) and nothing else among `labels`."""
    spans = named(texts, labels, place)
    where = f"{entry['source']}:{entry['line']} ({kind} of {entry['table']} {entry['metric']} {entry['row']} / {entry['column']})"
    for parts in spans:
        if not any(name == label for name, _ in parts):
            others = sorted({name for name, _ in parts})
            fail(f"{where}: the text {list(texts)} names {kind} {' or '.join(others)}, not {label!r}")
    for part in PARTS.get(label, [label]):
        if not any((label, part) in parts for parts in spans):
            fail(f"{where}: the text {list(texts)} does not name {kind} {label!r} ({part!r})")


def source_text(shared_dir, source, line):
    path = os.path.join(shared_dir, SOURCES[source], source)
    lines = open(path, encoding="utf-8").read().split("\n")
    first, last = line if isinstance(line, tuple) else (line, line)
    return " ".join(text.strip() for text in lines[first - 1:last])


def main():
    recipes_dir = sys.argv[1]
    papers_dir = sys.argv[2] if len(sys.argv) > 2 else ""
    cells = recipe_cells(recipes_dir)
    for entry in CELLS:
        key = (entry["paper"], entry["table"], entry["metric"], entry["row"], entry["column"])
        text, source, line = entry["text"], entry["source"], entry["line"]
        if key not in cells:
            fail(f"{key} ({source}:{line}) is in no recipe")
        value, on_reference_row, path, rows, columns = cells.pop(key)
        if value != expected_value(text):
            fail(f"{path}: {key} is {value}, {source}:{line} says {text}")
        if on_reference_row != (entry["row"] in REFERENCE_ROWS):
            fail(f"{path}: {key} must {'' if entry['row'] in REFERENCE_ROWS else 'not '}be on a reference row")
        if text != "<1" and abs(float(entry["written"]) * entry["scale"] - float(text)) > 1e-9:
            fail(f"{key}: written {entry['written']} × {entry['scale']} is not {text}")
        if not papers_dir:
            continue
        cited = source_text(os.path.dirname(os.path.abspath(papers_dir)), source, line)
        for fragment in (entry["at"],) + entry["row_at"] + entry["col_at"]:
            if fragment not in cited:
                fail(f"{source}:{line} does not hold {fragment!r} ({key})")
        place = number_place(entry["at"], entry["written"])
        if place in ("missing", "twice"):
            fail(f"{source}:{line}: {entry['written']} is {place} in {entry['at']!r} ({key})")
        check_names(entry, "row", entry["row"], rows, (entry["at"],) + entry["row_at"], place)
        check_names(entry, "column", entry["column"], columns, (entry["at"],) + entry["col_at"], place)
    if cells:
        fail(f"published in a recipe but not in the notes' table: {sorted(cells)}")
    print(f"ok: {len(CELLS)} published cells" + (", each on its cited line in its row and column" if papers_dir else ""))


main()
