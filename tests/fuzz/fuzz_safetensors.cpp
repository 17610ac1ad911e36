// A safetensors file (any bytes): header length, JSON table, dtypes, shapes and offsets.
#include "fuzz_support.h"
#include "model/safetensors_header.h"

using namespace kvbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::expect_clean([&] {
    const SafetensorsHeader header = parse_safetensors_header(data, size, "fuzz.safetensors");
    volatile uint8_t sink = 0;
    for (const auto& [name, info] : header.tensors)  // every admitted tensor lies inside the file
      if (info.end > info.begin) sink = sink + data[header.data_start + info.end - 1];
  });
  return 0;
}
