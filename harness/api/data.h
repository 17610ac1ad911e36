// What kvbench fetches itself, each pinned by checksum: the benchmarks' datasets (`kvbench datasets`,
// run/datasets.h) and the real models of models/manifest.json (`kvbench models`, run/models_cache.h); and a job's
// samples written for kvpress's evaluation (`kvbench datasets export`).
#pragma once
#include <filesystem>

#include "run/datasets.h"
#include "run/models_cache.h"
#include "run/resolved_job.h"

namespace kvbench::api {

// The job's samples as JSON lines in kvpress's dataset format (run/kvpress_rows.h), sized by its tokenizer,
// written to `out` whole or not at all. Returns the number of rows.
int64_t export_kvpress_rows(const ResolvedJob& job, const std::filesystem::path& out);

}  // namespace kvbench::api
