"""``python -m kvbench ARGS``: the ``kvbench`` command line in this Python process, plus ``--plugin FILE.py``
(repeatable, anywhere in ARGS): each file is run first, so the policies it registers
(``kvbench.register_policy``) are usable by name in ``generate``, ``run``, ``sweep`` and ``bench``."""
import runpy
import sys

from . import _kvbench


def _split_plugins(argv):
    plugins, rest, i = [], [], 0
    while i < len(argv):
        word = argv[i]
        if word == "--plugin":
            if i + 1 == len(argv):
                raise SystemExit("error: --plugin needs a FILE.py")
            plugins.append(argv[i + 1])
            i += 2
            continue
        if word.startswith("--plugin="):
            plugins.append(word.split("=", 1)[1])
        else:
            rest.append(word)
        i += 1
    return plugins, rest


def main(argv=None):
    plugins, rest = _split_plugins(sys.argv[1:] if argv is None else list(argv))
    for plugin in plugins:
        try:
            runpy.run_path(plugin, run_name="kvbench_plugin")
        except FileNotFoundError:
            raise SystemExit(f"error: --plugin {plugin}: no such file")
    sys.stdout.flush()
    _kvbench.tune_allocator()
    return _kvbench.main(["kvbench"] + rest)


if __name__ == "__main__":
    sys.exit(main())
