#include "run/datasets.h"

#include <curl/curl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <memory>

#include "common/error.h"

namespace kvbench {

namespace {

// Removes the file when it goes out of scope unless released: failures leave nothing behind.
struct TempFile {
  std::filesystem::path path;
  ~TempFile() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove(path, ignored);
  }
};

size_t write_to_file(char* data, size_t size, size_t count, void* file) {
  return std::fwrite(data, size, count, static_cast<std::FILE*>(file)) * size;
}

void download(const std::string& url, const std::filesystem::path& to) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(to.c_str(), "wb"), std::fclose);
  if (!file) fail("{}: cannot write", to.string());
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_FAILONERROR, 1L);  // HTTP 404 is an error, not a page to save
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, write_to_file);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, file.get());
  curl_easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, error);
  const CURLcode code = curl_easy_perform(curl.get());
  if (code != CURLE_OK) fail("{}: download failed ({})", url, *error ? error : curl_easy_strerror(code));
  if (std::fflush(file.get()) != 0) fail("{}: cannot write", to.string());
}

void require_checksum(const std::filesystem::path& file, const std::string& expected, const std::string& url) {
  if (expected.empty()) return;
  const std::string actual = sha256_of_file(file);
  if (actual != expected)
    fail("{}: checksum mismatch (sha256 {}, expected {}); nothing was written", url, actual, expected);
}

// tar headers: name [0,100), size in octal [124,136), ustar prefix [345,500); 512-byte blocks.
void extract_tgz_member(const std::filesystem::path& archive, const std::string& member, const std::filesystem::path& to) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> in(gzopen(archive.c_str(), "rb"), gzclose);
  if (!in) fail("{}: cannot read", archive.string());
  std::array<char, 512> block{};
  while (gzread(in.get(), block.data(), block.size()) == static_cast<int>(block.size()) && block[0] != '\0') {
    const std::string name(block.data(), strnlen(block.data(), 100));
    const int64_t size = std::strtoll(std::string(block.data() + 124, 12).c_str(), nullptr, 8);
    const int64_t padded = (size + 511) / 512 * 512;
    std::vector<char> data(padded);
    if (gzread(in.get(), data.data(), padded) != padded) break;
    if (std::filesystem::path(name).filename() != member) continue;
    std::ofstream out(to, std::ios::binary);
    if (!out.write(data.data(), size)) fail("{}: cannot write", to.string());
    return;
  }
  fail("{}: no member {} in the archive", archive.string(), member);
}

}  // namespace

const std::vector<DatasetSource>& dataset_sources() {
  static const std::vector<DatasetSource> sources = {
      {"math500", {"math500"}, "math500/test.jsonl",
       "35dc41080a3680858b27fa7e0533d2d547825316fc5dafe5d316f4ccc5a06132",
       "https://media.githubusercontent.com/media/openai/prm800k/7ecc794703b2877f63226f2477a49b34f9b25163/prm800k/"
       "math_splits/test.jsonl", "", "", "openai/prm800k (a Git LFS object; also HF HuggingFaceH4/MATH-500)"},
      {"aime24", {"aime24"}, "aime24/test.jsonl", "af2b8bd2aa911b6333ad0df32f3ca05c7ae8ed10f1731f4372c8ae26990bf7ac",
       "https://raw.githubusercontent.com/QwenLM/Qwen2.5-Math/615096eceb14e653ba791d862a21b326a1d26e12/evaluation/data/"
       "aime24/test.jsonl", "", "", "QwenLM/Qwen2.5-Math evaluation/data/aime24"},
      {"aime25", {"aime25"}, "aime25/test.jsonl", "1640877abbdb2b466901125d92963079449e7e8ed646eae0198a8b8fb167c43e",
       "", "", "", "built from eth-sri/matharena 81f103e3 data/aime (one line per problems/N.tex with answers.csv)"},
      {"hmmt_feb_2025", {"hmmt-feb-2025"}, "hmmt_feb_2025/test.jsonl",
       "46bfa490893db2575edb3e37e0737e2ecff729ee1354ff3bb990f420926f4f8a", "", "", "",
       "built from eth-sri/matharena 81f103e3 data/hmmt/hmmt_feb_2025"},
      // Published only on HF (parquet), so neither a single file nor a checksum can be named from here.
      {"hmmt_nov_2025", {"hmmt-nov-2025"}, "hmmt_nov_2025/test.jsonl", "", "", "", "",
       "HF MathArena/hmmt_nov_2025 (30 problems, CC BY-NC-SA 4.0): its rows as JSON lines; unverified"},
      {"gpqa_diamond", {"gpqa-diamond"}, "gpqa_diamond/gpqa_diamond.zip",
       "dc8b4d7f4127da42940f855da29b3c38032c31204314ce62da4af3d9825599db", "", "", "",
       "the official idavidrein/gpqa dataset.zip also works (other bytes, so no checksum here): put it at this path"},
      {"longhealth", {"longhealth"}, "longhealth/benchmark_v5.json", "",
       "https://raw.githubusercontent.com/kbressem/LongHealth/main/data/benchmark_v5.json", "", "",
       "kbressem/LongHealth (no published checksum: fetched unverified)"},
      {"qasper", {"qasper", "qasper-longbench"}, "qasper/qasper-test-v0.3.json",
       "6e29ad410e6e39aa1936017fb965b30a20eb2e7751997f55b97c9d281aa884e5",
       "https://qasper-dataset.s3.us-west-2.amazonaws.com/qasper-test-and-evaluator-v0.3.tgz",
       "72a52a41193e2838b8074f80ac074b94f956b84886c36a61c58a7df4171bdd72", "qasper-test-v0.3.json",
       "AllenAI's official test release"},
      {"qasper_dev", {"qasper-paper"}, "qasper/qasper-dev-v0.3.json", "",
       "https://qasper-dataset.s3.us-west-2.amazonaws.com/qasper-train-dev-v0.3.tgz", "", "qasper-dev-v0.3.json",
       "AllenAI's official train/dev release; unverified"},
      {"locomo", {"locomo", "locomo-paper"}, "locomo/locomo10.json", "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4",
       "https://raw.githubusercontent.com/snap-research/LoCoMo/3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376/data/"
       "locomo10.json", "", "", "snap-research/LoCoMo (CC BY-NC 4.0)"},
      {"livecodebench", {"livecodebench"}, "livecodebench/livecodebench_v5_2408_2502_prompts.jsonl",
       "6441538a8f5f4d598480315fb5b0b4ca47489bfb7d496972e290d06e39679905",
       "https://raw.githubusercontent.com/QwenLM/QwQ/620a5eadc89ff464d339367dd9c9973a93215c81/eval/data/"
       "livecodebench_v5.jsonl", "", "", "prompts only: the tests come from HF livecodebench/code_generation_lite"},
      {"livecodebench_v6", {"livecodebench-v6"}, "livecodebench/livecodebench_v6_prompts.jsonl", "", "", "", "",
       "HF livecodebench/code_generation_lite release_v6 in QwQ's prompt-file format (datasets/README.md); unverified"},
      // RULER's QA tasks (qa_1, qa_2) read these where the ruler spec names no file.
      {"squad", {}, "squad/dev-v2.0.json", "", "https://rajpurkar.github.io/SQuAD-explorer/dataset/dev-v2.0.json",
       "", "", "SQuAD v2.0 dev (CC BY-SA 4.0), RULER's qa_1; no published checksum: fetched unverified"},
      {"hotpotqa", {}, "hotpotqa/hotpot_dev_distractor_v1.json", "",
       "http://curtis.ml.cmu.edu/datasets/hotpot/hotpot_dev_distractor_v1.json", "", "",
       "HotpotQA dev, distractor setting (CC BY-SA 4.0), RULER's qa_2; unverified"},
      // Published only on HF (parquet): kvpress's RULER samples, the set its leaderboard scores.
      {"ruler_kvpress", {}, "ruler/kvpress_4096.jsonl", "", "", "", "",
       "HF simonjegou/ruler, config 4096, split test (kvpress's leaderboard set): its rows as JSON lines; unverified"},
  };
  return sources;
}

const DatasetSource& dataset_source(const std::string& name) {
  std::string known;
  for (const auto& source : dataset_sources()) {
    if (source.name == name || std::find(source.tasks.begin(), source.tasks.end(), name) != source.tasks.end())
      return source;
    known += (known.empty() ? "" : ", ") + source.name;
  }
  fail("unknown dataset \"{}\" (known: {})", name, known);
}

std::filesystem::path default_fetch_root() {
  if (const char* root = std::getenv("KVBENCH_DATA"); root && *root) return root;
  const char* home = std::getenv("HOME");
  if (!home || !*home) fail("neither $KVBENCH_DATA nor $HOME is set: pass --root DIR");
  return std::filesystem::path(home) / ".cache/kvbench/datasets";
}

std::string sha256_of_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail("{}: cannot read", file.string());
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr);
  std::vector<char> buffer(1 << 16);
  while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0)
    EVP_DigestUpdate(context.get(), buffer.data(), in.gcount());
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context.get(), digest, &length);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

std::filesystem::path recorded_digest_path(const std::filesystem::path& file) { return file.string() + ".sha256"; }

DatasetStatus dataset_status(const std::filesystem::path& root, const DatasetSource& source) {
  const std::filesystem::path file = root / source.file;
  if (!std::filesystem::exists(file)) return DatasetStatus::Missing;
  if (!source.sha256.empty())
    return sha256_of_file(file) == source.sha256 ? DatasetStatus::Verified : DatasetStatus::Corrupt;
  std::string recorded;
  if (!(std::ifstream(recorded_digest_path(file)) >> recorded)) return DatasetStatus::Unverified;
  return sha256_of_file(file) == recorded ? DatasetStatus::Unverified : DatasetStatus::Corrupt;
}

std::string to_string(DatasetStatus status) {
  switch (status) {
    case DatasetStatus::Missing: return "missing";
    case DatasetStatus::Verified: return "verified";
    case DatasetStatus::Unverified: return "present (no published checksum)";
    case DatasetStatus::Corrupt: return "CHECKSUM MISMATCH";
  }
  return "?";
}

std::string fetch_dataset(const DatasetSource& source, const std::filesystem::path& root, const std::string& mirror) {
  const bool from_archive = mirror.empty() && !source.member.empty();
  const std::string url = mirror.empty() ? source.url : mirror + "/" + source.file;
  if (url.empty())
    fail("{}: no single file to download ({}); fetch it from a mirror of a datasets root with --mirror URL",
         source.name, source.note);
  const std::filesystem::path target = root / source.file;
  std::error_code error;
  std::filesystem::create_directories(target.parent_path(), error);
  if (error) fail("{}: cannot create the directory ({})", target.parent_path().string(), error.message());
  TempFile downloaded{target.string() + ".download"}, extracted{target.string() + ".extracted"};
  download(url, downloaded.path);
  if (from_archive) {
    require_checksum(downloaded.path, source.archive_sha256, url);
    extract_tgz_member(downloaded.path, source.member, extracted.path);
    std::swap(downloaded.path, extracted.path);
  }
  require_checksum(downloaded.path, source.sha256, url);
  const std::string digest = sha256_of_file(downloaded.path);
  if (source.sha256.empty() && !(std::ofstream(recorded_digest_path(target)) << digest << "  " << target.filename().string() << "\n"))
    fail("{}: cannot write", recorded_digest_path(target).string());
  std::filesystem::rename(downloaded.path, target);
  downloaded.path.clear();  // in place now: keep it
  return digest;
}

}  // namespace kvbench
