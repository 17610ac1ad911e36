// Running untrusted programs (model-written code) in a bubblewrap sandbox: no network, read-only
// system (/usr only; no /etc, /root, /home or repository), private tmpfs /tmp and working dir holding
// only the given files, CPU/memory/process/file-size limits, a wall timeout that kills everything the
// program started, and bounded captured output.
//
// When kvbench runs as root, the program runs under a fresh unprivileged uid per run: root ignores
// RLIMIT_NPROC, and a private uid keeps concurrent sandboxes from sharing one process budget.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace kvbench::graders {

struct SandboxLimits {
  double wall_seconds = 6.0;                 // per run; the whole sandbox is killed when it passes
  int cpu_seconds = 10;                      // RLIMIT_CPU (a backstop; the wall timeout usually fires first)
  std::size_t memory_bytes = 2ull << 30;     // RLIMIT_AS
  int max_processes = 16;                    // RLIMIT_NPROC for the sandbox's uid (fork bombs)
  std::size_t max_file_bytes = 16ull << 20;  // RLIMIT_FSIZE
  std::size_t tmpfs_bytes = 64ull << 20;     // size of each private tmpfs (/tmp and the working dir)
  std::size_t max_stdout_bytes = 16ull << 20;  // more than this stops the run (output_truncated)
  std::size_t max_stderr_bytes = 64ull << 10;  // stderr beyond this is dropped, not fatal
};

struct SandboxConfig {
  std::string bwrap = "/usr/bin/bwrap";
  SandboxLimits limits;
};

struct SandboxFile {
  std::string name;  // plain file name inside the working dir
  std::string content;
};

struct SandboxRun {
  std::vector<std::string> argv;  // argv[0]: an absolute path inside the sandbox (e.g. /usr/bin/python3)
  std::vector<SandboxFile> files;
  std::string stdin_text;
  std::vector<std::string> env;  // "NAME=value" added to PATH, HOME and LANG
};

struct SandboxResult {
  int exit_code = -1;  // the program's exit status; -1 when the sandbox was killed (timeout, output)
  int signal = 0;      // the signal that ended the program (bwrap reports it as exit status 128+N)
  bool timed_out = false;
  bool output_truncated = false;  // stdout passed max_stdout_bytes and the run was stopped
  std::string stdout_text;
  std::string stderr_text;
  double wall_seconds = 0.0;

  bool clean_exit() const { return exit_code == 0 && !timed_out && !output_truncated; }
};

class Sandbox {
 public:
  explicit Sandbox(SandboxConfig config = {});
  // Throws kvbench::Error (with bwrap's own message) when the sandbox itself cannot be set up, so an
  // unusable bwrap is never mistaken for a failing program.
  SandboxResult run(const SandboxRun& request) const;
  const SandboxConfig& config() const { return config_; }

 private:
  SandboxConfig config_;
};

// The directory programs run in (their cwd and HOME).
inline constexpr const char* kSandboxWorkDir = "/sandbox";

}  // namespace kvbench::graders
