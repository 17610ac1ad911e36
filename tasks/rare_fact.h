// Synthetic rare-fact recall: story-like filler in which each fact ("The code for locker 17 is 4821.")
// appears exactly once, questions at the end. No dataset file: the "path" is a spec string,
//   rare-fact:seed=0,samples=20,words=400,facts=1[,positions=0.25+0.75]
// (only the path's last component is read, so a datasets-root prefix is harmless). Keys may be
// omitted (defaults below). `words` counts filler words (each fact adds 7); `positions` are
// fractions of the filler (0 = before it, 1 = right before the questions), one per fact; without them
// each fact gets a seeded uniform position in [0.05, 0.95].
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tasks/task.h"

namespace kvbench::tasks {

struct RareFactSpec {
  std::uint64_t seed = 0;
  int samples = 20;
  int words = 400;
  int facts = 1;
  std::vector<double> positions;  // empty = random per sample
};

// Throws kvbench::Error naming the spec and the offending key.
RareFactSpec parse_rare_fact_spec(const std::string& text);

// Sample i depends only on (seed, i, words, facts, positions), not on `samples`. Ids "s<seed>/<i>".
// record: {id, answers: ["4821", ...], lockers: [17, ...], positions: [...]} in fact order;
// inputs: {text} (the story with the facts in it).
std::vector<Sample> generate_rare_fact_samples(const RareFactSpec& spec);

}  // namespace kvbench::tasks
