#include "vulkan_fixture.h"


namespace p64::test {

void VulkanTest::SetUp() {
  int rank = 0;
  std::string why;
  if (!vulkan::probe_rank(&rank, &why)) GTEST_SKIP() << "no Vulkan device: " << why;
}

void VulkanTest::TearDown() {
  for (const auto& m : messages()) ADD_FAILURE() << "Vulkan validation: " << m;
}

std::unique_ptr<Backend> VulkanTest::make_vulkan() {
  vulkan::InstanceSettings s;
  s.validation = true;
  s.on_message = [this](const std::string& m) {
    std::lock_guard<std::mutex> lock(mu_);
    messages_.push_back(m);
  };
  return vulkan::make_backend(s);
}

std::vector<std::string> VulkanTest::messages() const {
  std::lock_guard<std::mutex> lock(mu_);
  return messages_;
}

}  // namespace p64::test
