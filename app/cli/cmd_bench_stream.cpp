// p64 bench-stream: a model shape's per-layer matrices, layer after layer, launched as the decode
// step launches its GEMVs and streamed by one persistent kernel, as GB/s and as a share of the
// device's measured read ceiling (p64 passport). The design question behind a persistent decode
// step: how close to the ceiling a grid streams a step's weights when it must still wait
// between one matrix and the next.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/cli/command_registry.h"
#include "engine/common/error.h"
#include "engine/format/synth.h"
#include "engine/lab/lab_config.h"
#include "engine/runtime/backend_registry.h"
#include "engine/runtime/gemv_bench.h"

namespace p64::cli {
namespace {

struct Args {
  std::string backend = "cuda";
  std::string preset = "llama-3.2-3b";
  int layers = 0;
  std::vector<int> rings = {4, 8};
  int iters = 10;
  int repeats = 5;
  bool json = false;
};

void run(const Args& a) {
  const GemvChainBench* bench = find_gemv_chain_bench(a.backend);
  if (!bench) throw Error("bench-stream: backend '" + a.backend + "' has no chain benchmark (cuda has)");
  const double ceiling = lab_passport(*create_backend(a.backend)).measured.read_gbs;
  GemvChainRequest req;
  req.shape = synth_preset(a.preset);
  req.layers = a.layers;
  req.rings = a.rings;
  req.iters = a.iters;
  req.repeats = a.repeats;
  const GemvChainResult res = (*bench)(req);
  if (a.json) {
    nlohmann::json out = {{"preset", a.preset},          {"backend", a.backend},   {"read_ceiling_gbs", ceiling},
                          {"layers", res.layers},        {"matrices", res.matrices}, {"dtype", res.dtype},
                          {"compared", res.compared},    {"identical", res.identical},
                          {"max_rel_diff", res.max_rel_diff}};
    for (const auto& r : res.rows)
      out["rows"].push_back({{"variant", r.variant}, {"bytes", r.bytes}, {"us_median", r.us_median},
                             {"us_min", r.us_min}, {"us_max", r.us_max}, {"gbs", r.gbs()},
                             {"share_of_ceiling", r.gbs() / ceiling}, {"arrival_spread_us", r.arrival_spread_us},
                             {"release_after_last_us", r.release_after_last_us}, {"block_wait_us", r.block_wait_us}});
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("bench-stream %s on %s: %d layers x (qkv, o, gate_up, down) = %d matrices of %s; read ceiling %.0f GB/s "
              "(passport, this run); %d chains x %d repeats\n",
              a.preset.c_str(), a.backend.c_str(), res.layers, res.matrices, res.dtype.c_str(), ceiling, a.iters,
              a.repeats);
  std::printf("%-40s %9s %26s %8s %7s\n", "variant", "MB", "us/chain med (min-max)", "GB/s", "ceiling");
  for (const auto& r : res.rows)
    std::printf("%-40s %9.1f %10.1f (%6.1f-%6.1f) %8.0f %6.1f%%\n", r.variant.c_str(), r.bytes / 1e6, r.us_median,
                r.us_min, r.us_max, r.gbs(), 100.0 * r.gbs() / ceiling);
  std::printf("barriers, one probed chain (%%globaltimer, mean per barrier): first to last block's arrival, last arrival "
              "to the blocks' mean leave, a block's mean wait\n");
  for (const auto& r : res.rows)
    if (r.block_wait_us >= 0)
      std::printf("  %-38s %7.2f us %7.2f us %7.2f us\n", r.variant.c_str(), r.arrival_spread_us, r.release_after_last_us,
                  r.block_wait_us);
  std::printf("streamed outputs vs launched: %lld compared, %lld bit-identical, largest difference %.3g of the "
              "matrix's largest output\n",
              static_cast<long long>(res.compared), static_cast<long long>(res.identical), res.max_rel_diff);
}

const CommandRegistration reg(50, [](CLI::App& root) {
  auto a = std::make_shared<Args>();
  CLI::App* c = root.add_subcommand(
      "bench-stream",
      "A model shape's layer matrices launched one kernel each and streamed by one persistent kernel: GB/s and share "
      "of the passport's read ceiling");
  c->add_option("--backend", a->backend, "Backend with a chain benchmark")->capture_default_str();
  c->add_option("--preset", a->preset, "Model shape (a p64 synth preset)")->capture_default_str();
  c->add_option("--layers", a->layers, "Layers in the chain (0: the preset's)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  c->add_option("--rings", a->rings, "Rounds in flight per warp of the streamed kernel to sweep: 4, 8")
      ->delimiter(',')
      ->check(CLI::IsMember({4, 8}))
      ->capture_default_str();
  c->add_option("--iters", a->iters, "Chains per timed repeat")->check(CLI::Range(1, 10000))->capture_default_str();
  c->add_option("--repeats", a->repeats, "Timed repeats (median, min, max)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  c->add_flag("--json", a->json, "Print JSON");
  c->callback([a] { run(*a); });
});

}  // namespace
}  // namespace p64::cli
