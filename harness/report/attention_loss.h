// Attention mass lost, from files run with `--shadow full` (engine/shadow.h): how much of the full cache's
// attention falls on entries a policy had evicted — the quantity future-oracle's choice minimises.
#pragma once
#include <optional>
#include <vector>

#include "report/tables.h"

namespace kvbench {

// Which refreshes a table averages: all of them, or only those of the decode phase (prefill refreshes,
// one per chunk of a long prompt, are most of a row's refreshes and dominate the mean over all of them).
enum class RefreshPhases { All, Decode };

// A row's attention lost: the mean over its refreshes of `phases` followed by at least one fed token of the
// refresh's shadow_lost_mass (the full twin's attention on the entries evicted at that refresh or earlier,
// mean over the tokens fed until the next refresh, layers and query heads). 0 for a row that never
// refreshed (nothing evicted: the full policy); otherwise, with no such refresh, 0 over all phases and
// no value (std::nullopt) for the decode phase alone (generation ended before a decode refresh).
std::optional<double> row_attention_lost(const std::vector<const RefreshTrace*>& row_refreshes, RefreshPhases phases);

// Per model × task, two tables: all refreshes, then decode refreshes only. Rows policies, columns J and h;
// a cell is the mean of row_attention_lost over (seed, sample) units (each the mean over its rollouts
// with a value; units without one left out, "–" when none is left) with a bootstrap 95% CI. Throws
// kvbench::Error when no file holds the data (run without --shadow full, or written before it recorded
// attention loss).
std::vector<Table> attention_loss_tables(const std::vector<JobResults>& jobs);

}  // namespace kvbench
