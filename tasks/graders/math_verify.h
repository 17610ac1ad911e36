// MATH500 as the counter-causal paper's code grades it (tasks.py: extract_boxed_answer, compare_math), for
// Protocol::Reference. The verdict is math-verify's own, not an approximation: a persistent Python
// coprocess runs the pinned math_verify (requirements.txt) and answers one JSON line per comparison.
#pragma once
#include <sys/types.h>

#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace kvbench::graders {

// extract_boxed_answer: the content of the LAST "\boxed{" up to its matching brace, Python-stripped;
// nullopt when there is none or that last one is unclosed (an earlier complete box does not count). No
// \fbox, no "\boxed x", no "the answer is" fallback.
std::optional<std::string> reference_boxed_answer(std::string_view text);

// compare_math's verify(gold=parse(f"${gold}$"), target=parse(f"${pred}$")) in a Python process started on
// the first call and kept for the next ones. Python: $KVBENCH_PYTHON, else the source tree's .venv (when
// built with KVBENCH_SOURCE_DIR), else python3. Throws kvbench::Error when it cannot start or cannot import
// math_verify, when it reports an error, or when a verdict takes longer than `timeout_seconds` (math-verify
// bounds parse and verify by its own 5 s alarms; the read timeout is for a hung process, which is then
// killed and restarted on the next call). Thread-safe (one comparison at a time).
class MathVerify {
 public:
  explicit MathVerify(double timeout_seconds = 60.0) : timeout_seconds_(timeout_seconds) {}
  ~MathVerify();
  MathVerify(const MathVerify&) = delete;
  MathVerify& operator=(const MathVerify&) = delete;

  bool equal(std::string_view prediction, std::string_view gold);

 private:
  void start();
  void stop();
  std::string read_line(double timeout_seconds);
  std::string python_;
  double timeout_seconds_;
  pid_t pid_ = -1;
  int socket_ = -1;
  std::string buffer_;  // bytes read past the last line
  std::mutex mutex_;
};

}  // namespace kvbench::graders
