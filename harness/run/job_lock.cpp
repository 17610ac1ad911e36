#include "run/job_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace kvbench {

namespace {

// A holder removes the file as it finishes, so a lock taken on a file no longer at `path` guards nothing.
bool still_named(int fd, const std::filesystem::path& path) {
  struct stat held {}, named {};
  return ::fstat(fd, &held) == 0 && ::stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
         held.st_ino == named.st_ino;
}

}  // namespace

std::optional<JobLock> JobLock::try_take(const std::filesystem::path& out) {
  const std::filesystem::path path = out.string() + ".lock";
  for (;;) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) fail("{}: cannot create the job's lock file ({})", path.string(), std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      ::close(fd);
      if (error == EWOULDBLOCK) return std::nullopt;
      fail("{}: cannot lock ({})", path.string(), std::strerror(error));
    }
    if (still_named(fd, path)) return JobLock(path, fd);
    ::close(fd);
  }
}

JobLock::JobLock(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}

JobLock::JobLock(JobLock&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) { other.fd_ = -1; }

JobLock::~JobLock() {
  if (fd_ < 0) return;
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
  ::close(fd_);
}

}  // namespace kvbench
