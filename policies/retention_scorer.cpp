#include "policies/retention_scorer.h"

#include "common/error.h"

namespace kvbench {

std::unique_ptr<RetentionScorer> load_retention_scorer(const std::string& path) {
  fail("{}: learned KVpop scorers are not supported yet (run kvpop without --scorer: it falls back to "
       "accumulated attention mass)", path);
}

}  // namespace kvbench
