#!/usr/bin/env bash
# Budget allocators (--allocator pyramid|ada) end to end on models/kvbench-demo (2 layers, 4 KV heads), for every
# scorer that composes with them: a numpy recomputation from each refresh's recorded positions and scores
# reproduces every kept set, budgets sum to the uniform total, each layer/head holds exactly its budget,
# the next refresh sees exactly what was kept plus the tokens fed since, and the realised size / peak
# bytes match the recorded layouts. Scorer-specific shapes: token scorers (h2o, importance) give the heads
# of a layer one score per entry (h2o: one per position across layers too); tova's per-layer scores are a
# softmax over exactly the entries the layer/head holds (sum 1, padding 0).
# Pyramid budgets are recomputed with exact rationals (fractions), not the floating-point formula.
set -uo pipefail
source "$(dirname "$0")/common.bash"
demo_model
py=/usr/bin/python3
"$py" -c "import numpy" 2>/dev/null || skip "/usr/bin/python3 has no numpy"

prompt="Once upon a time there was a little girl named Lily. She liked to play in the park with her dog."
# kvpop's learned scorers (stateless mlp, streaming mlstm): a few training steps are enough to rank entries.
for kind in mlp mlstm; do
  kvbench train-scorer --model "$model" --data "rare-fact:seed=7,samples=2,words=60" --s 2 --w 4 --k 8 --kind $kind \
    --hidden 8 --steps 3 --out "$work/kvpop-$kind.safetensors" > /dev/null 2>&1 || fail "train-scorer --kind $kind"
done
# Per layer and KV head: h2o-true, tova, kvpop (attention-mass fallback and learned), random; tokens: h2o, importance,
# counter-causal (full and fast; they keep the lowest scores). Fields: allocator, policy, sinks the policy
# keeps, learned scorer (or -). Pyramid runs at ratio 3, the budgets the check computes.
declare -A spec=([pyramid]=pyramid:ratio=3 [ada]=ada)
for run in "pyramid h2o-true 0 -" "ada h2o-true 0 -" "pyramid h2o 0 -" "pyramid tova 0 -" "ada tova 0 -" \
  "pyramid importance 0 -" "pyramid kvpop 2 -" "ada kvpop 2 -" "pyramid kvpop 2 mlp" "ada kvpop 2 mlstm" \
  "pyramid counter-causal 0 -" "pyramid counter-causal-fast 0 -" "ada random 0 -"; do
  read -r allocator policy sinks scorer <<< "$run"
  name="$allocator-$policy-$scorer"
  extra=(--sinks "$sinks")
  [[ $scorer != - ]] && extra+=(--scorer "$work/kvpop-$scorer.safetensors")
  kvbench generate --model "$model" --prompt "$prompt" --policy "$policy" --J 24 --h 6 --recent 4 "${extra[@]}" \
    --allocator "${spec[$allocator]}" --max-new 41 --format json > "$work/$name.json" \
    || fail "generate --allocator $allocator --policy $policy --scorer $scorer"
  "$py" - "$work/$name.json" "$allocator" "$sinks" "$model/config.json" <<'PY' || fail "$name: kept sets / budgets / sizes / scores"
import json, sys
from fractions import Fraction

import numpy as np

out, allocator = json.load(open(sys.argv[1])), sys.argv[2]
J, R, F, S = out["J"], out["recent"], out["frozen"], int(sys.argv[3])
lowest = out["policy"].startswith("counter-causal")  # keeps the least predictable entries
sign = 1 if lowest else -1
config = json.load(open(sys.argv[4]))                 # the model's shape; float32
L, KV, BYTES = config["num_hidden_layers"], config["num_key_value_heads"], 4
D = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
assert (L, KV, D) == (2, 4, 32), (L, KV, D)          # models/kvbench-demo, which the budgets below assume


def pyramid_budgets(J, L, ratio):
    r = Fraction(ratio)
    exact = [Fraction(J) if L == 1 else Fraction(2 * J) / (1 + r) * (r - (r - 1) * Fraction(l, L - 1)) for l in range(L)]
    budgets = [e.numerator // e.denominator for e in exact]
    by_fraction = sorted(range(L), key=lambda l: (-(exact[l] - budgets[l]), l))
    for i in range(L * J - sum(budgets)):
        budgets[by_fraction[i % L]] += 1
    return budgets


budgets = pyramid_budgets(J, L, 3) if allocator == "pyramid" else [J] * L
assert sum(budgets) == L * J, budgets
# J = 24, ratio 3, 2 layers: 2J/(1 + 3)·(3 − 2l) = 36 and 12 (on 5 layers it would be 36, 30, 24, 18, 12).
assert allocator != "pyramid" or budgets == [36, 12], budgets


def held(row):  # slots of a row that hold an entry, in slot order
    return [s for s, p in enumerate(row) if p >= 0]


def expected_kept(positions, scores):  # one layer: [KV][N] → per head the kept positions, ascending
    protected, candidates = [], []
    for h in range(KV):
        slots = held(positions[h])
        edge = set(slots[:F + S]) | set(slots[max(len(slots) - R, 0):])
        protected.append(edge)
        candidates.append([s for s in slots if s not in edge])
    take = max(budgets[layer] - S - R, 0)
    if allocator == "pyramid":  # each head its own best, ties to the older slot
        chosen = [sorted(c, key=lambda s: (sign * scores[h][s], s))[:take] for h, c in enumerate(candidates)]
    else:  # ada: the layer's heads compete in one pool of KV·take slots, ties to (head, slot) order
        pool = sorted(((h, s) for h in range(KV) for s in candidates[h]), key=lambda hs: (sign * scores[hs[0]][hs[1]], hs))
        chosen = [[s for g, s in pool[:KV * take] if g == h] for h in range(KV)]
    return [sorted(positions[h][s] for s in protected[h] | set(chosen[h])) for h in range(KV)]


refreshes = out["refreshes"]
assert len(refreshes) > 5, len(refreshes)
for r in refreshes:  # before the first ragged compaction the cache is token level: one row for all
    if not isinstance(r["positions_before"][0], list):
        r["positions_before"] = [[r["positions_before"]] * KV] * L
    if not isinstance(r["scores"][0], list):
        r["scores"] = [[r["scores"]] * KV] * L
    if out["policy"] == "h2o" or lowest:  # token scores: one number per position, whichever layer holds it
        by_position = {}
        for layer in range(L):
            for h in range(KV):
                for p, x in zip(r["positions_before"][layer][h], r["scores"][layer][h]):
                    if p >= 0:
                        assert by_position.setdefault(p, x) == x, (p, x, by_position[p])
    if out["policy"] == "importance":  # token scores of each layer's own entries: its heads agree
        for layer in range(L):
            assert all(r["positions_before"][layer][h] == r["positions_before"][layer][0] for h in range(KV)), layer
            assert all(r["scores"][layer][h] == r["scores"][layer][0] for h in range(KV)), layer
    if out["policy"] == "tova":  # the newest query's softmax over the entries each layer/head holds
        for layer in range(L):
            for h in range(KV):
                p, x = np.array(r["positions_before"][layer][h]), np.array(r["scores"][layer][h])
                assert abs(x[p >= 0].sum() - 1) < 1e-5 and not x[p < 0].any(), (layer, h, x[p >= 0].sum())
previous = None
peak = 0
for r in refreshes:
    before, scores, kept = r["positions_before"], r["scores"], r["kept_positions"]
    assert len(before) == L and len(before[0]) == KV, "per layer and KV head"
    # The refresh sees what the last one kept plus every token fed since.
    if previous is not None:
        for layer in range(L):
            for h in range(KV):
                seen = sorted(p for p in before[layer][h] if p >= 0)
                fed = list(range(previous["processed"], r["processed"]))
                assert seen == sorted([p for p in previous["kept_positions"][layer][h] if p >= 0] + fed), (layer, h)
    # Slots a layer holds (padding included) before the refresh: up to its last occupied slot.
    widths = [1 + max(max(held(row), default=-1) for row in before[layer]) for layer in range(L)]
    peak = max(peak, 2 * sum(widths) * KV * D * BYTES)
    for layer in range(L):
        want = expected_kept(before[layer], scores[layer])
        got = [[p for p in row if p >= 0] for row in kept[layer]]
        assert got == want, (r["phase"], r["step"], layer, got, want)
        n = [len(held(row)) for row in before[layer]]
        if allocator == "pyramid":  # every head: frozen + its layer's budget (or all it had)
            assert [len(g) for g in got] == [min(F + budgets[layer], c) for c in n], (layer, got)
        elif min(n) >= F + J:        # ada: the layer's total is KV·(frozen + J)
            assert sum(len(g) for g in got) == KV * (F + J), (layer, [len(g) for g in got])
    previous = r
assert out["peak_cache_bytes"] >= peak, (out["peak_cache_bytes"], peak)
# Realised size: decode step s (after feeding position P+s-1) holds what the last earlier refresh kept
# plus the tokens fed since, in every layer and head.
P, steps = len(out["prompt_ids"]), len(out["generated_ids"]) - 1
per_step = []
for p in range(P + 1, P + steps + 1):
    last = [r for r in refreshes if r["processed"] < p][-1]
    kept = [len([q for q in row if q >= 0]) for layer in last["kept_positions"] for row in layer]
    per_step.append(np.mean(kept) + p - last["processed"])
assert abs(np.mean(per_step) - out["mean_entries_per_head"]) < 1e-9, (np.mean(per_step), out["mean_entries_per_head"])
print(allocator, out["policy"], "ok:", len(refreshes), "refreshes; mean entries/head", round(out["mean_entries_per_head"], 2),
      "peak bytes", out["peak_cache_bytes"])
PY
done

# Ada must differ from uniform somewhere (heads get different sizes); uniform's identity has no allocator fields.
kvbench generate --model "$model" --prompt "$prompt" --policy h2o-true --J 24 --h 6 --recent 4 --max-new 41 \
  --format json > "$work/uniform.json" || fail "generate uniform"
"$py" - "$work/uniform.json" "$work/ada-h2o-true--.json" <<'PY' || fail "ada vs uniform"
import json, sys
uniform, ada = (json.load(open(p)) for p in sys.argv[1:])
sizes = {len([p for p in row if p >= 0]) for r in ada["refreshes"] for layer in r["kept_positions"] for row in layer}
assert len(sizes) > 1, f"ada kept the same count in every head: {sizes}"
assert uniform["allocator"] == "uniform" and ada["allocator"] == "ada"
PY

# Pyramid with ratio 1 gives every layer J: counter-causal's pass over the (unragged) ragged cache must
# compute exactly the uniform pass, so scores, kept sets and tokens are bitwise those of uniform.
for policy in counter-causal counter-causal-fast; do
  for allocator in "uniform" "pyramid:ratio=1"; do
    kvbench generate --model "$model" --prompt "$prompt" --policy "$policy" --J 24 --h 6 --recent 4 --allocator $allocator \
      --max-new 41 --format json > "$work/ratio1-$policy-${allocator%%:*}.json" || fail "generate $policy $allocator"
  done
  "$py" - "$work/ratio1-$policy-uniform.json" "$work/ratio1-$policy-pyramid.json" <<'PY' || fail "$policy: pyramid ratio 1 ≠ uniform"
import json, sys
uniform, pyramid = (json.load(open(p)) for p in sys.argv[1:])
assert uniform["generated_ids"] == pyramid["generated_ids"]
assert len(uniform["refreshes"]) == len(pyramid["refreshes"]) > 5
for u, p in zip(uniform["refreshes"], pyramid["refreshes"]):
    for key in ("scores", "kept_positions"):
        rows = [p[key]] if not isinstance(p[key][0], list) else [row for layer in p[key] for row in layer]
        assert all(row == u[key] for row in rows), (key, p["step"])  # exact float equality
print(uniform["policy"], "pyramid ratio 1 = uniform over", len(uniform["refreshes"]), "refreshes")
PY
done

# Bad input: scorers that cannot score a ragged cache, token-level scorers with ada, bad names and ratios
# are refused with the field named.
expect_error "allocator pyramid needs a policy that scores every layer and KV head" \
  kvbench generate --model "$model" --prompt "$prompt" --policy sliding --J 16 --allocator pyramid
expect_error "allocator ada shares each layer's budget" \
  kvbench generate --model "$model" --prompt "$prompt" --policy counter-causal --J 16 --allocator ada
expect_error "allocator ada shares each layer's budget" \
  kvbench generate --model "$model" --prompt "$prompt" --policy h2o --J 16 --recent 4 --allocator ada
expect_error "allocator" kvbench generate --model "$model" --prompt "$prompt" --policy h2o-true --J 16 --allocator tall
expect_error "ratio must be a number in 1..1e+06 (got \"0.5\")" \
  kvbench generate --model "$model" --prompt "$prompt" --policy h2o-true --J 16 --allocator pyramid:ratio=0.5
expect_error "ratio must be a number in 1..1e+06 (got \"flat\")" \
  kvbench generate --model "$model" --prompt "$prompt" --policy h2o-true --J 16 --allocator pyramid:ratio=flat
expect_error "safeguard must be a number in 0..1 (got \"2\")" \
  kvbench generate --model "$model" --prompt "$prompt" --policy h2o-true --J 16 --allocator ada:safeguard=2
expect_error "unknown key \"ratoi\" (ratio)" \
  kvbench generate --model "$model" --prompt "$prompt" --policy h2o-true --J 16 --allocator pyramid:ratoi=2
expect_error "below the" \
  kvbench generate --model "$model" --prompt "$prompt" --policy h2o-true --J 16 --recent 8 --allocator pyramid:ratio=8
echo "allocators: all checks passed"
