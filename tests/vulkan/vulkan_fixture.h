#pragma once
// Shared by the Vulkan tests: backends made with the Khronos validation layer on and a
// messenger that records every warning/error (the test then fails), skipping only when no
// Vulkan device exists at all; and small models built in memory.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/vulkan/vulkan_backend.h"
#include "engine/model/model.h"
#include "engine/runtime/backend.h"

namespace p64::test {

class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // A Vulkan backend with validation; its messages fail the test in TearDown.
  std::unique_ptr<Backend> make_vulkan();
  std::vector<std::string> messages() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> messages_;
};

// Per-role weight types of a tiny model (F32 norms always).
struct TinyTypes {
  DType embd = DType::Q8_0, q = DType::Q4_K, k = DType::Q5_0, v = DType::Q6_K, o = DType::Q8_0,
        gate_up = DType::Q4_K, down = DType::Q6_K, output = DType::Q6_K;
};
// A random 2-layer model (n_embd 256, n_ff 512, 4 heads / 2 KV heads of 64, vocab 384),
// weights quantized by the reference quantizers; SoA dtypes are packed with soa_pack.
// `dequantized_twin`: the same quantized values stored back as F32 (dequantize_row), so a
// float reference sees exactly the weights the quantized kernels read.
std::shared_ptr<const Model> make_tiny_model(const TinyTypes& types, uint64_t seed, bool tied = false,
                                             bool dequantized_twin = false);
TinyTypes all_types(DType t);
TinyTypes soa_mix();  // the mixed model with Q4_K/Q6_K/Q8_0 in their SoA forms

// stories260K.bin + tok512.bin from ../shared/models; nullptr when the files are absent.
std::shared_ptr<const Model> load_stories260k();

}  // namespace p64::test
