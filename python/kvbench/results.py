"""Results files as pandas DataFrames.

``load(paths)``: one row per sample × rollout, the job's config as columns (``config.J``, ``config.policy``,
...), what ran as columns (``settings.budget.recent``, ``settings.policy.knobs.window``: every knob with its
default filled in, the resolved budget; absent in files from before it was recorded), and the file's provenance (``file``, ``kvbench_version``, ``git_commit``, ``torch_version``, ``device``,
``dtype``, ``batch``). ``refreshes(paths)``: one row per refresh trace. ``tables(paths, "accuracy-vs-j")``:
``kvbench report``'s tables as frames.
"""
import glob as _glob
import json
import os

import pandas as pd

from . import _kvbench

_INFO_COLUMNS = ("kvbench_version", "git_commit", "torch_version", "device", "dtype", "batch", "threads", "blas")


def _files(paths):
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = []
    for path in map(str, paths):
        if os.path.isdir(path):
            files += sorted(_glob.glob(os.path.join(path, "*.h5")))
        elif any(c in path for c in "*?["):
            files += sorted(_glob.glob(path))
        else:
            files.append(path)
    if not files:
        raise FileNotFoundError(f"no results files in {paths!r}")
    return files


def read(path):
    """One results file as a dict: ``info`` (provenance and ``config``), ``summary``, ``rows``, ``refreshes``."""
    return json.loads(_kvbench.read_results(str(path)))


def _flat(prefix, tree):
    """(``prefix.key.subkey``, value) for every leaf of nested dicts."""
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from _flat(f"{prefix}.{key}", value)
        else:
            yield f"{prefix}.{key}", value


def _frame(paths, part):
    frames = []
    for file in _files(paths):
        data = read(file)
        frame = pd.DataFrame(data[part])
        frame.insert(0, "file", file)
        for key in _INFO_COLUMNS:
            frame[key] = data["info"][key]
        for key, value in data["info"]["config"].items():
            frame["config." + key] = [value] * len(frame) if isinstance(value, list) else value
        for key, value in _flat("settings", data["info"].get("settings") or {}):
            frame[key] = value
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def load(paths):
    """Rows of results files (paths, directories or globs) as one DataFrame: a row per sample × rollout, with
    the file's ``/rows`` datasets as columns (``pred`` is None where ``pred_none``)."""
    frame = _frame(paths, "rows")
    frame["generated_length"] = frame["generated_ids"].map(len)
    frame["pred_none"] = frame["pred"].isna().astype("int64")
    return frame


def refreshes(paths):
    """Refresh traces of results files as one DataFrame (``row`` indexes the file's rows)."""
    return _frame(paths, "refreshes")


def tables(paths, *names, J="", h="", policies=()):
    """``kvbench report --table NAME`` as DataFrames (titles in ``frame.attrs["title"]``); names default to
    ``overview``. Known: ``_kvbench.report_table_names()``. ``J``: only files with this budget, a token count
    (64) or a compression ratio ("ratio:0.5"), as ``kvbench report --J``."""
    frames = []
    for title, header, rows in _kvbench.report_tables(_files(paths), list(names) or ["overview"], str(J or ""), h, list(policies)):
        frame = pd.DataFrame(rows, columns=header)
        frame.attrs["title"] = title
        frames.append(frame)
    return frames
