#include "run/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>

#include <spdlog/spdlog.h>

#include "common/error.h"
#include "run/job.h"

namespace kvbench {

namespace {

void write_all(int fd, const std::string& text, const std::filesystem::path& path) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) fail("{}: cannot write ({})", path.string(), std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) fail("{}: cannot sync ({})", path.string(), std::strerror(errno));
}

int open_for_append(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open for writing ({})", path.string(), std::strerror(errno));
  return fd;
}

// The header goes in whole or not at all: written aside, then renamed into place.
void create_journal(const std::filesystem::path& path, const json& header) {
  const std::filesystem::path aside = path.string() + ".tmp";
  const int fd = ::open(aside.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("{}: cannot create the run's work file ({})", aside.string(), std::strerror(errno));
  write_all(fd, header.dump() + "\n", aside);
  ::close(fd);
  std::filesystem::rename(aside, path);
}

SampleResults sample_from_json(const json& line) {
  SampleResults sample;
  for (const auto& row : line.at("rows")) sample.rows.push_back(row_from_json(row));
  for (const auto& trace : line.at("refreshes")) sample.refreshes.push_back(trace_from_json(trace));
  if (sample.rows.empty()) throw std::invalid_argument("no rows");
  return sample;
}

struct Contents {
  json header;
  std::map<std::string, SampleResults> finished;
  std::uintmax_t valid_bytes = 0;  // everything after is a torn last line
};

// Lines up to the first that does not parse; that one and everything after it are a damaged tail (a kill
// mid-write, a crash that left zeros): dropped with a warning, their samples run again.
Contents read_journal(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  Contents contents;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (in.eof()) break;  // no newline: torn by a kill mid-write
    try {
      const json value = json::parse(line);
      if (number == 1) {
        if (!value.is_object() || !value.contains("config")) throw std::invalid_argument("not a journal header");
        contents.header = value;
      } else {
        SampleResults sample = sample_from_json(value);
        contents.finished[sample.rows.front().sample_id] = std::move(sample);
      }
    } catch (const std::exception& e) {
      spdlog::warn("{}:{}: damaged line in the run's work file ({}); it and the lines after it are dropped and "
                   "their samples run again",
                   path.string(), number, std::string(e.what()).substr(0, 200));
      break;
    }
    contents.valid_bytes += line.size() + 1;
  }
  return contents;
}

}  // namespace

std::string utc_timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

Journal Journal::open(const std::filesystem::path& path, const json& config, bool force) {
  const json header = {{"kvbench_journal", 1}, {"config", config}, {"start_time", utc_timestamp()}};
  if (std::filesystem::exists(path) && force) std::filesystem::remove(path);
  if (!std::filesystem::exists(path)) create_journal(path, header);
  Journal journal(path, open_for_append(path), "", {});
  Contents contents = read_journal(path);
  if (contents.header.is_null()) {  // nothing readable, not even whose run it was: start it afresh
    create_journal(path, header);
    return Journal::open(path, config, false);
  }
  if (current_form(contents.header.value("config", json())) != current_form(config))
    fail("{}: an unfinished run of a different config is here (its config: {}); use another --out or pass --force",
         path.string(), contents.header.value("config", json()).dump());
  std::filesystem::resize_file(path, contents.valid_bytes);
  journal.start_time_ = contents.header.value("start_time", "");
  journal.finished_ = std::move(contents.finished);
  return journal;
}

Journal::Journal(std::filesystem::path path, int fd, std::string start_time,
                 std::map<std::string, SampleResults> finished)
    : path_(std::move(path)), fd_(fd), start_time_(std::move(start_time)), finished_(std::move(finished)) {}

Journal::Journal(Journal&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), start_time_(std::move(other.start_time_)),
      finished_(std::move(other.finished_)) {
  other.fd_ = -1;
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::append(const SampleResults& sample) {
  json line = {{"rows", json::array()}, {"refreshes", json::array()}};
  for (const auto& row : sample.rows) line["rows"].push_back(to_json(row));
  for (const auto& trace : sample.refreshes) line["refreshes"].push_back(to_json(trace));
  write_all(fd_, line.dump() + "\n", path_);
  finished_[sample.rows.front().sample_id] = sample;
}

void Journal::remove() {
  ::close(fd_);
  fd_ = -1;
  std::filesystem::remove(path_);
}

}  // namespace kvbench
