#include "policies/retention_scorer.h"

#include "train/kvpop_scorer.h"  // up: kvpop's learned scorer is the model train-scorer fits

namespace kvbench {

std::unique_ptr<RetentionScorer> load_retention_scorer(const std::string& path) {
  return std::make_unique<KvpopScorer>(KvpopScorer::load(path));
}

}  // namespace kvbench
