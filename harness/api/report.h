// Reading results files beyond api::report_tables: a recipe's tables with the published numbers beside the
// measured ones, and resealing a file edited by hand.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "report/tables.h"

namespace kvbench::api {

struct RecipeReport {
  std::vector<Table> tables;         // the recipe's tables: published beside measured
  std::vector<std::string> choices;  // the recipe's stated choices where the paper is silent
};
RecipeReport recipe_report(const std::filesystem::path& recipe, const std::vector<std::filesystem::path>& files);

// Writes `file`'s seal afresh (io/hdf5.h), e.g. after editing it with h5py.
void reseal(const std::filesystem::path& file);

}  // namespace kvbench::api
