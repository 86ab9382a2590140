#pragma once
// A deterministic toy Backend for the lab's tests, so they do not wait for (or depend on)
// the real CPU backend: a small F32 Llama-shaped forward pass without RoPE, timed per op
// with steady_clock like the CPU backend. Switches:
//   opt.delay_us=N     busy-waits N microseconds per decode step (a "slower" variant)
//   opt.logit_noise=X  adds a fixed pseudo-random offset of amplitude X to every logit
//   opt.fast=1         a "faster" variant: skips the delay given by opt.delay_us
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/lab/ab.h"
#include "engine/model/model.h"
#include "engine/runtime/backend.h"

namespace p64::test {

struct ToyShape {
  uint32_t n_embd = 32;
  uint32_t n_layer = 2;
  uint32_t n_head = 4;
  uint32_t n_head_kv = 2;
  uint32_t n_ff = 64;
  uint32_t n_vocab = 96;
  uint32_t n_ctx = 256;
  uint32_t seed = 1;
  uint32_t sliding_window = 0;          // HParams' fields of the same names
  uint32_t sliding_window_pattern = 0;
};

// Random F32 weights (fixed seed) in memory, named as GGUF names them.
std::shared_ptr<const Model> make_toy_model(const ToyShape& shape = {});

class ToyBackend : public Backend {
 public:
  // `device` is the device its passport names: its backend is `name` unless given (a toy that
  // passes for a CUDA device lets the lab's GPU paths run without a GPU).
  explicit ToyBackend(std::string name = "toy", DeviceFacts device = {})
      : name_(std::move(name)), device_(std::move(device)) {}
  std::string name() const override { return name_; }
  Passport passport() override;
  std::vector<SwitchInfo> switches() const override;
  void load(std::shared_ptr<const Model> model, const BackendOptions& options) override;
  uint32_t max_context() const override { return ctx_; }
  int32_t prefill(std::span<const int32_t> tokens, int32_t pos) override;
  int32_t decode_argmax(int32_t token, int32_t pos) override;
  std::span<const float> decode_logits(int32_t token, int32_t pos) override;
  std::span<const float> logits() override { return logits_; }
  void set_timeline(TimelineSink* sink) override { sink_ = sink; }
  uint64_t device_memory_peak() const override;

  int steps_run() const { return steps_; }

 private:
  void forward(int32_t token, int32_t pos, bool prefill, bool want_logits);
  void span(const char* name, OpGroup g, int layer, bool prefill, int32_t step, double t0_us, double t1_us);
  double now_us() const;

  std::string name_;
  DeviceFacts device_;
  std::shared_ptr<const Model> model_;
  TimelineSink* sink_ = nullptr;
  uint32_t ctx_ = 0;
  int delay_us_ = 0;
  float noise_ = 0;
  std::vector<float> k_cache_, v_cache_;  // [layer][pos][kv_dim]
  std::vector<float> x_, xn_, q_, k_, v_, att_, o_, gate_, up_, logits_;
  int steps_ = 0;
  double epoch_us_ = -1;
};

// Registers a ToyBackend under `name`, ranked below everything so "auto" never picks it
// (registering a name again replaces the earlier one).
void register_toy_backend(const std::string& name, const DeviceFacts& device = {});

// A/B parameters small enough for toy models: 2 runs a side, no warm-up, 4 prompt and 4 decode
// tokens, `quality_tokens` teacher-forced positions.
AbParams quick_ab_params(int quality_tokens);

}  // namespace p64::test
