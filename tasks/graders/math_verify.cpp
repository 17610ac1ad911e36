#include "tasks/graders/math_verify.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "tasks/graders/f1.h"

namespace kvbench::graders {

namespace {

using json = nlohmann::json;

// The coprocess: one request {"pred", "gold"} per line in, one reply per line out. Replies go to a copy of
// the original stdout, and fd 1 is pointed at stderr, so nothing math-verify or sympy prints can be taken
// for a reply. compare_math's call verbatim; an exception (tasks.py would crash) is reported, not a verdict.
constexpr const char* kScript = R"PY(
import json, os, sys
out = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
def reply(**r):
    out.write(json.dumps(r) + "\n")
    out.flush()
try:
    from math_verify import parse, verify
except BaseException as e:
    reply(error="cannot import math_verify: %r" % (e,))
    sys.exit(1)
reply(ready=True)
for line in sys.stdin:
    q = json.loads(line)
    pred, gold = q["pred"], q["gold"]
    try:
        reply(equal=bool(verify(gold=parse(f"${gold}$"), target=parse(f"${pred}$"))))
    except Exception as e:
        reply(error=repr(e))
)PY";

constexpr double kStartSeconds = 120.0;  // importing sympy on a cold disk

std::string python_executable() {
  if (const char* env = std::getenv("KVBENCH_PYTHON"); env != nullptr && *env != '\0') return env;
#ifdef KVBENCH_SOURCE_DIR
  const std::string venv = std::string(KVBENCH_SOURCE_DIR) + "/.venv/bin/python";
  if (::access(venv.c_str(), X_OK) == 0) return venv;
#endif
  return "python3";
}

}  // namespace

std::optional<std::string> reference_boxed_answer(std::string_view text) {
  constexpr std::string_view kOpen = "\\boxed{";
  const std::size_t last = text.rfind(kOpen);
  if (last == std::string_view::npos) return std::nullopt;
  const std::size_t start = last + kOpen.size();
  int depth = 1;
  for (std::size_t i = start; i < text.size(); ++i) {
    if (text[i] == '{') ++depth;
    if (text[i] == '}' && --depth == 0) return python_strip(text.substr(start, i - start));
  }
  return std::nullopt;
}

MathVerify::~MathVerify() { stop(); }

void MathVerify::stop() {
  if (socket_ >= 0) ::close(socket_);
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);  // it holds no state worth a graceful exit, and may be stuck in sympy
    ::waitpid(pid_, nullptr, 0);
  }
  socket_ = -1;
  pid_ = -1;
  buffer_.clear();
}

void MathVerify::start() {
  python_ = python_executable();
  const auto unavailable = [&](const std::string& why) {
    stop();
    fail("profile reference grades MATH500 with math-verify: run scripts/setup.sh or set KVBENCH_PYTHON ({}: {})",
         python_, why);
  };
  int fds[2];
  // A socket, not pipes: send() with MSG_NOSIGNAL cannot kill this process with SIGPIPE if Python died.
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) unavailable("socketpair failed");
  const char* argv[] = {python_.c_str(), "-c", kScript, nullptr};
  pid_ = ::fork();
  if (pid_ == 0) {  // the child: only async-signal-safe calls until exec
    ::dup2(fds[1], 0);
    ::dup2(fds[1], 1);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 2);
    ::execvp(argv[0], const_cast<char* const*>(argv));
    ::_exit(127);
  }
  ::close(fds[1]);
  socket_ = fds[0];
  if (pid_ < 0) unavailable("fork failed");
  json hello;
  try {
    hello = json::parse(read_line(kStartSeconds));
  } catch (const std::exception& e) {
    unavailable(e.what());
  }
  if (hello.contains("error")) unavailable(hello["error"].get<std::string>());
}

std::string MathVerify::read_line(double timeout_seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  for (;;) {
    if (const std::size_t end = buffer_.find('\n'); end != std::string::npos) {
      std::string line = buffer_.substr(0, end);
      buffer_.erase(0, end + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd ready{socket_, POLLIN, 0};
    const int polled = left.count() > 0 ? ::poll(&ready, 1, static_cast<int>(left.count())) : 0;
    if (polled < 0 && errno == EINTR) continue;
    if (polled == 0) fail("no reply within {} s", timeout_seconds);
    char chunk[4096];
    const ssize_t n = ::read(socket_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("the process exited");
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

bool MathVerify::equal(std::string_view prediction, std::string_view gold) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pid_ < 0) start();
  // ASCII JSON (non-ASCII escaped, invalid UTF-8 as U+FFFD, as the reference's decoded str would hold it).
  const std::string request =
      json{{"pred", std::string(prediction)}, {"gold", std::string(gold)}}.dump(-1, ' ', true, json::error_handler_t::replace) +
      "\n";
  json reply;
  try {
    for (std::size_t sent = 0; sent < request.size();) {
      const ssize_t n = ::send(socket_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("the process exited");
      sent += static_cast<std::size_t>(n);
    }
    reply = json::parse(read_line(timeout_seconds_));
  } catch (const std::exception& e) {
    stop();  // a hung or dead process is replaced on the next call
    fail("math-verify ({}): {}", python_, e.what());
  }
  if (reply.contains("error")) fail("math-verify: {}", reply["error"].get<std::string>());
  return reply.at("equal").get<bool>();
}

}  // namespace kvbench::graders
