#include "engine/lab/run_gpu_figures.h"

#include <nlohmann/json.hpp>

#include "engine/lab/decode_energy.h"
#include "engine/lab/gpu_watch.h"

namespace p64 {

namespace {

const nlohmann::json* object_at(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it != j.end() && it->is_object() ? &*it : nullptr;
}

}  // namespace

RunGpuFigures run_gpu_figures(const nlohmann::json& summary, const char* side) {
  RunGpuFigures f;
  const nlohmann::json* owner = side ? object_at(summary, side) : &summary;
  if (const nlohmann::json* energy = owner ? object_at(*owner, "energy") : nullptr)
    if (const nlohmann::json* t = object_at(*energy, "tok_per_j"))
      if (t->value("n", 0) > 0 && t->contains("median") && (*t)["median"].is_number())
        f.tok_per_j = (*t)["median"].get<double>();
  const nlohmann::json* machine = object_at(summary, "machine");
  const nlohmann::json* gpu = machine ? object_at(*machine, "gpu") : nullptr;
  if (gpu && gpu->value("available", false)) {
    if (gpu->contains("power_w_mean") && (*gpu)["power_w_mean"].is_number())
      f.power_w_mean = (*gpu)["power_w_mean"].get<double>();
    if (gpu->contains("throttled") && (*gpu)["throttled"].is_boolean()) f.throttled = (*gpu)["throttled"].get<bool>();
  }
  return f;
}

RunGpuFigures run_gpu_figures(const std::optional<DecodeEnergy>& energy, const std::optional<GpuLoad>& gpu) {
  RunGpuFigures f;
  if (energy && energy->tok_per_j.n > 0) f.tok_per_j = energy->tok_per_j.median;
  if (gpu && gpu->unavailable.empty()) {
    if (gpu->power_w_mean >= 0) f.power_w_mean = gpu->power_w_mean;
    if (gpu->reasons_known) f.throttled = gpu->throttled();
  }
  return f;
}

}  // namespace p64
