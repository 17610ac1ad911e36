// The BPE trainer's tokenizer.json must load in kvbench's Tokenizer and round-trip text; merges must
// follow pair frequency (hand-derived on a tiny corpus), digits stay single, training is deterministic.
#include <catch2/catch.hpp>

#include "tokenizer/bpe_trainer.h"
#include "test_support.h"
#include "tokenizer/tokenizer.h"

using namespace kvbench;

namespace {

struct TempDir {
  std::filesystem::path path =
      kvbench::testing::scratch_path("bpe");
  ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_CASE("trained byte-level BPE round-trips through Tokenizer", "[tokenizer][bpe-trainer]") {
  const std::vector<std::string> corpus = {"Lily and Tom went to the park.", "Tom and Lily found a kite.",
                                           "The code for locker 17 is 4821.", "Then Lily smiled at Tom."};
  const TrainedBpe bpe = train_byte_level_bpe(corpus);
  TempDir dir;
  save_tokenizer(dir.path, bpe);
  const Tokenizer tokenizer = Tokenizer::load(dir.path);
  CHECK(tokenizer.vocab_size() == bpe.vocab_size);
  CHECK(tokenizer.bos_id() == std::optional<std::int64_t>(0));
  CHECK(tokenizer.eos_ids() == std::vector<std::int64_t>{1});
  for (const std::string text : {"Lily and Tom", "Zoë sees 3 ✓ birds\n\n  twice!", "locker 99 is 1234."}) {
    const auto ids = tokenizer.encode(text, true);
    CHECK(ids.front() == 0);  // <s> from the post-processor
    CHECK(tokenizer.decode(ids) == text);
  }
  // " Lily" and " Tom" occur twice each in the corpus (min_pair_count = 2): whole-word tokens.
  CHECK(tokenizer.encode(" Lily", false).size() == 1);
  CHECK(tokenizer.encode(" Tom", false).size() == 1);
  // Numbers are single digits, whatever the corpus ("4821" occurs twice here, yet stays 4 tokens).
  const TrainedBpe numbers = train_byte_level_bpe({"is 4821 and 4821"});
  save_tokenizer(dir.path, numbers);
  const Tokenizer digit_tokenizer = Tokenizer::load(dir.path);
  std::string digits;
  for (const auto id : digit_tokenizer.encode("4821", false)) digits += digit_tokenizer.decode({id}) + "|";
  CHECK(digits == "4|8|2|1|");
}

TEST_CASE("BPE merges: the most frequent pair first, ties to the smallest pair", "[tokenizer][bpe-trainer]") {
  // Pre-tokenized words (Ġ = space): "ab", "Ġab" ×2, "Ġabc", "Ġcd" ×2.
  // Pair counts: a·b 4, Ġ·a 3, Ġ·c 2, c·d 2, b·c 1 → merge "a b";
  // then Ġ·ab 3 → "Ġ ab"; then c·d 2 and Ġ·c 2 tie, "c" (0x63) sorts before "Ġ" (0xC4 0xA0) → "c d";
  // then Ġ·cd 2 → "Ġ cd"; what is left (Ġab·c) occurs once, below min_pair_count = 2.
  const TrainedBpe bpe = train_byte_level_bpe({"ab ab ab abc cd cd"}, {10, 2});
  CHECK(bpe.tokenizer.at("model").at("merges") == json({"a b", "Ġ ab", "c d", "Ġ cd"}));
  CHECK(bpe.vocab_size == 2 + 256 + 4);
  CHECK(train_byte_level_bpe({"ab ab ab abc cd cd"}, {10, 2}).tokenizer == bpe.tokenizer);
}
