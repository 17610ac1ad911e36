#include "api/report.h"

#include "io/hdf5.h"
#include "report/recipe_report.h"
#include "run/recipe.h"
#include "run/runner.h"

namespace kvbench::api {

RecipeReport recipe_report(const std::filesystem::path& recipe_file, const std::vector<std::filesystem::path>& files) {
  const Recipe recipe = load_recipe(recipe_file, {{}, default_data_root(), "scorers"});
  std::vector<JobResults> jobs;
  for (const auto& file : files) jobs.push_back(load_job_results(file));
  return {recipe_tables(recipe, jobs), recipe.choices};
}

void reseal(const std::filesystem::path& file) { h5::seal(file); }

}  // namespace kvbench::api
