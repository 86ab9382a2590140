#include "engine/lab/decode_energy.h"

#include <nlohmann/json.hpp>

namespace p64 {

DecodeEnergyMeter::DecodeEnergyMeter(const GpuMonitor& gpu)
    : gpu_(gpu),
      counter_(gpu.energy_j().has_value()),
      source_(counter_ ? "NVML energy counter" : "NVML power x decode time") {}

void DecodeEnergyMeter::begin() {
  if (counter_) start_j_ = gpu_.energy_j().value_or(-1);
  else start_w_ = gpu_.sample().power_w;
}

double DecodeEnergyMeter::end(double decode_seconds) {
  if (counter_) {
    const double now = gpu_.energy_j().value_or(-1);
    // A counter that did not move over a decode shorter than its update period says nothing.
    return start_j_ >= 0 && now > start_j_ ? now - start_j_ : -1;
  }
  const double w = gpu_.sample().power_w;
  return start_w_ >= 0 && w >= 0 && decode_seconds > 0 ? (start_w_ + w) / 2 * decode_seconds : -1;
}

DecodeEnergy summarise_decode_energy(std::string source, std::vector<double> joules, int decode_tokens) {
  DecodeEnergy e;
  e.source = std::move(source);
  std::vector<double> per_j;
  for (double j : joules)
    if (j > 0) per_j.push_back(decode_tokens / j);
  e.joules = std::move(joules);
  e.tok_per_j = min_median_max(per_j);
  return e;
}

void to_json(nlohmann::json& j, const DecodeEnergy& e) {
  nlohmann::json joules = nlohmann::json::array();
  for (double x : e.joules) joules.push_back(x >= 0 ? nlohmann::json(x) : nlohmann::json());
  j = nlohmann::json{{"source", e.source}, {"decode_j", joules}, {"tok_per_j", e.tok_per_j}};
}

}  // namespace p64
