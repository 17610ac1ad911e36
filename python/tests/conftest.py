"""The module's tests run from CTest (python/CMakeLists.txt) with the build's package on PYTHONPATH and
$KVBENCH naming the same build's command-line binary, the reference the module must equal."""
import os
import pathlib
import runpy

import pytest

SOURCE = pathlib.Path(os.environ.get("KVBENCH_SOURCE", pathlib.Path(__file__).resolve().parents[2]))
DEMO = SOURCE / "models" / "kvbench-demo"


@pytest.fixture(scope="session")
def kvbench_binary():
    binary = os.environ.get("KVBENCH")
    if not binary:
        pytest.fail("KVBENCH (the kvbench binary of the same build) is not set: run through ctest")
    return binary


@pytest.fixture(scope="session")
def demo_model():
    import kvbench
    return kvbench.load_model(DEMO)


@pytest.fixture(scope="session")
def example_policies():
    """The examples' Knorm and SnapKV, registered as py-knorm and py-snapkv."""
    for name in ("knorm.py", "snapkv.py"):
        runpy.run_path(str(SOURCE / "examples" / name))
    return ["py-knorm", "py-snapkv"]
