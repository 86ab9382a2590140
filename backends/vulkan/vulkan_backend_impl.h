#pragma once
// The Vulkan backend behind the Backend seam (shared by vulkan_backend.cpp and
// vulkan_passport.cpp). It owns the device context and the pipelines; load() builds the parts
// that each do one job: the resident model, the working buffers, the decode step, the prefill
// runner and the op timer.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/vulkan/vk_decode_step.h"
#include "backends/vulkan/vk_kernels.h"
#include "backends/vulkan/vk_op_timer.h"
#include "backends/vulkan/vk_prefill_runner.h"
#include "backends/vulkan/vk_resident_model.h"
#include "backends/vulkan/vk_step_ops.h"
#include "backends/vulkan/vk_workspace.h"
#include "backends/vulkan/vulkan_backend.h"
#include "backends/vulkan/vulkan_tuning.h"

namespace p64::vulkan {

class VulkanBackend final : public Backend {
 public:
  explicit VulkanBackend(InstanceSettings s) : settings_(std::move(s)) {}
  ~VulkanBackend() override;

  std::string name() const override { return "vulkan"; }
  Passport passport() override;
  std::vector<SwitchInfo> switches() const override;
  bool runs_architecture(std::string_view arch) const override;
  bool runs_sliding_window() const override { return true; }
  void load(std::shared_ptr<const Model> model, const BackendOptions& options) override;
  uint32_t max_context() const override { return max_ctx_; }
  int32_t prefill(std::span<const int32_t> tokens, int32_t pos) override;
  int32_t decode_argmax(int32_t token, int32_t pos) override;
  std::span<const float> decode_logits(int32_t token, int32_t pos) override;
  std::span<const float> logits() override;
  void set_timeline(TimelineSink* sink) override { timer_.set_sink(sink); }
  uint64_t device_memory_peak() const override { return ctx_ ? ctx_->peak_bytes() : 0; }
  uint64_t kv_bytes_per_position() const override { return model_ ? 2ull * hp_.n_layer * hp_.kv_dim() * 4 : 0; }  // f32 K and V

  const LoadReport& report() const { return report_; }

 private:
  void ensure_context(const std::string& device_spec);
  void release_model();
  // The decode step and the prefill runner over the uploaded model, their pipelines created
  // and the decode programs recorded.
  void build_steps();
  int32_t run_decode(int32_t token, int32_t pos, bool want_logits, bool prefill_step = false);
  void read_logits();  // ws.readback -> host_logits_, with gemma2's final soft-cap
  void check_position(int32_t pos, size_t n) const;
  void check_token(int32_t token) const;

  InstanceSettings settings_;
  std::unique_ptr<vk::Context> ctx_;
  std::unique_ptr<vk::Pipelines> pipes_;
  vk::Buffer dummy_;
  std::string device_spec_;
  std::optional<Passport> passport_;

  std::shared_ptr<const Model> model_;
  HParams hp_;
  Tuning tune_;
  uint32_t max_ctx_ = 0;
  std::unique_ptr<ResidentModel> resident_;
  std::unique_ptr<Workspace> ws_;
  std::unique_ptr<Kernels> kernels_;
  std::unique_ptr<StepOps> ops_;
  std::unique_ptr<DecodeStep> decode_;
  std::unique_ptr<PrefillRunner> prefill_;
  OpTimer timer_;
  std::vector<float> host_logits_;
  bool logits_fresh_ = false;  // host_logits_ holds the latest step's logits
  LoadReport report_;
};

// Read and copy bandwidth of the device (medians of timestamp-timed repeats).
MeasuredBandwidth measure_bandwidth(vk::Context& ctx, vk::Pipelines& pipes);
DeviceFacts device_facts(const vk::Context& ctx);

}  // namespace p64::vulkan
