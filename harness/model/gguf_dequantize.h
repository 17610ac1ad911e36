// GGUF tensors (float or quantized blocks) as float32, bit for bit what ggml's reference dequantize_row_*
// (ggml-quants.c) and the gguf Python package's gguf.quants.dequantize (which transformers' GGUF loader
// uses) produce: the same float32 operations in the same order.
#pragma once
#include <ATen/ATen.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/gguf_file.h"

namespace kvbench {

// Whether kvbench reads this type: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K.
bool gguf_type_supported(GgmlType type);
std::string gguf_supported_types();  // that list, for messages

// The tensor's shape as PyTorch orders it: ggml's dims reversed ([out, in] for a projection).
std::vector<std::int64_t> torch_shape(const GgufTensor& tensor);

// The tensor's values, float32, of torch_shape, owning its memory.
// Throws `FILE: tensor "NAME": quantization type Q2_K is not supported (kvbench reads …)`.
at::Tensor dequantize(const GgufTensor& tensor, const std::filesystem::path& file);

}  // namespace kvbench
