"""Loading a model for the peers as kvbench takes it: an HF directory, or a GGUF file (or a directory holding
one), which transformers dequantizes to the dtype asked for (its GGUF loader, with the gguf package)."""
import pathlib

from transformers import AutoModelForCausalLM


def gguf_file(path):
    """The GGUF file `path` names (a .gguf, or a directory with one and no config.json), else None."""
    path = pathlib.Path(path)
    if path.is_file() and path.suffix == ".gguf":
        return path
    if path.is_dir() and not (path / "config.json").exists():
        found = sorted(path.glob("*.gguf"))
        return found[0] if len(found) == 1 else None
    return None


def load_causal_lm(path, **kwargs):
    gguf = gguf_file(path)
    if gguf is not None:
        return AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, **kwargs).eval()
    return AutoModelForCausalLM.from_pretrained(path, **kwargs).eval()
