// A progress bar on stderr with rate and ETA. On a terminal it redraws one line in place; otherwise
// (logs, CI, SLURM) it prints a plain line at most every `log_interval` seconds, and at the end.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace kvbench {

class Progress {
 public:
  // `done` items are already finished (resumed) and do not count towards the rate.
  Progress(std::string label, int64_t total, int64_t done = 0, double log_interval = 30.0);
  void advance(int64_t items = 1);
  void finish();  // ends the bar's line (the caller prints the summary)

 private:
  void draw(bool force);
  std::string line() const;

  using Clock = std::chrono::steady_clock;
  std::string label_;
  int64_t total_, done_, resumed_;
  double log_interval_;
  bool tty_;
  Clock::time_point start_, last_draw_;
};

// "1:05:03" / "4:07"
std::string format_duration(double seconds);

}  // namespace kvbench
