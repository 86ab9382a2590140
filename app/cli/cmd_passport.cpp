// p64 passport: host + device facts and measured ceilings of a backend.
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/cli/command_registry.h"
#include "engine/lab/gpu_facts.h"
#include "engine/lab/lab_config.h"
#include "engine/runtime/backend_registry.h"

namespace p64::cli {
namespace {

// "a, b, c" of the parts that are not empty: a fact a device does not have is left out, not
// printed as a blank.
std::string joined(std::initializer_list<std::string> parts) {
  std::string out;
  for (const std::string& s : parts)
    if (!s.empty()) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string labelled(const char* label, const std::string& value) {
  return value.empty() ? std::string() : std::string(label) + " " + value;
}

std::string fixed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

void print_passport(const Passport& p) {
  const HostFacts& h = p.host;
  const DeviceFacts& d = p.device;
  std::printf("host:     %s\n", joined({h.cpu_model + (h.cpu_id.empty() ? "" : " (" + h.cpu_id + ")"),
                                       std::to_string(h.logical_cores) + " logical cores",
                                       fixed(h.memory_bytes / 1073741824.0, 1) + " GiB", h.os, h.kernel})
                                  .c_str());
  std::printf("          features: %s\n", h.cpu_features.empty() ? "none named" : h.cpu_features.c_str());
  std::printf("          caches: %s%s%s\n", describe_caches(h.caches).c_str(),
              h.caches.source.empty() ? "" : (" (" + h.caches.source + ")").c_str(),
              h.caches.note.empty() ? "" : ("; " + h.caches.note).c_str());
  const bool cpu = d.backend == "cpu";
  std::printf("device:   [%s] %s\n", d.backend.c_str(),
              joined({d.name, labelled("vendor", d.vendor), labelled("type", d.device_type),
                      labelled("driver", d.driver_version), labelled("api", d.api_version),
                      labelled("cc", d.compute_capability)})
                  .c_str());
  std::printf("          %s\n",
              joined({std::to_string(d.multiprocessors) + (cpu ? " threads" : " multiprocessors"),
                      fixed(d.memory_bytes / 1073741824.0, 1) + " GiB",
                      cpu ? std::string() : (d.l2_bytes ? "L2 " + fixed(d.l2_bytes / 1048576.0, 1) + " MiB" : ""),
                      cpu ? std::string() : "subgroup " + std::to_string(d.subgroup_size),
                      d.timestamp_period_ns > 0 ? "timestamp period " + fixed(d.timestamp_period_ns, 2) + " ns" : ""})
                  .c_str());
  std::printf("peak:     %s\n",
              joined({d.peak_bandwidth_gbs > 0 ? fixed(d.peak_bandwidth_gbs, 1) + " GB/s" : "bandwidth not given",
                      d.peak_flops > 0 ? fixed(d.peak_flops / 1e12, 1) + " TFLOP/s" : "FLOP/s not given"})
                      .c_str());
  std::printf("measured: read %.2f GB/s, copy %.2f GB/s (read+write), buffer %.0f MiB, median of %u\n",
              p.measured.read_gbs, p.measured.copy_gbs, p.measured.buffer_bytes / 1048576.0, p.measured.repeats);
  if (p.compute.fp32_flops > 0)
    std::printf("          compute: fp32 FMA %.1f GFLOP/s, int8 dot products %.1f Gop/s (%s, %u threads, median of %u)\n",
                p.compute.fp32_flops / 1e9, p.compute.int8_ops / 1e9, p.compute.isa.c_str(), p.compute.threads,
                p.compute.repeats);
  std::string backends;
  for (const auto& s : p.build.backends) backends += (backends.empty() ? "" : " ") + s;
  std::printf("build:    p64 %s git %s, %s, flags '%s', backends %s\n", p.build.version.c_str(),
              p.build.git_revision.c_str(), p.build.compiler.c_str(), p.build.flags.c_str(), backends.c_str());
}

const CommandRegistration reg(39, [](CLI::App& root) {
  auto backend = std::make_shared<std::string>("auto");
  auto json = std::make_shared<bool>(false);
  CLI::App* c = root.add_subcommand("passport", "Host and device facts with measured bandwidth ceilings");
  c->add_option("--backend", *backend, "Backend: auto (cuda > vulkan > cpu), cpu, cuda, vulkan")->capture_default_str();
  c->add_flag("--json", *json, "Print JSON")->capture_default_str();
  c->callback([backend, json] {
    auto b = create_backend(*backend);
    const Passport p = lab_passport(*b);
    const std::optional<GpuFacts> gpu = read_gpu_facts(p.device);  // CUDA only: NVML where present
    if (*json) {
      nlohmann::json j = p;
      if (gpu) j["nvml"] = *gpu;
      std::cout << j.dump(2) << "\n";
      return;
    }
    print_passport(p);
    if (gpu) std::printf("nvml:     %s\n", gpu_facts_line(*gpu).c_str());
  });
});

}  // namespace
}  // namespace p64::cli
