// One process per job: a lock file beside the output (OUT.lock) held with flock() from before anything of the
// job is read or written until the job ends. A second process on the same job (a requeued SLURM array task
// still running beside its replacement, the same sweep started twice) finds it held and leaves the job alone.
// The kernel drops the lock of a killed process, so a stale file blocks nobody.
#pragma once
#include <filesystem>
#include <optional>

namespace kvbench {

class JobLock {
 public:
  // The job's lock, or nullopt when another process holds it.
  static std::optional<JobLock> try_take(const std::filesystem::path& out);
  JobLock(JobLock&& other) noexcept;
  JobLock& operator=(JobLock&&) = delete;
  ~JobLock();  // removes the lock file, then releases it

 private:
  JobLock(std::filesystem::path path, int fd);
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace kvbench
