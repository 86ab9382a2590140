// p64 passport: host + device facts and measured ceilings of a backend.
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/cli/command_registry.h"
#include "engine/lab/lab_config.h"
#include "engine/runtime/backend_registry.h"

namespace p64::cli {
namespace {

const CommandRegistration reg(39, [](CLI::App& root) {
  auto backend = std::make_shared<std::string>("auto");
  auto json = std::make_shared<bool>(false);
  CLI::App* c = root.add_subcommand("passport", "Host and device facts with measured bandwidth ceilings");
  c->add_option("--backend", *backend, "Backend: auto (cuda > vulkan > cpu), cpu, cuda, vulkan")->capture_default_str();
  c->add_flag("--json", *json, "Print JSON")->capture_default_str();
  c->callback([backend, json] {
    auto b = create_backend(*backend);
    const Passport p = lab_passport(*b);
    if (*json) {
      std::cout << nlohmann::json(p).dump(2) << "\n";
      return;
    }
    std::printf("host:    %s, %u logical cores, %.1f GiB, %s, %s\n         features: %s\n", p.host.cpu_model.c_str(),
                p.host.logical_cores, p.host.memory_bytes / 1073741824.0, p.host.os.c_str(), p.host.kernel.c_str(),
                p.host.cpu_features.c_str());
    std::printf("device:  [%s] %s (%s), type %s, driver %s, api %s, cc %s\n", p.device.backend.c_str(),
                p.device.name.c_str(), p.device.vendor.c_str(), p.device.device_type.c_str(),
                p.device.driver_version.c_str(), p.device.api_version.c_str(), p.device.compute_capability.c_str());
    std::printf("         %u multiprocessors, %.1f GiB, L2 %.1f MiB, subgroup %u, timestamp period %.2f ns\n",
                p.device.multiprocessors, p.device.memory_bytes / 1073741824.0, p.device.l2_bytes / 1048576.0,
                p.device.subgroup_size, p.device.timestamp_period_ns);
    std::printf("peak:    %.1f GB/s (device figures; 0 = not given), %.3g FLOP/s\n", p.device.peak_bandwidth_gbs,
                p.device.peak_flops);
    std::printf("measured: read %.2f GB/s, copy %.2f GB/s (read+write), buffer %.0f MiB, median of %u\n",
                p.measured.read_gbs, p.measured.copy_gbs, p.measured.buffer_bytes / 1048576.0, p.measured.repeats);
    std::string backends;
    for (const auto& s : p.build.backends) backends += s + " ";
    std::printf("build:   p64 %s git %s, %s, flags '%s', backends %s\n", p.build.version.c_str(),
                p.build.git_revision.c_str(), p.build.compiler.c_str(), p.build.flags.c_str(), backends.c_str());
  });
});

}  // namespace
}  // namespace p64::cli
