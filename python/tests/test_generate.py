"""kvbench.generate equals `kvbench generate --format json` bit for bit, and the examples' Python Knorm and
SnapKV equal the built-in knorm and snapkv (kept sets, scores, tokens)."""
import json
import subprocess

import pytest
import torch

import kvbench
from conftest import DEMO

PROMPT = "Once upon a time there was a little girl named Lily. She liked to play with her red ball in the park. One day"

CASES = [  # (policy, fields)
    ("full", {}),
    ("sliding", {"J": 16, "h": 4}),
    ("h2o", {"J": 16, "h": 4}),
    ("counter-causal", {"J": 16, "h": 8, "recent": 2}),
    ("tova", {"J": 12, "h": 4, "temperature": 0.8, "seed": 3, "rollouts": 2}),
    ("snapkv:window=4", {"J": 16, "h": 4}),
    ("knorm", {"J": 16, "h": 4, "allocator": "pyramid"}),
]


def cli_generate(binary, policy, fields, max_new=24):
    flags = {"J": "--J", "h": "--h", "recent": "--recent", "temperature": "--temperature", "seed": "--seed",
             "rollouts": "--rollouts", "allocator": "--allocator"}
    command = [binary, "generate", "--model", str(DEMO), "--prompt", PROMPT, "--policy", policy, "--max-new",
               str(max_new), "--format", "json"]
    for key, value in fields.items():
        command += [flags[key], str(value)]
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def assert_same_generation(ours, theirs, compare_policy_name=True):
    timing = {"prefill_seconds", "decode_seconds", "refreshes", "policy"}
    assert {k: v for k, v in ours.items() if k not in timing} == {k: v for k, v in theirs.items() if k not in timing}
    if compare_policy_name:
        assert ours["policy"] == theirs["policy"]
    assert len(ours["refreshes"]) == len(theirs["refreshes"])
    for a, b in zip(ours["refreshes"], theirs["refreshes"]):
        for key in ("phase", "step", "processed", "size_before", "size_after", "candidates"):
            assert a[key] == b[key], key
        for key in ("positions_before", "kept_positions"):
            assert torch.equal(torch.as_tensor(a[key]), torch.as_tensor(b[key])), key
        if b["scores"] is None:
            assert a["scores"] is None
        else:  # float32 scores, exactly (JSON carries a float32 exactly)
            assert torch.equal(torch.as_tensor(a["scores"], dtype=torch.float32),
                               torch.as_tensor(b["scores"], dtype=torch.float32))


@pytest.mark.parametrize("policy,fields", CASES, ids=[c[0] for c in CASES])
def test_module_equals_cli(kvbench_binary, demo_model, policy, fields):
    theirs = cli_generate(kvbench_binary, policy, fields)
    ours = kvbench.generate(demo_model, PROMPT, policy=policy, max_new=24, **fields)
    assert len(theirs["refreshes"]) > 0 or policy == "full"
    assert_same_generation(ours, theirs)
    assert isinstance(ours["refreshes"][0]["kept_positions"], torch.Tensor) if ours["refreshes"] else True


@pytest.mark.parametrize("builtin,fields", [
    ("knorm", {"J": 16, "h": 4}),
    ("knorm", {"J": 16, "h": 4, "allocator": "pyramid"}),
    ("snapkv:window=4", {"J": 16, "h": 4}),
    ("snapkv:window=4,kernel=3", {"J": 12, "h": 4, "temperature": 0.7, "seed": 1, "rollouts": 3}),
])
def test_python_examples_equal_builtins(kvbench_binary, demo_model, example_policies, builtin, fields):
    theirs = cli_generate(kvbench_binary, builtin, fields, max_new=32)
    ours = kvbench.generate(demo_model, PROMPT, policy="py-" + builtin, max_new=32, **fields)
    # Each reports its spec: the built-in's in normal form (window=4 is no default), the Python policy's as
    # given (kvbench knows no defaults of its knobs).
    assert ours["policy"] == "py-" + builtin
    assert theirs["policy"] == builtin
    assert len(theirs["refreshes"]) > 3
    assert_same_generation(ours, theirs, compare_policy_name=False)


def test_policy_object_and_ids(demo_model, example_policies):
    import runpy
    from conftest import SOURCE
    knorm = runpy.run_path(str(SOURCE / "examples" / "knorm.py"))["Knorm"]
    ids = demo_model.encode(PROMPT)
    by_object = kvbench.generate(demo_model, ids, policy=knorm(), J=16, h=4, max_new=16)
    by_name = kvbench.generate(demo_model, PROMPT, policy="knorm", J=16, h=4, max_new=16)
    assert by_object["generated_ids"] == by_name["generated_ids"]
    assert by_object["policy"] == "Knorm"


def test_errors_are_clear(demo_model):
    class Broken(kvbench.Policy):
        def score(self, ctx):
            raise ValueError("no scores today")

    class WrongType(kvbench.Policy):
        def score(self, ctx):
            return [1.0]

    with pytest.raises(kvbench.Error, match=r'python policy "Broken": score\(\) raised ValueError: no scores today'):
        kvbench.generate(demo_model, PROMPT, policy=Broken(), J=16, h=4, max_new=4)
    with pytest.raises(kvbench.Error, match=r"score\(\) returned a list, not a torch.Tensor"):
        kvbench.generate(demo_model, PROMPT, policy=WrongType(), J=16, h=4, max_new=4)
    class WrongShape(kvbench.Policy):
        granularity = "per_head"

        def score(self, ctx):
            return torch.zeros(ctx.cache.batch, ctx.cache.size)

    with pytest.raises(kvbench.Error, match=r'"WrongShape": score\(\) returned a Float tensor of shape 1x\d+; a per_head '
                                            r'policy gives float scores of shape 1x2x4x\d+'):
        kvbench.generate(demo_model, PROMPT, policy=WrongShape(), J=16, h=4, max_new=4)
    with pytest.raises(kvbench.Error, match=r'unknown policy "no-such-policy"'):
        kvbench.generate(demo_model, PROMPT, policy="no-such-policy", J=16, max_new=4)
    with pytest.raises(kvbench.Error, match=r'built-in policy'):
        kvbench.register_policy("knorm", Broken)
