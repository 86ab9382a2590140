#pragma once
// Shared by the Vulkan tests: backends made with the Khronos validation layer on and a
// messenger that records every warning/error (the test then fails), skipping only when no
// Vulkan device exists at all.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/vulkan/vulkan_backend.h"
#include "engine/model/model.h"
#include "engine/runtime/backend.h"
#include "support/test_models.h"

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

}  // namespace p64::test
