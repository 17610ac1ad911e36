#include "policies/retention_scorer.h"

#include "policies/kvpop_scorer.h"

namespace kvbench {

std::unique_ptr<RetentionScorer> load_retention_scorer(const std::string& path) {
  return std::make_unique<KvpopScorer>(KvpopScorer::load(path));
}

}  // namespace kvbench
