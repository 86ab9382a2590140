#pragma once
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace p64 {

// Defaults that keep small instruct models (SmolLM2, TinyLlama, Llama 3.2 1B) coherent:
// mild temperature, a top-k/top-p/min-p cut of the tail, and a light repetition penalty.
struct SamplerSettings {
  float temperature = 0.7f;     // <= 0: greedy (argmax of the raw logits, nothing else applied)
  int top_k = 40;               // <= 0: no top-k cut
  float top_p = 0.9f;           // >= 1: no nucleus cut
  float min_p = 0.05f;          // <= 0: no min-p cut (relative to the most likely token)
  float repeat_penalty = 1.1f;  // 1: none; divides positive / multiplies negative logits
  int repeat_last_n = 64;       // how many of the recent tokens the penalty looks at
  uint64_t seed = 0;            // same seed, same logits, same recent tokens -> same token
};

// The chain: repetition penalty -> top-k -> temperature -> softmax -> top-p -> min-p -> draw.
// Deterministic for a seed on every platform (its own uniform draw from mt19937_64's bits).
class Sampler {
 public:
  explicit Sampler(SamplerSettings settings);
  int32_t sample(std::span<const float> logits, std::span<const int32_t> recent_tokens);
  bool greedy() const { return settings_.temperature <= 0.0f; }
  const SamplerSettings& settings() const { return settings_; }
  void reseed(uint64_t seed);

 private:
  struct Candidate {
    int32_t id;
    float logit;
    float p;
  };
  SamplerSettings settings_;
  std::mt19937_64 rng_;
  std::vector<Candidate> candidates_;
};

// Index of the largest value (the first one on ties); -1 for an empty span.
int32_t argmax(std::span<const float> logits);

}  // namespace p64
