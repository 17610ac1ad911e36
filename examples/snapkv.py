"""SnapKV (Li et al. 2024; kvpress's SnapKVPress) as a Python policy: the newest queries' mean attention on each
entry outside their window, average-pooled over `kernel` neighbours, averaged over each KV head's query group;
the window itself always stays. Observing queries: a prompt chunk's newest `window`, then in decode every query
since the last refresh. Same kept sets as the built-in `snapkv` (policies/snapkv.cpp).

    python -m kvbench run --plugin examples/snapkv.py --policy py-snapkv:window=32 ...
"""
import torch
import torch.nn.functional as F

import kvbench


class SnapKV(kvbench.Policy):
    granularity = "per_head"
    needs = ("attention",)

    def __init__(self, window=64, kernel=5):
        if not (isinstance(kernel, int) and kernel % 2 == 1 and 1 <= kernel <= 63):
            raise ValueError(f"kernel must be an odd integer in 1..63 (got {kernel!r})")
        self.window, self.kernel = window, kernel
        self.reset()

    def default_recent(self, J):
        return self.window

    def observe(self, step, cache):
        T = step.attention[0].shape[2]
        newest = min(self.window, T)
        if T > 1 or len(self.mass) != len(step.attention):  # a prompt chunk observes with its own queries
            self.restart(len(step.attention))
        for l, probs in enumerate(step.attention):  # [B, H, T, N_l]
            mass = probs.narrow(2, T - newest, newest).sum(2)
            old = self.mass[l]
            self.mass[l] = mass if old is None else F.pad(old, (0, mass.shape[2] - old.shape[2])) + mass
        self.queries += newest
        self.fed += T

    def score(self, ctx):
        def layer_scores(l, positions):  # positions [B, KV, N]
            KV, N = positions.shape[1], positions.shape[2]
            mean = self.mass[l] / float(self.queries)  # [B, H, N]
            group = mean.shape[1] // KV
            in_window = positions.ge(self.fed - self.window)
            outside = positions.ge(0).logical_and(in_window.logical_not()).repeat_interleave(group, 1)
            pooled = F.avg_pool1d(mean * outside, self.kernel, 1, self.kernel // 2)
            scores = pooled.view(pooled.shape[0], KV, group, N).mean(2)
            return scores.masked_fill(in_window, scores.max().item() + 1)

        return ctx.each_layer(layer_scores)

    def on_compact(self, keep):
        self.restart(len(self.mass))  # the next refresh sees the queries after this one

    def expand_batch(self, batch):
        self.mass = [m if m is None else m.expand(batch, m.shape[1], m.shape[2]).contiguous() for m in self.mass]

    def reset(self):
        self.restart(0)
        self.fed = 0

    def restart(self, layers):
        self.mass = [None] * layers
        self.queries = 0


kvbench.register_policy("py-snapkv", SnapKV)
