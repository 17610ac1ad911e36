// HugePageArena (model/huge_pages.h): copies equal to .to()'s, aligned, disjoint, alive past the arena,
// and — where the kernel offers transparent huge pages — in memory advised for them, model weights included.
#include "torch_catch.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "model/huge_pages.h"
#include "model/model.h"
#include "model/random_model.h"
#include "model_test_util.h"
#include "test_support.h"

using namespace kvbench;
using kvbench::testing::shared_dir;
using kvbench::testing::tiny_model_config;

namespace {

// "[always] madvise never" → "always"; empty where the kernel has no THP.
std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  const auto open = line.find('['), close = line.find(']');
  return open == std::string::npos || close == std::string::npos ? "" : line.substr(open + 1, close - open - 1);
}

// The THPeligible flag of the mapping holding `address`, from /proc/self/smaps; -1 if not listed.
int thp_eligible(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream header(line);
    if (header >> std::hex >> begin >> dash >> end && dash == '-' && line.find(':') > line.find(' ')) {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("THPeligible:", 0) == 0) {
      return std::stoi(line.substr(12));
    }
  }
  return -1;
}

}  // namespace

TEST_CASE("HugePageArena copies are .to()'s values, 64-byte aligned, disjoint, and outlive the arena", "[model][huge_pages]") {
  at::manual_seed(5);
  const at::Tensor a = at::randn({37, 91}), b = at::randn({3, 5}).to(at::kBFloat16);
  at::Tensor a16, b32, big;
  {
    HugePageArena arena;
    a16 = arena.copy_of(a, at::kCPU, at::kBFloat16);
    b32 = arena.copy_of(b, at::kCPU, at::kFloat);
    big = arena.empty({(int64_t{300} << 20) / 4}, at::kFloat);  // more than one chunk: a chunk of its own
  }
  CHECK(at::equal(a16, a.to(at::kBFloat16)));
  CHECK(at::equal(b32, b.to(at::kFloat)));  // exact widening
  for (const at::Tensor& t : {a16, b32, big}) CHECK(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64 == 0);
  CHECK(reinterpret_cast<uintptr_t>(a16.data_ptr()) % (2 << 20) == 0);  // a chunk starts on a huge page
  big.fill_(7.0f);
  b32.fill_(-1.0f);
  CHECK(at::equal(a16, a.to(at::kBFloat16)));  // neighbours untouched
  CHECK(big[0].item<float>() == 7.0f);
  CHECK(big[big.numel() - 1].item<float>() == 7.0f);
}

TEST_CASE("model weights on the CPU live in memory advised for transparent huge pages", "[model][huge_pages]") {
  const std::string mode = thp_mode();
  if (mode != "always" && mode != "madvise") {
    WARN("skipped: transparent huge pages are " << (mode.empty() ? std::string("absent") : mode));
    return;
  }
  ModelConfig config = tiny_model_config(ModelFamily::Qwen2, 64, 4, 2, 100);
  const Model random = random_model(config, 3, at::kCPU, at::kBFloat16);
  CHECK(thp_eligible(random.weights().layers[0].gate_proj.data_ptr()) == 1);
  CHECK(thp_eligible(random.weights().lm_head.data_ptr()) == 1);

  KVBENCH_REQUIRE_SHARED("models/stories260K");
  const Model loaded = Model::load(shared_dir() / "models/stories260K", at::kCPU, at::kFloat);
  CHECK(thp_eligible(loaded.weights().layers[1].q_proj.data_ptr()) == 1);
  CHECK(thp_eligible(loaded.weights().embed_tokens.data_ptr()) == 1);
  // An ordinary allocation is not, under "madvise": the check can tell the two apart.
  if (mode == "madvise") CHECK(thp_eligible(at::empty({int64_t{8} << 20}).data_ptr()) == 0);
}
