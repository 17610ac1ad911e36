// A policy of one's own (Python's kvbench.Policy, a C++ plugin): the interface it implements
// (policies/policy.h: its scores from a ScoringContext, its keep rule, its knobs), the cache it reads, and
// the helper that stacks per-layer scores; api::register_policy (api/kvbench.h) makes it usable by name.
#pragma once
#include "policies/layer_scores.h"
#include "policies/policy.h"
