// What kvbench fetches itself, each pinned by checksum: the benchmarks' datasets (`kvbench datasets`,
// run/datasets.h) and the real models of models/manifest.json (`kvbench models`, run/models_cache.h).
#pragma once
#include "run/datasets.h"
#include "run/models_cache.h"
