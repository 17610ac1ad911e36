// GGUF models: what kvbench accepts (a .gguf file, or a directory holding one) and, for bad files, one clear
// kvbench::Error naming the file and the tensor or metadata key. The files are written here byte by byte
// (GGUF v3: header, metadata, tensor directory, 32-byte-aligned data), so no Python is needed.
#include "torch_catch.h"

#include <algorithm>
#include <fstream>
#include <map>

#include "common/error.h"
#include "common/gguf_file.h"
#include "model/model.h"
#include "test_support.h"

using namespace kvbench;

namespace {

namespace fs = std::filesystem;

// A GGUF v3 file under construction: metadata of strings, u32s and f32s (setting a key again replaces it);
// tensors in the order added (setting one again moves it last).
class GgufBuilder {
 public:
  void string(const std::string& key, const std::string& value) { metadata_[key] = Bytes().raw(8u).text(value).data; }
  void u32(const std::string& key, std::uint32_t value) { metadata_[key] = Bytes().raw(4u).raw(value).data; }
  void f32(const std::string& key, float value) { metadata_[key] = Bytes().raw(6u).raw(value).data; }
  void erase_key(const std::string& key) { metadata_.erase(key); }
  // `dims` in ggml order (dims[0] contiguous); `data` the stored bytes.
  void tensor(const std::string& name, std::vector<std::uint64_t> dims, GgmlType type, std::string data) {
    erase_tensor(name);
    tensors_.push_back({name, std::move(dims), type, std::move(data)});
  }
  // F32 `values`, zeros when none are given.
  void f32_tensor(const std::string& name, std::vector<std::uint64_t> dims, std::vector<float> values = {}) {
    std::size_t n = 1;
    for (const auto d : dims) n *= d;
    values.resize(n, 0.0f);
    tensor(name, std::move(dims), GgmlType::F32, std::string(reinterpret_cast<const char*>(values.data()), 4 * n));
  }
  void erase_tensor(const std::string& name) {
    tensors_.erase(std::remove_if(tensors_.begin(), tensors_.end(), [&](const Tensor& t) { return t.name == name; }),
                   tensors_.end());
  }

  std::string bytes() const {
    Bytes out;
    out.raw(std::uint32_t{0x46554747}).raw(std::uint32_t{3});
    out.raw(std::uint64_t{tensors_.size()}).raw(std::uint64_t{metadata_.size()});
    for (const auto& [key, value] : metadata_) out.text(key).data += value;
    std::string data;
    for (const auto& t : tensors_) {
      out.text(t.name).raw(static_cast<std::uint32_t>(t.dims.size()));
      for (const auto d : t.dims) out.raw(d);
      out.raw(static_cast<std::uint32_t>(t.type)).raw(std::uint64_t{data.size()});
      data += t.data;
      data.resize(aligned(data.size()), '\0');
    }
    out.data.resize(aligned(out.data.size()), '\0');
    return out.data + data;
  }

 private:
  struct Bytes {
    std::string data;
    template <class T>
    Bytes& raw(T value) {
      data.append(reinterpret_cast<const char*>(&value), sizeof(T));
      return *this;
    }
    Bytes& text(const std::string& s) {
      raw(std::uint64_t{s.size()});
      data += s;
      return *this;
    }
  };
  struct Tensor {
    std::string name;
    std::vector<std::uint64_t> dims;
    GgmlType type;
    std::string data;
  };
  static std::size_t aligned(std::size_t n) { return (n + 31) / 32 * 32; }

  std::map<std::string, std::string> metadata_;  // key → type and value, encoded
  std::vector<Tensor> tensors_;
};

constexpr std::uint64_t kHidden = 256, kInter = 256, kVocab = 8, kHeadDim = 64;

// A 1-layer Llama, 4 query / 2 KV heads of 64, tied, all F32 zeros.
GgufBuilder tiny_llama() {
  GgufBuilder g;
  g.string("general.architecture", "llama");
  g.u32("llama.block_count", 1);
  g.u32("llama.embedding_length", kHidden);
  g.u32("llama.feed_forward_length", kInter);
  g.u32("llama.attention.head_count", 4);
  g.u32("llama.attention.head_count_kv", 2);
  g.u32("llama.vocab_size", kVocab);
  g.f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  g.f32("llama.rope.freq_base", 100000.0f);
  g.f32_tensor("token_embd.weight", {kHidden, kVocab});
  g.f32_tensor("output_norm.weight", {kHidden});
  g.f32_tensor("blk.0.attn_norm.weight", {kHidden});
  g.f32_tensor("blk.0.ffn_norm.weight", {kHidden});
  g.f32_tensor("blk.0.attn_q.weight", {kHidden, 4 * kHeadDim});
  g.f32_tensor("blk.0.attn_k.weight", {kHidden, 2 * kHeadDim});
  g.f32_tensor("blk.0.attn_v.weight", {kHidden, 2 * kHeadDim});
  g.f32_tensor("blk.0.attn_output.weight", {4 * kHeadDim, kHidden});
  g.f32_tensor("blk.0.ffn_gate.weight", {kHidden, kInter});
  g.f32_tensor("blk.0.ffn_up.weight", {kHidden, kInter});
  g.f32_tensor("blk.0.ffn_down.weight", {kInter, kHidden});
  return g;
}

struct TempGguf {
  fs::path dir = kvbench::testing::scratch_path("bad_gguf");
  fs::path file = dir / "tiny.gguf";
  explicit TempGguf(const std::string& bytes) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(file, std::ios::binary) << bytes;
  }
  ~TempGguf() { fs::remove_all(dir); }
};

void require_error(const std::string& bytes, const std::vector<std::string>& fragments) {
  const TempGguf m(bytes);
  try {
    Model::load(m.file);
    FAIL("expected kvbench::Error");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains(m.file.string()));
    for (const auto& f : fragments) CHECK_THAT(e.what(), Catch::Contains(f));
  }
}

}  // namespace

TEST_CASE("a hand-written GGUF loads, as a file and as a directory holding it", "[model][gguf]") {
  const TempGguf m(tiny_llama().bytes());
  for (const fs::path& path : {m.file, m.dir}) {
    const Model model = Model::load(path);
    const ModelConfig& c = model.config();
    CHECK(c.family == ModelFamily::Llama);
    CHECK(c.num_layers == 1);
    CHECK(c.hidden_size == 256);
    CHECK(c.num_kv_heads == 2);
    CHECK(c.head_dim == 64);
    CHECK(c.vocab_size == 8);
    CHECK(c.rope_theta == 100000.0);
    CHECK(c.rms_norm_eps == static_cast<double>(1e-5f));
    CHECK(c.tie_word_embeddings);
    CHECK(model.weights().lm_head.is_same(model.weights().embed_tokens));
    CHECK(model.weights().layers[0].k_proj.sizes() == at::IntArrayRef({128, 256}));
  }
  CHECK(load_model_config(m.dir).hidden_size == 256);
}

TEST_CASE("GGUF: Llama's q/k rows come back in HF's order (llama.cpp's converter interleaves RoPE halves)",
          "[model][gguf]") {
  // convert_hf_to_gguf.py's LlamaModel.permute stores, within each head of 64 rows, HF's row i at 2i and HF's
  // row 32 + i at 2i + 1. Row r of the stored q and k is filled with the value r.
  GgufBuilder g = tiny_llama();
  const auto rows_numbered = [](std::uint64_t rows) {
    std::vector<float> values(rows * kHidden);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i / kHidden);
    return values;
  };
  g.f32_tensor("blk.0.attn_q.weight", {kHidden, 4 * kHeadDim}, rows_numbered(4 * kHeadDim));
  g.f32_tensor("blk.0.attn_k.weight", {kHidden, 2 * kHeadDim}, rows_numbered(2 * kHeadDim));
  g.f32_tensor("blk.0.attn_v.weight", {kHidden, 2 * kHeadDim}, rows_numbered(2 * kHeadDim));
  const TempGguf m(g.bytes());
  const Model model = Model::load(m.file);
  const LayerWeights& layer = model.weights().layers[0];
  const auto stored_row = [](std::int64_t hf_row) {
    const std::int64_t head = hf_row / kHeadDim, within = hf_row % kHeadDim, half = kHeadDim / 2;
    return head * kHeadDim + 2 * (within % half) + within / half;
  };
  for (const auto& [name, weight] : {std::pair{"q", layer.q_proj}, std::pair{"k", layer.k_proj}})
    for (std::int64_t row = 0; row < weight.size(0); ++row) {
      INFO(name << " row " << row);
      REQUIRE(weight[row].eq(static_cast<float>(stored_row(row))).all().item<bool>());
    }
  for (std::int64_t row = 0; row < layer.v_proj.size(0); ++row)  // v is stored as HF stores it
    REQUIRE(layer.v_proj[row][0].item<float>() == static_cast<float>(row));
}

TEST_CASE("GGUF: an unknown architecture is named", "[model][gguf][errors]") {
  GgufBuilder g = tiny_llama();
  g.string("general.architecture", "mamba");
  require_error(g.bytes(), {"general.architecture", "mamba", "not supported"});
}

TEST_CASE("GGUF: an unsupported quantization type names the tensor", "[model][gguf][errors]") {
  GgufBuilder g = tiny_llama();
  g.tensor("blk.0.attn_q.weight", {kHidden, 4 * kHeadDim}, GgmlType::Q2_K, std::string(4 * kHeadDim * 84, '\0'));
  require_error(g.bytes(), {"tensor \"blk.0.attn_q.weight\"", "quantization type Q2_K is not supported",
                            "Q4_K"});
}

TEST_CASE("GGUF: a truncated file is named", "[model][gguf][errors]") {
  const std::string full = tiny_llama().bytes();
  require_error(full.substr(0, full.size() - 100), {"blk.0.ffn_down.weight", "outside the file"});
  require_error(full.substr(0, 40), {"truncated"});
}

TEST_CASE("GGUF: a missing tensor is named", "[model][gguf][errors]") {
  GgufBuilder g = tiny_llama();
  g.erase_tensor("blk.0.ffn_down.weight");
  require_error(g.bytes(), {"missing tensor \"blk.0.ffn_down.weight\""});
}

TEST_CASE("GGUF: a missing metadata key is named", "[model][gguf][errors]") {
  GgufBuilder g = tiny_llama();
  g.erase_key("llama.embedding_length");
  require_error(g.bytes(), {"metadata \"llama.embedding_length\"", "missing"});
}

TEST_CASE("GGUF: a shape the metadata contradicts names the tensor and both shapes", "[model][gguf][errors]") {
  GgufBuilder g = tiny_llama();
  g.f32_tensor("blk.0.attn_k.weight", {kHidden, 3 * kHeadDim});
  require_error(g.bytes(), {"tensor \"blk.0.attn_k.weight\"", "[192, 256]", "[128, 256]", "GGUF metadata"});
}

TEST_CASE("GGUF: RoPE scaling is refused", "[model][gguf][errors]") {
  GgufBuilder g = tiny_llama();
  g.string("llama.rope.scaling.type", "linear");
  require_error(g.bytes(), {"metadata \"llama.rope.scaling.type\"", "linear"});
  g = tiny_llama();
  g.f32_tensor("rope_freqs.weight", {kHeadDim / 2});
  require_error(g.bytes(), {"rope_freqs.weight", "not supported"});
}
