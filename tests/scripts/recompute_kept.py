#!/usr/bin/python3
"""Recompute every refresh's kept set of a token-level kvbench results file from its recorded raw scores,
independently of kvbench, and compare it with the recorded kept positions.

The phrase rules as documented (engine/score_transforms.h, `kvbench run --help`), implemented here from
their statement: candidates = slots [frozen + sinks, n - recent); with smooth W each candidate's score
becomes the mean of the candidates within W // 2 slots of it (summed in cache order in float64); with
keep_span S the candidates are walked from best to worst (ties: older first), each taking itself and its
S - 1 following candidate slots not yet taken, until the budget is full. Kept = frozen/sinks + taken + recent.
The entries a refresh scored are rebuilt from the previous refresh of the same row: its kept positions,
then every position fed since (prefill chunks and decode steps feed consecutive positions).

Usage: recompute_kept.py FILE.h5 [--expect-differs]   (--expect-differs: the phrase rules must change at
least one kept set against the plain top-k of the same scores, so the test cannot pass by ignoring them)
"""
import json
import sys

import h5py
import numpy as np

KEEP_LOWEST = {"counter-causal", "counter-causal-fast"}
DEFAULT_RECENT = {"h2o": lambda J: J // 2}


def recent_window(config):
    """The recent window a policy always keeps (the reference's rules, restated)."""
    J, recent = config["J"], config["recent"]
    if recent < 0:
        recent = DEFAULT_RECENT.get(config["policy"], lambda J: 0)(J)
    if config["policy"] in KEEP_LOWEST:  # the newest min_gap + 1 entries have no future
        recent = max(recent, config["min_gap"] + 1)
    return recent


def smooth(scores, begin, end, window):
    out = scores.copy()
    radius = window // 2
    for i in range(begin, end):
        lo, hi = max(begin, i - radius), min(end - 1, i + radius)
        total = 0.0
        for j in range(lo, hi + 1):
            total += float(scores[j])
        out[i] = total / (hi - lo + 1)
    return out


def ranked(values, keep_lowest):
    """Candidate indices from best to worst, ties to the older slot."""
    return np.argsort(values if keep_lowest else -values, kind="stable")


def take_candidates(scores, begin, end, take, span, keep_lowest):
    order = ranked(scores[begin:end], keep_lowest)
    taken, chosen = set(), []
    for i in order:
        for j in range(i, min(end - begin, i + span)):
            if len(chosen) == take:
                return sorted(chosen)
            if j not in taken:
                taken.add(j)
                chosen.append(j)
    return sorted(chosen)


def kept_slots(scores, config, n, W, S):
    frozen, J = int(config["frozen"]), config["J"]
    begin = min(frozen, n)
    end = max(begin, n - recent_window(config))
    take = min(max(J - recent_window(config), 0), end - begin)
    values = scores.astype(np.float64)
    if W > 1:
        values = smooth(values, begin, end, W)
    chosen = take_candidates(values, begin, end, take, S, config["policy"] in KEEP_LOWEST)
    return list(range(begin)) + [begin + c for c in chosen] + list(range(end, n)), (begin, end)


def main(path, expect_differs):
    f = h5py.File(path, "r")
    config = json.loads(f.attrs["config"])
    W, S = config.get("smooth", 1), config.get("keep_span", 1)
    r = f["refreshes"]
    rows, processed = r["row"][:], r["processed"][:]
    checked = differs = 0
    previous = {}  # row -> (kept positions, processed)
    for k in range(len(rows)):
        kept_before, fed_until = previous.get(rows[k], ([], 0))
        positions = np.array(list(kept_before) + list(range(fed_until, processed[k])), dtype=np.int64)
        scores = np.asarray(r["scores"][k], dtype=np.float32)
        n = r["size_before"][k]
        assert len(positions) == n, f"refresh {k}: rebuilt {len(positions)} entries, file says n = {n}"
        assert len(scores) == n, f"refresh {k}: {len(scores)} scores for {n} entries"
        slots, candidates = kept_slots(scores, config, n, W, S)
        assert candidates == (r["candidates_begin"][k], r["candidates_end"][k]), \
            f"refresh {k}: candidates {candidates} vs recorded {(r['candidates_begin'][k], r['candidates_end'][k])}"
        want = positions[slots]
        got = np.asarray(r["kept_positions"][k])
        assert np.array_equal(want, got), f"refresh {k} (row {rows[k]}, n {n}): kept {got.tolist()} != recomputed {want.tolist()}"
        plain, _ = kept_slots(scores, config, n, 1, 1)
        differs += plain != slots
        previous[rows[k]] = (got.tolist(), processed[k])
        checked += 1
    assert checked > 0, "no refreshes to check"
    if expect_differs:
        assert differs > 0, f"smooth={W} keep_span={S} changed none of {checked} kept sets"
    print(f"{path}: {checked} kept sets recomputed (smooth={W}, keep_span={S}; {differs} differ from plain top-k)")


if __name__ == "__main__":
    main(sys.argv[1], "--expect-differs" in sys.argv[2:])
