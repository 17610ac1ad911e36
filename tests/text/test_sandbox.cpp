// The bubblewrap sandbox: what a program can and cannot reach, and that hostile programs end within
// the limits without leaving processes behind.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <dirent.h>
#include <string>

#include "common/error.h"
#include "tasks/graders/code_sandbox.h"
#include "test_support.h"

using kvbench::graders::Sandbox;
using kvbench::graders::SandboxConfig;
using kvbench::graders::SandboxResult;

namespace {

// Short limits keep the hostile cases quick; the LiveCodeBench tests use the real 6 s.
Sandbox quick_sandbox() {
  SandboxConfig config;
  config.limits.wall_seconds = 3.0;
  config.limits.memory_bytes = 512ull << 20;
  config.limits.max_stdout_bytes = 1 << 20;
  return Sandbox(config);
}

SandboxResult run_python(const Sandbox& sandbox, const std::string& program, const std::string& stdin_text = "") {
  return sandbox.run({{"/usr/bin/python3", "-c", program}, {}, stdin_text, {}});
}

int processes_of_uid(uid_t uid) {
  int count = 0;
  DIR* proc = opendir("/proc");
  while (dirent* entry = readdir(proc)) {
    struct stat info {};
    if (entry->d_name[0] >= '0' && entry->d_name[0] <= '9' && fstatat(dirfd(proc), entry->d_name, &info, 0) == 0 &&
        info.st_uid == uid)
      ++count;
  }
  closedir(proc);
  return count;
}

// The program's first stdout line is its uid. Once run() returns, no process of that uid may remain,
// not even a zombie waiting for the host's init to reap it.
void require_no_survivors(const SandboxResult& result) {
  const uid_t uid = static_cast<uid_t>(std::stoul(result.stdout_text.substr(0, result.stdout_text.find('\n'))));
  if (uid == geteuid()) return;  // not root: the program shared our uid, so its processes are not separable
  CHECK(processes_of_uid(uid) == 0);
}

}  // namespace

TEST_CASE("sandbox runs a program with the given stdin, files and environment", "[sandbox]") {
  Sandbox sandbox = quick_sandbox();
  SandboxResult result = sandbox.run({{"/usr/bin/python3", "solution.py", "arg"},
                                      {{"solution.py", "import os, sys\n"
                                                       "print(sys.stdin.read().upper(), end='')\n"
                                                       "print(os.getcwd(), sorted(os.listdir('.')), sys.argv[1], os.environ['MARK'])\n"
                                                       "sys.exit(3)\n"}},
                                      "hello\n",
                                      {"MARK=set"}});
  CHECK(result.exit_code == 3);
  CHECK_FALSE(result.timed_out);
  CHECK(result.stdout_text == "HELLO\n/sandbox ['solution.py'] arg set\n");
}

TEST_CASE("sandbox reports an uncaught exception on stderr with a failing status", "[sandbox]") {
  SandboxResult result = run_python(quick_sandbox(), "raise ValueError('boom')");
  CHECK(result.exit_code == 1);
  CHECK_FALSE(result.clean_exit());
  CHECK_THAT(result.stderr_text, Catch::Contains("ValueError: boom"));
}

TEST_CASE("sandboxed programs cannot read host files or write the system", "[sandbox]") {
  const std::string repo_file = (kvbench::testing::source_dir() / "CMakeLists.txt").string();
  REQUIRE(access(repo_file.c_str(), R_OK) == 0);  // readable here, so a block inside means isolation
  const std::string program =
      "import os\n"
      "for path in ['/etc/shadow', '/etc/passwd', '/root', '" + repo_file + "', '" +
      kvbench::testing::shared_dir().string() + "', '/proc/1/root/etc/hostname']:\n"
      "    try:\n"
      "        open(path).read() if not os.path.isdir(path) else os.listdir(path)\n"
      "        print('READ', path)\n"
      "    except OSError:\n"
      "        print('blocked')\n"
      "for path in ['/usr/evil', '/bin/evil']:\n"
      "    try:\n"
      "        open(path, 'w').write('x')\n"
      "        print('WROTE', path)\n"
      "    except OSError:\n"
      "        print('blocked')\n";
  SandboxResult result = run_python(quick_sandbox(), program);
  INFO(result.stderr_text);
  CHECK(result.exit_code == 0);
  CHECK(result.stdout_text == std::string("blocked\nblocked\nblocked\nblocked\nblocked\nblocked\nblocked\nblocked\n"));
  CHECK(access("/usr/evil", F_OK) != 0);
}

TEST_CASE("sandboxed programs have no network, not even the host's loopback", "[sandbox]") {
  // A listener on the host's 127.0.0.1: reachable from here, so it must be unreachable inside.
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(listen(listener, 1) == 0);
  socklen_t length = sizeof address;
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  const int port = ntohs(address.sin_port);

  const std::string program =
      "import socket\n"
      "for host, port in [('127.0.0.1', " + std::to_string(port) + "), ('1.1.1.1', 80), ('10.0.0.1', 80)]:\n"
      "    try:\n"
      "        socket.create_connection((host, port), timeout=1)\n"
      "        print('CONNECTED', host)\n"
      "    except OSError:\n"
      "        print('unreachable')\n";
  SandboxResult result = run_python(quick_sandbox(), program);
  close(listener);
  INFO(result.stderr_text);
  CHECK(result.stdout_text == "unreachable\nunreachable\nunreachable\n");
}

TEST_CASE("an infinite loop is killed at the wall timeout", "[sandbox]") {
  const auto start = std::chrono::steady_clock::now();
  SandboxResult result = run_python(quick_sandbox(), "import os\nprint(os.getuid(), flush=True)\nwhile True: pass\n");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(result.timed_out);
  CHECK_FALSE(result.clean_exit());
  CHECK(seconds >= 2.9);
  CHECK(seconds < 6.0);
  require_no_survivors(result);
}

TEST_CASE("a fork bomb is capped by the process limit and fully killed", "[sandbox]") {
  const std::string program =
      "import os, time\n"
      "print(os.getuid(), flush=True)\n"
      "while True:\n"
      "    try:\n"
      "        os.fork()\n"
      "    except OSError:\n"
      "        time.sleep(0.01)\n";
  const auto start = std::chrono::steady_clock::now();
  SandboxResult result = run_python(quick_sandbox(), program);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK_FALSE(result.clean_exit());
  CHECK(seconds < 8.0);
  require_no_survivors(result);
}

TEST_CASE("unbounded allocation fails inside the memory limit", "[sandbox]") {
  const auto start = std::chrono::steady_clock::now();
  SandboxResult result = run_python(quick_sandbox(), "blocks = []\nwhile True: blocks.append(bytearray(50 << 20))\n");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK_FALSE(result.clean_exit());
  CHECK_THAT(result.stderr_text, Catch::Contains("MemoryError"));
  CHECK(seconds < 5.0);
}

TEST_CASE("background processes do not outlive the program", "[sandbox]") {
  // The parent exits at once; its child would sleep for a minute unless the sandbox ends with it.
  const auto start = std::chrono::steady_clock::now();
  SandboxResult result = run_python(quick_sandbox(),
                                    "import os, time\nprint(os.getuid(), flush=True)\n"
                                    "if os.fork() == 0:\n    time.sleep(60)\n");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(result.exit_code == 0);
  CHECK(seconds < 2.5);
  require_no_survivors(result);
}

TEST_CASE("output beyond the limit stops the run", "[sandbox]") {
  SandboxResult result = run_python(quick_sandbox(), "while True: print('x' * 1000)\n");
  CHECK(result.output_truncated);
  CHECK_FALSE(result.clean_exit());
  CHECK(result.stdout_text.size() == (1u << 20));
  CHECK(result.wall_seconds < 2.5);
}

TEST_CASE("an unusable bubblewrap is an error, not a failing program", "[sandbox]") {
  SandboxConfig config;
  config.bwrap = "/nonexistent/bwrap";
  CHECK_THROWS_WITH(run_python(Sandbox(config), "print(1)"),
                    Catch::Contains("/nonexistent/bwrap") && Catch::Contains("No such file"));
}

TEST_CASE("sandbox file names must be plain names", "[sandbox]") {
  CHECK_THROWS_AS(quick_sandbox().run({{"/usr/bin/python3", "-c", "pass"}, {{"../escape.py", ""}}, "", {}}),
                  kvbench::Error);
}
