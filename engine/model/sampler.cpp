#include "engine/model/sampler.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "engine/common/error.h"

namespace p64 {

int32_t argmax(std::span<const float> logits) {
  if (logits.empty()) return -1;
  size_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = i;
  return static_cast<int32_t>(best);
}

Sampler::Sampler(SamplerSettings settings) : settings_(settings), rng_(settings.seed) {}

void Sampler::reseed(uint64_t seed) {
  settings_.seed = seed;
  rng_.seed(seed);
}

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> recent_tokens) {
  if (logits.empty()) throw Error("sampler: empty logits");
  if (greedy()) return argmax(logits);

  candidates_.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) candidates_[i] = {static_cast<int32_t>(i), logits[i], 0.0f};

  // Repetition penalty over the distinct recent tokens (CTRL paper / llama.cpp convention:
  // shrink a positive logit, push a negative one further down).
  if (settings_.repeat_penalty != 1.0f && settings_.repeat_last_n != 0 && !recent_tokens.empty()) {
    size_t n = settings_.repeat_last_n < 0 ? recent_tokens.size()
                                           : std::min(recent_tokens.size(), static_cast<size_t>(settings_.repeat_last_n));
    std::unordered_set<int32_t> seen;
    for (size_t i = recent_tokens.size() - n; i < recent_tokens.size(); ++i) {
      int32_t t = recent_tokens[i];
      if (t < 0 || static_cast<size_t>(t) >= candidates_.size() || !seen.insert(t).second) continue;
      float& l = candidates_[static_cast<size_t>(t)].logit;
      l = l > 0.0f ? l / settings_.repeat_penalty : l * settings_.repeat_penalty;
    }
  }

  auto by_logit = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  size_t keep = candidates_.size();
  if (settings_.top_k > 0 && static_cast<size_t>(settings_.top_k) < keep) {
    keep = static_cast<size_t>(settings_.top_k);
    std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(keep), candidates_.end(), by_logit);
    candidates_.resize(keep);
  } else {
    std::sort(candidates_.begin(), candidates_.end(), by_logit);
  }

  // Softmax at the temperature, shifted by the top logit so exp never overflows.
  const float inv_t = 1.0f / settings_.temperature;
  const float top = candidates_.front().logit;
  double sum = 0.0;
  for (auto& c : candidates_) {
    c.p = std::exp((c.logit - top) * inv_t);
    sum += c.p;
  }
  for (auto& c : candidates_) c.p = static_cast<float>(c.p / sum);

  // Nucleus: the smallest prefix whose mass reaches top_p (always at least one token).
  if (settings_.top_p < 1.0f) {
    double cum = 0.0;
    size_t n = 0;
    while (n < candidates_.size()) {
      cum += candidates_[n].p;
      ++n;
      if (cum >= settings_.top_p) break;
    }
    candidates_.resize(std::max<size_t>(n, 1));
  }
  // min-p: drop what is less likely than min_p times the most likely token.
  if (settings_.min_p > 0.0f) {
    const float floor_p = settings_.min_p * candidates_.front().p;
    size_t n = 1;
    while (n < candidates_.size() && candidates_[n].p >= floor_p) ++n;
    candidates_.resize(n);
  }

  double mass = 0.0;
  for (const auto& c : candidates_) mass += c.p;
  // 53 random bits -> a double in [0, 1): the same on every standard library.
  const double u = static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0) * mass;
  double cum = 0.0;
  for (const auto& c : candidates_) {
    cum += c.p;
    if (u < cum) return c.id;
  }
  return candidates_.back().id;
}

}  // namespace p64
