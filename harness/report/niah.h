// Needle in a haystack as a grid: the niah task's score by needle depth (rows, % of the haystack) and length
// (columns, tokens), one table per model × policy × budget; scripts/plot_niah.py draws the same grid.
#pragma once
#include <vector>

#include "report/tables.h"

namespace kvbench {

// kvbench::Error when no file is of the niah task.
std::vector<Table> niah_tables(const std::vector<JobResults>& jobs);

}  // namespace kvbench
