#include "run/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace kvbench {

std::string format_duration(double seconds) {
  const auto total = static_cast<int64_t>(std::llround(std::max(seconds, 0.0)));
  if (total >= 3600) return fmt::format("{}:{:02}:{:02}", total / 3600, total / 60 % 60, total % 60);
  return fmt::format("{}:{:02}", total / 60, total % 60);
}

Progress::Progress(std::string label, int64_t total, int64_t done, double log_interval)
    : label_(std::move(label)), total_(total), done_(done), resumed_(done), log_interval_(log_interval),
      tty_(::isatty(STDERR_FILENO) != 0), start_(Clock::now()), last_draw_(start_) {
  draw(true);
}

void Progress::advance(int64_t items) {
  done_ += items;
  draw(false);
}

void Progress::finish() {
  draw(true);
  if (tty_) fmt::print(stderr, "\n");
}

std::string Progress::line() const {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const int64_t fresh = done_ - resumed_;
  const double rate = elapsed > 0 && fresh > 0 ? fresh / elapsed : 0.0;
  const std::string eta = rate > 0 ? format_duration((total_ - done_) / rate) : "?";
  constexpr int kWidth = 24;
  const int filled = total_ > 0 ? static_cast<int>(kWidth * done_ / total_) : kWidth;
  return fmt::format("{} [{}{}] {}/{} {:.2f}/s elapsed {} eta {}", label_, std::string(filled, '#'),
                     std::string(kWidth - filled, '.'), done_, total_, rate, format_duration(elapsed), eta);
}

void Progress::draw(bool force) {
  const auto now = Clock::now();
  const double since = std::chrono::duration<double>(now - last_draw_).count();
  if (tty_) {
    if (!force && since < 0.2) return;
    fmt::print(stderr, "\r\033[K{}", line());
  } else {
    if (!force && since < log_interval_) return;
    fmt::print(stderr, "{}\n", line());
  }
  std::fflush(stderr);
  last_draw_ = now;
}

}  // namespace kvbench
