"""Jobs and sweeps from Python: a Python policy in a sweep gives the same results at --batch 16 as at
--batch 1 (and as its built-in twin); a failing Python policy stops the job with a clear error and loses no
finished sample; results.load's frame holds exactly what the HDF5 file holds (read here with h5py)."""
import json
import subprocess

import h5py
import numpy as np
import pytest

import kvbench
from conftest import DEMO

DATA = "rare-fact:seed=0,samples=6,words=60,facts=1"


def job(policy, **fields):
    return {"model": str(DEMO), "task": "rare-fact", "data": DATA, "policy": policy, "J": 32, "h": 8, **fields}


def h5_rows(path):
    with h5py.File(path, "r") as f:
        rows = {name: f["rows"][name][:] for name in f["rows"]}
        traces = {name: f["refreshes"][name][:] for name in ("row", "kept_positions", "size_before")}
    return rows, traces


def same_results(a, b):
    rows_a, traces_a = h5_rows(a)
    rows_b, traces_b = h5_rows(b)
    for key in ("sample_id", "generated_length", "score", "output"):
        assert list(rows_a[key]) == list(rows_b[key]), key
    assert [list(x) for x in rows_a["generated_ids"]] == [list(x) for x in rows_b["generated_ids"]]
    assert [list(x) for x in traces_a["kept_positions"]] == [list(x) for x in traces_b["kept_positions"]]
    assert list(traces_a["row"]) == list(traces_b["row"])


def test_python_policy_sweep_batch_16_equals_batch_1(tmp_path, example_policies):
    config = {"base": job("py-knorm"), "grid": {"policy": ["py-knorm", "py-snapkv:window=8"], "J": [16, 32]}}
    one = kvbench.sweep(config, out_dir=tmp_path / "b1", batch=1, progress=False)
    many = kvbench.sweep(config, out_dir=tmp_path / "b16", batch=16, progress=False)
    assert len(one) == len(many) == 4
    for a, b in zip(one, many):
        assert a["label"] == b["label"] and a["summary"]["samples"] == 6
        same_results(a["out"], b["out"])
    builtin = kvbench.run(job("knorm", J=16), out=tmp_path / "knorm.h5", progress=False)
    same_results(one[0]["out"], builtin["out"])  # py-knorm J=16 is the grid's first job


def test_failing_policy_loses_no_finished_sample(tmp_path, example_policies):
    import torch

    class Flaky(kvbench.Policy):
        """Knorm that fails in the third sample that scores (while fail_at = 3)."""
        granularity = "per_head"
        fail_at = 0
        samples_scored = 0

        def __init__(self):
            self.scored = False

        def score(self, ctx):
            if not self.scored:
                self.scored = True
                Flaky.samples_scored += 1
            if Flaky.fail_at and Flaky.samples_scored >= Flaky.fail_at:
                raise RuntimeError("deliberate failure")
            return ctx.each_layer(lambda l, _: -torch.linalg.vector_norm(ctx.cache.keys(l), 2, -1, dtype=torch.float32))

    kvbench.register_policy("flaky", Flaky)
    out = tmp_path / "flaky.h5"
    Flaky.fail_at = 3
    with pytest.raises(kvbench.Error, match=r'python policy "flaky": score\(\) raised RuntimeError: deliberate failure'):
        kvbench.run(job("flaky"), out=out, batch=1, progress=False)
    assert not out.exists()
    journal = [json.loads(line) for line in open(str(out) + ".partial.jsonl") if line.strip()]
    assert len(journal) >= 2  # the two samples finished before the failure (and perhaps a header line)
    Flaky.fail_at = 0
    resumed = kvbench.run(job("flaky"), out=out, batch=1, progress=False)
    assert resumed["resumed"] == 2
    fresh = kvbench.run(job("knorm"), out=tmp_path / "knorm.h5", batch=1, progress=False)
    same_results(out, fresh["out"])


def test_results_frame_matches_hdf5(tmp_path, kvbench_binary):
    done = kvbench.run(job("h2o", rollouts=2, temperature=0.7, seed=2), out=tmp_path / "h2o.h5", progress=False)
    frame = kvbench.results.load(done["out"])
    rows, traces = h5_rows(done["out"])
    assert len(frame) == len(rows["sample_id"]) == 12
    with h5py.File(done["out"], "r") as f:
        config = json.loads(f.attrs["config"])
        assert (frame["git_commit"] == f.attrs["git_commit"]).all()
        assert (frame["batch"] == f.attrs["batch"]).all()
    for key, value in config.items():
        assert all(v == value for v in frame["config." + key]), key
    with h5py.File(done["out"], "r") as f:  # what ran, flattened: h2o's recent J/2 where the config says -1
        settings = json.loads(f.attrs["settings"])
    assert config["recent"] == -1 and settings["budget"]["recent"] == config["J"] // 2
    assert (frame["settings.budget.recent"] == settings["budget"]["recent"]).all()
    assert (frame["settings.policy.name"] == "h2o").all()
    for name in ("rollout", "seed", "prompt_length", "generated_length", "refresh_count", "peak_cache_size", "pred_none"):
        assert list(frame[name]) == list(rows[name]), name
    for name in ("score", "mean_cache_size", "wall_seconds"):
        assert np.array_equal(frame[name].to_numpy(), rows[name]), name
    for name in ("sample_id", "stop_reason", "output", "gold"):
        assert list(frame[name]) == [v.decode() for v in rows[name]], name
    assert [list(x) for x in frame["generated_ids"]] == [list(x) for x in rows["generated_ids"]]
    assert list(frame["pred"].fillna("")) == [v.decode() for v in rows["pred"]]
    refreshes = kvbench.results.refreshes(done["out"])
    assert list(refreshes["row"]) == list(traces["row"])
    assert [list(x) for x in refreshes["kept_positions"]] == [list(x) for x in traces["kept_positions"]]
    summary = kvbench.results.read(done["out"])["summary"]
    assert summary["score"] == pytest.approx(frame.groupby("sample_id")["score"].mean().mean(), abs=1e-12)
    table = kvbench.results.tables(done["out"], "overview")[0]
    assert len(table) == 1 and "score" in " ".join(table.columns).lower()
    # The job's fields as kvbench.job_fields() lists them: every field the file's config holds, and the info
    # and summary read back as h5py reads the file's attributes.
    fields = kvbench.job_fields()
    assert set(config) <= set(fields) and fields["J"]["default"] == 0 and fields["J"]["help"]
    assert fields["mode"]["choices"] == ["chunked", "prefill_end"] and fields["min_gap"]["option"] == "--min-gap"
    help_text = subprocess.run([kvbench_binary, "run", "--help"], capture_output=True, text=True, check=True).stdout
    for name, field in fields.items():  # every option the table names is one `kvbench run` takes
        assert field["option"] == "" or f"{field['option']} " in help_text, name
    info = kvbench.results.read(done["out"])["info"]
    with h5py.File(done["out"], "r") as f:
        for key in ("kvbench_version", "git_commit", "device", "dtype", "host", "start_time", "end_time"):
            assert info[key] == f.attrs[key], key
        assert info["blas"] == f.attrs.get("blas", "")  # written only where OpenBLAS is loaded
        assert info["config"] == json.loads(f.attrs["config"]) and info["threads"] == f.attrs["threads"]
        for key in ("samples", "rows", "score", "pred_none_rate"):
            assert summary[key] == f["summary"].attrs[key], key


def test_python_m_kvbench_takes_the_cli_arguments(tmp_path, kvbench_binary):
    from conftest import SOURCE
    import os
    import sys
    out = tmp_path / "cli.h5"
    common = ["run", "--model", str(DEMO), "--task", "rare-fact", "--data", DATA, "--J", "32", "--h", "8", "--quiet"]
    env = dict(os.environ)
    ran = subprocess.run([sys.executable, "-m", "kvbench", "--plugin", str(SOURCE / "examples" / "knorm.py")] + common
                         + ["--policy", "py-knorm", "--out", str(out)], capture_output=True, text=True, env=env)
    assert ran.returncode == 0, ran.stderr
    subprocess.run([kvbench_binary] + common + ["--policy", "knorm", "--out", str(tmp_path / "bin.h5")], check=True,
                   capture_output=True)
    same_results(out, tmp_path / "bin.h5")
    bad = subprocess.run([sys.executable, "-m", "kvbench"] + common + ["--policy", "py-knorm", "--out", str(tmp_path / "x.h5")],
                         capture_output=True, text=True, env=env)
    assert bad.returncode == 1 and 'unknown policy "py-knorm"' in bad.stderr


def test_ctrl_c_stops_after_a_finished_sample_and_resumes(tmp_path):
    import _thread
    import threading
    out = tmp_path / "interrupted.h5"
    long_job = job("h2o", data="rare-fact:seed=1,samples=40,words=150,facts=1")
    timer = threading.Timer(0.3, _thread.interrupt_main)  # as Ctrl-C: Python's SIGINT handler runs on the main thread
    timer.start()
    with pytest.raises(kvbench.Error, match="interrupted: every finished sample is journaled"):
        kvbench.run(long_job, out=out, batch=1, progress=False)
    timer.join()
    finished = sum(1 for line in open(str(out) + ".partial.jsonl") if '"sample_id"' in line)
    assert 1 <= finished < 40
    resumed = kvbench.run(long_job, out=out, batch=1, progress=False)
    assert resumed["resumed"] == finished and resumed["summary"]["samples"] == 40
