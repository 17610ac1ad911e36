// Attention mass lost, from files run with `--shadow full` (engine/shadow.h): how much of the full cache's
// attention falls on entries a policy had evicted — the quantity future-oracle's choice minimises.
#pragma once
#include <vector>

#include "report/tables.h"

namespace kvbench {

// A row's attention lost: the mean over its refreshes followed by at least one fed token of the refresh's
// shadow_lost_mass (the full twin's attention on the entries evicted at that refresh or earlier, mean over
// the tokens fed until the next refresh, layers and query heads); 0 for a row no token followed an
// eviction in (the full policy: nothing is ever evicted).
double row_attention_lost(const std::vector<const RefreshTrace*>& row_refreshes);

// Per model × task: rows policies, columns J and h; a cell is the mean of row_attention_lost over
// (seed, sample) units (each the mean over its rollouts) with a bootstrap 95% CI. Throws kvbench::Error
// when no file holds the data (run without --shadow full, or written before it recorded attention loss).
std::vector<Table> attention_loss_tables(const std::vector<JobResults>& jobs);

}  // namespace kvbench
