"""Knorm (Devoto et al. 2024; kvpress's KnormPress) as a Python policy: keys of small L2 norm draw attention,
so each layer and KV head keeps its entries of smallest key norm. Same kept sets as the built-in `knorm`.

    python -m kvbench generate --plugin examples/knorm.py --model models/kvbench-demo --prompt "Once" --policy py-knorm --J 16
"""
import torch

import kvbench


class Knorm(kvbench.Policy):
    granularity = "per_head"

    def score(self, ctx):
        return ctx.each_layer(lambda layer, _: -torch.linalg.vector_norm(ctx.cache.keys(layer), 2, -1, dtype=torch.float32))


kvbench.register_policy("py-knorm", Knorm)
