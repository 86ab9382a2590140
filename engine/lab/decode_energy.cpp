#include "engine/lab/decode_energy.h"

#include <nlohmann/json.hpp>

namespace p64 {

DecodeEnergyMeter::DecodeEnergyMeter(const GpuMonitor& gpu) {
  if (gpu.energy_j()) {
    counter_ = [&gpu] { return gpu.energy_j(); };
    source_ = "NVML energy counter";
  } else {
    power_w_ = [&gpu] { return gpu.sample().power_w; };
    source_ = "NVML power x decode time";
  }
}

DecodeEnergyMeter::DecodeEnergyMeter(const RaplCounter& cpu)
    : counter_([&cpu] { return cpu.energy_j(); }), source_(cpu.source()) {}

void DecodeEnergyMeter::begin() {
  if (counter_) start_j_ = counter_().value_or(-1);
  else start_w_ = power_w_();
}

double DecodeEnergyMeter::end(double decode_seconds) {
  if (counter_) {
    const double now = counter_().value_or(-1);
    // A counter that did not move over a decode shorter than its update period says nothing.
    return start_j_ >= 0 && now > start_j_ ? now - start_j_ : -1;
  }
  const double w = power_w_();
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
