#include "backends/vulkan/vulkan_backend_impl.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "engine/common/error.h"

namespace p64::vulkan {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

}  // namespace

VulkanBackend::~VulkanBackend() {
  try {
    release_model();
    if (ctx_) ctx_->destroy(dummy_);
    pipes_.reset();
    ctx_.reset();
  } catch (...) {
  }
}

std::vector<SwitchInfo> VulkanBackend::switches() const { return switch_table(); }

// Named, not taken from the table: a new architecture's steps must be added here before it runs
// (docs/vulkan-backend.md lists the steps each one adds to the Llama block).
bool VulkanBackend::runs_architecture(std::string_view arch) const {
  return arch == "llama" || arch == "qwen2" || arch == "qwen3" || arch == "phi3" || arch == "gemma2" || arch == "gemma3";
}

void VulkanBackend::ensure_context(const std::string& device_spec) {
  if (ctx_ && device_spec == device_spec_) return;
  release_model();
  if (ctx_) ctx_->destroy(dummy_);
  pipes_.reset();
  ctx_.reset();
  vk::InstanceOptions io;
  io.validation = settings_.validation;
  io.on_message = settings_.on_message;
  ctx_ = std::make_unique<vk::Context>(io, device_spec);
  pipes_ = std::make_unique<vk::Pipelines>(*ctx_);
  device_spec_ = device_spec;
  passport_.reset();
  dummy_ = ctx_->create_buffer(256, false, "placeholder binding");
}

void VulkanBackend::release_model() {
  if (!ctx_) return;
  vk::api().vkDeviceWaitIdle(ctx_->device);
  decode_.reset();
  prefill_.reset();
  ops_.reset();
  kernels_.reset();
  timer_.detach();
  ws_.reset();
  resident_.reset();
  model_.reset();
  max_ctx_ = 0;
}

void VulkanBackend::load(std::shared_ptr<const Model> model, const BackendOptions& options) {
  const auto t_start = Clock::now();
  report_ = LoadReport{};
  check_backend_runs(*this, *model);  // before any device work: names the file and its architecture
  // Switches first: a typo fails before any device work.
  const SwitchValues sw("vulkan", switch_table(), options.switches);
  auto t0 = Clock::now();
  std::string spec = options.device;
  if (spec.empty())
    if (const char* e = std::getenv("P64_VULKAN_DEVICE"); e) spec = e;
  ensure_context(spec);
  release_model();
  report_.context_ms = ms_since(t0);
  report_.device = ctx_->props.deviceName;

  model_ = std::move(model);
  hp_ = model_->hparams();
  tune_ = resolve_switches(sw, *ctx_);
  max_ctx_ = context_positions(hp_, options.max_context, model_->source());
  fit_to_model(tune_, *ctx_, hp_, max_ctx_, model_->source());

  t0 = Clock::now();
  resident_ = std::make_unique<ResidentModel>(*ctx_);
  resident_->upload(*model_, max_ctx_);
  report_.upload_ms = ms_since(t0);
  ws_ = std::make_unique<Workspace>(*ctx_);
  ws_->allocate(hp_, tune_);
  host_logits_.assign(hp_.n_vocab, 0.0f);
  timer_.attach(*ctx_);

  t0 = Clock::now();
  const double pipes_before = pipes_->create_ms();
  build_steps();
  report_.pipelines_ms = pipes_->create_ms() - pipes_before;
  report_.record_ms = ms_since(t0) - report_.pipelines_ms;
  report_.pipelines = pipes_->created();
  report_.pipeline_cache_warm = ctx_->pipeline_cache_was_warm();
  report_.pipeline_cache_path = tune_.pipeline_cache ? ctx_->pipeline_cache_path() : "";
  if (tune_.pipeline_cache) ctx_->save_pipeline_cache();
  logits_fresh_ = false;
  report_.total_ms = ms_since(t_start);
}

void VulkanBackend::build_steps() {
  kernels_ = std::make_unique<Kernels>(*ctx_, *pipes_, tune_, hp_, *resident_);
  ops_ = std::make_unique<StepOps>(*kernels_, *resident_, *ws_, hp_);
  decode_ = std::make_unique<DecodeStep>(*ctx_, *pipes_, dummy_.buf, *ops_, *resident_, *ws_, hp_, tune_);
  decode_->record_untimed();
  prefill_ = std::make_unique<PrefillRunner>(*ctx_, *pipes_, dummy_.buf, *ops_, *resident_, *ws_, hp_, tune_);
  prefill_->create_pipelines();
}

void VulkanBackend::check_position(int32_t pos, size_t n) const {
  if (!model_ || !decode_) throw Error("vulkan backend: load() a model first");
  if (pos < 0 || static_cast<uint64_t>(pos) + n > max_ctx_)
    throw Error("vulkan backend: positions [" + std::to_string(pos) + ", " + std::to_string(pos + n) +
                ") exceed the KV cache of " + std::to_string(max_ctx_) + " positions");
}

void VulkanBackend::check_token(int32_t token) const {
  if (token < 0 || static_cast<uint32_t>(token) >= hp_.n_vocab)
    throw Error("vulkan backend: token id " + std::to_string(token) + " outside the vocabulary of " +
                std::to_string(hp_.n_vocab));
}

int32_t VulkanBackend::run_decode(int32_t token, int32_t pos, bool want_logits, bool prefill_step) {
  check_position(pos, 1);
  check_token(token);
  const int32_t id = decode_->run(token, pos, want_logits, timer_, prefill_step);
  if (want_logits) read_logits();
  logits_fresh_ = want_logits;
  return id;
}

void VulkanBackend::read_logits() {
  std::memcpy(host_logits_.data(), ws_->readback.mapped, 4ull * hp_.n_vocab);
  // gemma2: cap * tanh(logit / cap), which keeps the argmax
  if (hp_.final_softcap > 0.0f)
    for (float& x : host_logits_) x = hp_.final_softcap * std::tanh(x / hp_.final_softcap);
}

int32_t VulkanBackend::decode_argmax(int32_t token, int32_t pos) { return run_decode(token, pos, false); }

std::span<const float> VulkanBackend::decode_logits(int32_t token, int32_t pos) {
  run_decode(token, pos, true);
  return host_logits_;
}

std::span<const float> VulkanBackend::logits() {
  if (!model_ || !ws_) throw Error("vulkan backend: load() a model first");
  if (!logits_fresh_) {
    VkCommandBuffer cmd = ctx_->allocate_command_buffer();
    vk::Recorder r(*ctx_, *pipes_, dummy_.buf, 1);
    r.begin(cmd, VK_NULL_HANDLE);
    r.copy(ws_->logits.buf, ws_->readback.buf, 4ull * hp_.n_vocab);
    r.barrier_to_host();
    r.end();
    try {
      ctx_->submit_and_wait(cmd);
    } catch (...) {
      ctx_->free_command_buffer(cmd);
      throw;
    }
    ctx_->free_command_buffer(cmd);
    read_logits();
    logits_fresh_ = true;
  }
  return host_logits_;
}

int32_t VulkanBackend::prefill(std::span<const int32_t> tokens, int32_t pos) {
  if (tokens.empty()) throw Error("vulkan backend: prefill of zero tokens");
  check_position(pos, tokens.size());
  for (int32_t t : tokens) check_token(t);
  if (!tune_.stepwise && tokens.size() >= tune_.batch_min) {
    const int32_t id = prefill_->run(tokens, pos, timer_);
    logits_fresh_ = false;
    return id;
  }
  // prefill=stepwise (or a short prompt): token by token through the pre-recorded decode step.
  int32_t id = 0;
  for (size_t i = 0; i < tokens.size(); ++i) id = run_decode(tokens[i], pos + static_cast<int32_t>(i), false, true);
  return id;
}

LoadReport load_report(const Backend& b) {
  const auto* v = dynamic_cast<const VulkanBackend*>(&b);
  if (!v) throw Error("load_report: backend '" + b.name() + "' is not the Vulkan backend");
  return v->report();
}

std::unique_ptr<Backend> make_backend(InstanceSettings settings) {
  if (!settings.validation)
    if (const char* e = std::getenv("P64_VULKAN_VALIDATION"); e && std::string(e) == "1") settings.validation = true;
  return std::make_unique<VulkanBackend>(std::move(settings));
}

}  // namespace p64::vulkan
