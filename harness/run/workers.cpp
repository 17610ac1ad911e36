#include "run/workers.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"

namespace kvbench {

namespace {

// This process's command line (argv), from /proc/self/cmdline.
std::vector<std::string> own_command_line() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> words;
  for (std::string word; std::getline(file, word, '\0');) words.push_back(word);
  if (words.empty()) fail("/proc/self/cmdline: cannot read this process's command line");
  return words;
}

// The same command line for one of --workers' processes: --workers dropped, --as-worker added.
std::vector<std::string> worker_command_line() {
  std::vector<std::string> words;
  const std::vector<std::string> own = own_command_line();
  for (size_t i = 0; i < own.size(); ++i) {
    if (own[i] == "--workers") {
      ++i;  // and its value
      continue;
    }
    if (own[i].rfind("--workers=", 0) == 0) continue;
    words.push_back(own[i]);
  }
  words.push_back("--as-worker");
  return words;
}

// Waits for every child; returns how many did not exit with status 0.
int64_t wait_failed(const std::vector<pid_t>& children) {
  int64_t failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  return failed;
}

}  // namespace

double run_workers(int64_t count) {
  const std::filesystem::path self = std::filesystem::canonical("/proc/self/exe");
  std::vector<std::string> words = worker_command_line();
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> children;
  for (int64_t w = 0; w < count; ++w) {
    const pid_t pid = fork();
    if (pid < 0) fail("--workers: cannot start a worker process ({})", std::strerror(errno));
    if (pid == 0) {  // only async-signal-safe calls until exec
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      execv(self.c_str(), argv.data());
      _exit(127);
    }
    children.push_back(pid);
  }
  const int64_t failed = wait_failed(children);
  if (failed > 0) fail("{} of {} worker processes failed (see their messages above); rerun to resume", failed, count);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kvbench
