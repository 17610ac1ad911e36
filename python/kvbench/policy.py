"""Eviction policies written in Python.

A policy *scores* cache entries; kvbench's budget allocator turns the scores into the kept set (so every
scorer combines with every allocator, batching and recipe). Subclass :class:`Policy`, write ``score``, and
register it::

    class Knorm(kvbench.Policy):
        granularity = "per_head"
        def score(self, ctx):
            return ctx.each_layer(lambda l, _: -torch.linalg.vector_norm(ctx.cache.keys(l), 2, -1, dtype=torch.float32))
    kvbench.register_policy("py-knorm", Knorm)

Then ``--policy py-knorm`` (``python -m kvbench ... --plugin knorm.py``), ``kvbench.generate(..., policy="py-knorm")``,
``kvbench.run({... "policy": "py-knorm"})`` and sweeps all run it. A spec's knobs (``py-knorm:scale=2``) arrive
as keyword arguments of the constructor (integers, numbers, true/false, else text): a constructor that does
not take a knob refuses it. kvbench makes one instance per sample (and one per sample of a batch).
"""
from . import _kvbench


class Policy:
    """The base of Python policies: class attributes declare what the policy needs, methods do the work.

    granularity
        ``"token"``: ``score`` returns one score per entry, ``[B, N]`` (every layer and head keeps the same
        entries); ``"per_head"``: ``[B, L, KV, N]``, each layer and KV head keeps its own
        (``ctx.each_layer`` builds that shape, ragged caches included).
    keep_lowest
        ``False``: the highest scores stay (most policies); ``True``: the lowest do.
    needs
        What the engine captures for ``observe`` and ``score``: ``"attention"`` (every layer's attention
        probabilities of each causal step, ``step.attention``), ``"last_layer_attention"``, ``"queries"``
        (``step.queries``, before RoPE), ``"last_layer_input"`` (``ctx.cache.last_layer_input()``, H^(L-1)),
        ``"every_refresh_point"`` (``score`` is called at every refresh point, also within budget).
    """

    granularity = "token"
    keep_lowest = False
    needs = ()

    def score(self, ctx):
        """Scores of the cache's entries (``ctx``: :class:`ScoringContext`): a float tensor ``[B, N]`` or
        ``[B, L, KV, N]``, or ``None`` to keep by position alone."""
        raise NotImplementedError(f"{type(self).__name__}.score")

    def default_recent(self, J):
        """The recent window (always kept) when the user gives none."""
        return 0

    def observe(self, step, cache):
        """After every causal forward (a prompt chunk or a decode step), with what ``needs`` asked for."""

    def on_compact(self, keep):
        """The cache kept ``keep`` (``[B, M]`` token level, ``[B, L, KV, M]`` per head, -1 = padding)."""

    def expand_batch(self, batch):
        """Sequence 0's state becomes ``batch`` rollouts after the shared prefill."""

    def reset(self):
        """A new generation starts."""


ScoringContext = _kvbench.ScoringContext
Step = _kvbench.Step
KvCache = _kvbench.KvCache


def register_policy(name, cls):
    """Make ``cls`` (a :class:`Policy` subclass) usable by ``name`` everywhere kvbench takes a policy."""
    if not (isinstance(cls, type) and issubclass(cls, Policy)):
        raise TypeError(f"register_policy({name!r}, ...): expected a kvbench.Policy subclass, got {cls!r}")
    _kvbench.register_policy(name, cls)
    return cls
