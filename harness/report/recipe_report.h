// A recipe's tables (run/recipe.h) in the paper's layout: per column the published value, the measured
// value with its 95% bootstrap CI, and whether the published number lies inside that CI (a published bound
// "< x": whether the measured mean is below it). A cell whose jobs have no results file says "missing"
// (never 0); one with only some says how many it has; a reference row shows only the published values.
// relative_score: the cell's mean score over its reference cell's (relative_to), with the percentile bootstrap
// CI of that ratio (units resampled in pairs when both cells have the same problems and seeds); "missing" when
// either cell has no results files, no ratio when the reference scores 0.
#pragma once
#include <vector>

#include "report/tables.h"
#include "run/recipe.h"

namespace kvbench {

// Results files are matched to the recipe's jobs by the name the sweep gave them (<label>.h5); a file
// of another job is ignored, a file whose config contradicts its name is an error.
std::vector<Table> recipe_tables(const Recipe& recipe, const std::vector<JobResults>& files);

}  // namespace kvbench
