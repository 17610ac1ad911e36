#include "tasks/graders/code_sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <utility>

#include "common/error.h"

namespace kvbench::graders {

namespace {

using Clock = std::chrono::steady_clock;

// Fixed descriptor numbers in the bwrap process: 0-2 stdio, then --json-status-fd, then --file sources.
constexpr int kStatusFd = 3;
constexpr int kFirstFileFd = 4;
// Sources are first moved at or above this number so that placing them at 0..N cannot clobber one.
constexpr int kParkedFdFloor = 100;
// Unprivileged uids handed to sandboxes when kvbench runs as root; far from any real account.
constexpr uid_t kSandboxUidBase = 1'500'000;
constexpr uid_t kSandboxUidCount = 100'000;

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

[[noreturn]] void fail_errno(const char* what) { fail("sandbox: {} failed: {}", what, std::strerror(errno)); }

// An anonymous in-memory file holding `content`, positioned at its start (stdin and --file sources).
UniqueFd memory_file(const char* name, const std::string& content) {
  UniqueFd fd(memfd_create(name, MFD_CLOEXEC));
  if (fd.get() < 0) fail_errno("memfd_create");
  for (std::size_t done = 0; done < content.size();) {
    ssize_t n = ::write(fd.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_errno("write to memfd");
    done += static_cast<std::size_t>(n);
  }
  if (::lseek(fd.get(), 0, SEEK_SET) < 0) fail_errno("lseek");
  return fd;
}

struct Pipe {
  UniqueFd read_end, write_end;
};

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) fail_errno("pipe2");
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// The host's /bin, /lib, ... are usually symlinks into /usr (merged /usr); mirror whatever they are.
std::vector<std::string> system_mount_arguments() {
  std::vector<std::string> args = {"--ro-bind", "/usr", "/usr"};
  for (const char* path : {"/bin", "/sbin", "/lib", "/lib32", "/lib64"}) {
    struct stat info {};
    if (::lstat(path, &info) != 0) continue;
    if (S_ISLNK(info.st_mode)) {
      char target[4096];
      ssize_t n = ::readlink(path, target, sizeof target - 1);
      if (n <= 0) continue;
      args.insert(args.end(), {"--symlink", std::string(target, static_cast<std::size_t>(n)), path});
    } else if (S_ISDIR(info.st_mode)) {
      args.insert(args.end(), {"--ro-bind", path, path});
    }
  }
  return args;
}

std::vector<std::string> bwrap_arguments(const SandboxConfig& config, const SandboxRun& request) {
  const std::string tmpfs_size = std::to_string(config.limits.tmpfs_bytes);
  std::vector<std::string> args = {config.bwrap};
  for (auto& arg : system_mount_arguments()) args.push_back(std::move(arg));
  // --unshare-all: no network (an empty net namespace), own pid/ipc/uts namespaces.
  // --as-pid-1: the program is its namespace's init, so killing it kills all it started (stop_sandbox).
  // --new-session: no controlling terminal to inject keystrokes into (TIOCSTI).
  // --die-with-parent: the program dies with bwrap, which dies with kvbench (PR_SET_PDEATHSIG below).
  // --json-status-fd: tells a program that ran and failed apart from a sandbox that never started.
  args.insert(args.end(), {"--proc", "/proc", "--dev", "/dev",                                     //
                           "--size", tmpfs_size, "--tmpfs", "/tmp",                                //
                           "--size", tmpfs_size, "--tmpfs", kSandboxWorkDir,                       //
                           "--unshare-all", "--as-pid-1", "--new-session", "--die-with-parent",  //
                           "--cap-drop", "ALL", "--json-status-fd", std::to_string(kStatusFd)});
  for (std::size_t i = 0; i < request.files.size(); ++i) {
    const std::string& name = request.files[i].name;
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
      fail("sandbox: file name \"{}\" must be a plain name", name);
    args.insert(args.end(), {"--file", std::to_string(kFirstFileFd + static_cast<int>(i)),
                             std::string(kSandboxWorkDir) + "/" + name});
  }
  args.insert(args.end(), {"--chdir", kSandboxWorkDir, "--"});
  args.insert(args.end(), request.argv.begin(), request.argv.end());
  return args;
}

uid_t next_sandbox_uid() {
  static std::atomic<unsigned> counter{0};
  const unsigned spread = static_cast<unsigned>(::getpid()) * 7919u + counter++;
  return kSandboxUidBase + spread % kSandboxUidCount;
}

int entries_in(const std::string& directory) {
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) return 0;
  int count = 0;
  while (dirent* entry = ::readdir(dir))
    if (entry->d_name[0] != '.') ++count;
  ::closedir(dir);
  return count;
}

// RLIMIT_NPROC counts threads. When kvbench is not root the program shares the caller's uid, whose
// existing threads (kvbench's own included) count against the limit too, so the budget goes on top.
int threads_owned_by(uid_t uid) {
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return 0;
  int count = 0;
  while (dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    struct stat info {};
    if (::fstatat(::dirfd(proc), entry->d_name, &info, 0) == 0 && info.st_uid == uid)
      count += entries_in(std::string("/proc/") + entry->d_name + "/task");
  }
  ::closedir(proc);
  return count;
}

// Everything the forked child needs, prepared before fork() so the child only makes system calls.
struct ChildPlan {
  std::vector<std::string> argv_storage, env_storage;
  std::vector<char*> argv, envp;
  std::vector<std::pair<int, int>> fd_moves;  // (source, target); targets are 0..N-1 in order
  std::vector<int> parked;                    // scratch, sized like fd_moves
  std::vector<std::pair<int, rlimit>> limits;
  std::optional<uid_t> uid;  // drop to this uid/gid (root only)
};

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

void write_all_to_stderr(const char* text) {
  std::size_t length = std::strlen(text);
  while (length > 0) {
    ssize_t n = ::write(2, text, length);
    if (n <= 0) return;
    text += n;
    length -= static_cast<std::size_t>(n);
  }
}

[[noreturn]] void child_failed(const char* what) {
  write_all_to_stderr("kvbench sandbox: ");
  write_all_to_stderr(what);
  write_all_to_stderr(": ");
  write_all_to_stderr(std::strerror(errno));
  write_all_to_stderr("\n");
  ::_exit(127);
}

// Runs in the child between fork() and exec: only async-signal-safe calls, no allocation.
[[noreturn]] void exec_bwrap(ChildPlan& plan) {
  // Own process group: the fallback when a stopped sandbox does not end (see stop_sandbox).
  ::setpgid(0, 0);
  // Park every source above the targets first: placing one directly could clobber another source.
  for (std::size_t i = 0; i < plan.fd_moves.size(); ++i) {
    plan.parked[i] = ::fcntl(plan.fd_moves[i].first, F_DUPFD, kParkedFdFloor);
    if (plan.parked[i] < 0) child_failed("fcntl(F_DUPFD)");
  }
  for (std::size_t i = 0; i < plan.fd_moves.size(); ++i)
    if (::dup2(plan.parked[i], plan.fd_moves[i].second) < 0) child_failed("dup2");
  const auto first_unused = static_cast<unsigned>(plan.fd_moves.size());
  if (::close_range(first_unused, ~0u, 0) != 0) {
    for (int fd = static_cast<int>(first_unused); fd < 65536; ++fd) ::close(fd);
  }
  for (const auto& [resource, limit] : plan.limits)
    if (::setrlimit(resource, &limit) != 0) child_failed("setrlimit");
  if (plan.uid) {
    if (::setgroups(0, nullptr) != 0) child_failed("setgroups");
    if (::setresgid(*plan.uid, *plan.uid, *plan.uid) != 0) child_failed("setresgid");
    if (::setresuid(*plan.uid, *plan.uid, *plan.uid) != 0) child_failed("setresuid");
  }
  // After the uid change, which clears it: bwrap dies with kvbench.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::execve(plan.argv[0], plan.argv.data(), plan.envp.data());
  child_failed(plan.argv[0]);
}

rlimit both(rlim_t value) { return rlimit{value, value}; }

std::vector<std::pair<int, rlimit>> resource_limits(const SandboxLimits& limits, bool private_uid) {
  const auto cpu = static_cast<rlim_t>(limits.cpu_seconds);
  const int nproc = limits.max_processes + (private_uid ? 0 : threads_owned_by(::geteuid()));
  return {{RLIMIT_CPU, rlimit{cpu, cpu + 1}},  // SIGXCPU, then SIGKILL a second later
          {RLIMIT_AS, both(limits.memory_bytes)},
          {RLIMIT_NPROC, both(static_cast<rlim_t>(nproc))},
          {RLIMIT_FSIZE, both(limits.max_file_bytes)},
          {RLIMIT_CORE, both(0)}};
}

// Reads stdout, stderr and bwrap's status until all close, the deadline passes or stdout overflows.
class OutputCollector {
 public:
  OutputCollector(const SandboxLimits& limits, int stdout_fd, int stderr_fd, int status_fd)
      : limits_(limits), fds_{{stdout_fd, POLLIN, 0}, {stderr_fd, POLLIN, 0}, {status_fd, POLLIN, 0}} {}

  void collect(Clock::time_point deadline) {
    int open_count = kStreams;
    while (open_count > 0) {
      const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (remaining.count() <= 0) {
        timed_out = true;
        return;
      }
      int ready = ::poll(fds_, kStreams, static_cast<int>(remaining.count()) + 1);
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) fail_errno("poll");
      for (int i = 0; i < kStreams; ++i) {
        if (fds_[i].fd < 0 || fds_[i].revents == 0) continue;
        if (!read_chunk(i)) {
          fds_[i].fd = -1;
          --open_count;
        }
      }
      if (text[kStdout].size() > limits_.max_stdout_bytes) {
        output_truncated = true;
        text[kStdout].resize(limits_.max_stdout_bytes);
        return;
      }
    }
  }

  enum { kStdout, kStderr, kStatus, kStreams };
  std::string text[kStreams];
  bool timed_out = false, output_truncated = false;

 private:
  // False at end of file. Stderr is only kept up to its cap; stdout's overflow ends the run.
  bool read_chunk(int stream) {
    char buffer[65536];
    ssize_t n = ::read(fds_[stream].fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) return false;
    std::size_t keep = static_cast<std::size_t>(n);
    if (stream == kStderr) keep = std::min(keep, limits_.max_stderr_bytes - std::min(limits_.max_stderr_bytes, text[stream].size()));
    text[stream].append(buffer, keep);
    return true;
  }

  const SandboxLimits& limits_;
  pollfd fds_[kStreams];
};

struct BwrapStatus {
  std::optional<pid_t> program_pid;  // host pid of the program; set once bwrap has started it
  std::optional<int> exit_code;
};

// bwrap --json-status-fd writes one JSON object per line: {"child-pid": N, ...} once the program's
// process exists, {"exit-code": N} when it ends.
BwrapStatus parse_status(const std::string& text) {
  BwrapStatus status;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    auto object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!object.is_object()) continue;
    if (object.contains("child-pid") && object["child-pid"].is_number_integer())
      status.program_pid = object["child-pid"].get<pid_t>();
    if (object.contains("exit-code") && object["exit-code"].is_number_integer())
      status.exit_code = object["exit-code"].get<int>();
  }
  return status;
}

int reap(pid_t pid) {
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  return wait_status;
}

// Kills the program first: it is pid 1 of its namespace (--as-pid-1), so the kernel kills everything
// it started, and bwrap reaps it and exits. Killing bwrap first would leave the program to be reaped
// by the host's init, which in some containers never happens. bwrap cannot have reaped the program
// while it is still running itself, so the pid cannot have been reused.
int stop_sandbox(pid_t bwrap_pid, std::optional<pid_t> program_pid) {
  int wait_status = 0;
  if (program_pid && ::waitpid(bwrap_pid, &wait_status, WNOHANG) == 0) {
    ::kill(*program_pid, SIGKILL);
    for (int attempt = 0; attempt < 200; ++attempt) {  // up to 2 s
      if (::waitpid(bwrap_pid, &wait_status, WNOHANG) == bwrap_pid) return wait_status;
      ::usleep(10'000);
    }
  }
  ::kill(-bwrap_pid, SIGKILL);  // bwrap's process group: bwrap itself, and the program if not yet in its own session
  return reap(bwrap_pid);
}

// Everything the child needs: bwrap's arguments and environment, descriptors, limits and uid.
ChildPlan make_plan(const SandboxConfig& config, const SandboxRun& request, std::vector<std::pair<int, int>> fd_moves) {
  const bool as_root = ::geteuid() == 0;
  ChildPlan plan;
  plan.argv_storage = bwrap_arguments(config, request);
  plan.env_storage = {"PATH=/usr/bin:/bin", std::string("HOME=") + kSandboxWorkDir, "LANG=C.UTF-8"};
  plan.env_storage.insert(plan.env_storage.end(), request.env.begin(), request.env.end());
  plan.argv = c_strings(plan.argv_storage);
  plan.envp = c_strings(plan.env_storage);
  plan.fd_moves = std::move(fd_moves);
  plan.parked.resize(plan.fd_moves.size());
  plan.limits = resource_limits(config.limits, as_root);
  if (as_root) plan.uid = next_sandbox_uid();
  return plan;
}

}  // namespace

Sandbox::Sandbox(SandboxConfig config) : config_(std::move(config)) {}

SandboxResult Sandbox::run(const SandboxRun& request) const {
  if (request.argv.empty() || request.argv[0].empty() || request.argv[0][0] != '/')
    fail("sandbox: argv[0] must be an absolute path inside the sandbox");

  UniqueFd stdin_fd = memory_file("kvbench-stdin", request.stdin_text);
  std::vector<UniqueFd> file_fds;
  for (const auto& file : request.files) file_fds.push_back(memory_file("kvbench-file", file.content));
  Pipe out = make_pipe(), err = make_pipe(), status = make_pipe();
  std::vector<std::pair<int, int>> fd_moves = {
      {stdin_fd.get(), 0}, {out.write_end.get(), 1}, {err.write_end.get(), 2}, {status.write_end.get(), kStatusFd}};
  for (std::size_t i = 0; i < file_fds.size(); ++i)
    fd_moves.emplace_back(file_fds[i].get(), kFirstFileFd + static_cast<int>(i));
  ChildPlan plan = make_plan(config_, request, std::move(fd_moves));

  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) fail_errno("fork");
  if (pid == 0) exec_bwrap(plan);
  ::setpgid(pid, pid);  // also here, so the group exists before any kill(-pid) whichever runs first
  out.write_end.reset();
  err.write_end.reset();
  status.write_end.reset();

  OutputCollector collector(config_.limits, out.read_end.get(), err.read_end.get(), status.read_end.get());
  collector.collect(start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(config_.limits.wall_seconds)));
  const BwrapStatus bwrap_status = parse_status(collector.text[OutputCollector::kStatus]);
  const bool stopped = collector.timed_out || collector.output_truncated;
  const int wait_status = stopped ? stop_sandbox(pid, bwrap_status.program_pid) : reap(pid);

  SandboxResult result;
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.timed_out = collector.timed_out;
  result.output_truncated = collector.output_truncated;
  result.stdout_text = std::move(collector.text[OutputCollector::kStdout]);
  result.stderr_text = std::move(collector.text[OutputCollector::kStderr]);
  if (!bwrap_status.program_pid && !stopped)
    fail("sandbox: bubblewrap ({}) could not start the program: {}", config_.bwrap,
         result.stderr_text.empty() ? "no message" : result.stderr_text);
  if (stopped) {
    result.signal = SIGKILL;
  } else {
    // bwrap reports the program's status, a death by signal N as 128+N.
    result.exit_code = bwrap_status.exit_code.value_or(WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + SIGKILL);
    if (result.exit_code > 128 && result.exit_code < 128 + NSIG) result.signal = result.exit_code - 128;
  }
  return result;
}

}  // namespace kvbench::graders
