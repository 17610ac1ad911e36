// `kvbench sweep --workers N`: N processes of this same sweep, each with its own model and --threads, each
// running the next job that no process holds (run/job_lock.h), so the jobs spread over them as they finish and
// each job runs once, exactly as one process runs it. No libtorch here: it is only fork, exec and wait.
#pragma once
#include <cstdint>

namespace kvbench {

// Starts `count` processes of this process's command line (/proc/self/cmdline) with --workers dropped and
// --as-worker added, and waits for them all; a worker dies with this process. Throws kvbench::Error when one
// cannot start or fails. Returns the seconds they ran.
double run_workers(int64_t count);

}  // namespace kvbench
