// p64 bench-gemv: the decode GEMV alone on each matrix shape of a model, in each weight form,
// as GB/s and as a share of the device's measured read ceiling (p64 passport).
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
  std::vector<std::string> dtypes = {"Q4_K", "Q6_K", "Q8_0"};
  std::vector<std::string> layouts = {"blocks", "tiles"};
  std::vector<int> rows_per_warp = {2};
  std::vector<int> in_flight = {0};
  std::vector<int> ring = {0};
  std::vector<int> split_rows = {0};
  std::vector<int> prologue = {0};
  int iters = 100;
  int repeats = 5;
  bool json = false;
};

void run(const Args& a) {
  const GemvBench* bench = find_gemv_bench(a.backend);
  if (!bench) throw Error("bench-gemv: backend '" + a.backend + "' has no GEMV benchmark (cuda has)");
  const double ceiling = lab_passport(*create_backend(a.backend)).measured.read_gbs;
  GemvBenchRequest req;
  req.shape = synth_preset(a.preset);
  req.dtypes = a.dtypes;
  req.layouts = a.layouts;
  req.rows_per_warp = a.rows_per_warp;
  req.in_flight = a.in_flight;
  req.ring = a.ring;
  req.split_rows = a.split_rows;
  req.prologue = a.prologue;
  req.iters = a.iters;
  req.repeats = a.repeats;
  const std::vector<GemvBenchRow> rows = (*bench)(req);
  if (a.json) {
    nlohmann::json out = {{"preset", a.preset}, {"backend", a.backend}, {"read_ceiling_gbs", ceiling}};
    for (const auto& r : rows)
      out["rows"].push_back({{"op", r.op}, {"dtype", r.dtype}, {"layout", r.layout}, {"rows_per_warp", r.rows_per_warp},
                             {"in_flight", r.in_flight}, {"ring", r.ring}, {"split_rows", r.split_rows}, {"prologue", r.prologue}, {"rows", r.rows}, {"n", r.n},
                             {"bytes", r.bytes}, {"us_median", r.us_median}, {"us_min", r.us_min},
                             {"us_max", r.us_max}, {"gbs", r.gbs()}, {"share_of_ceiling", r.gbs() / ceiling}});
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("bench-gemv %s on %s: read ceiling %.0f GB/s (passport, this run); %d launches x %d repeats\n",
              a.preset.c_str(), a.backend.c_str(), ceiling, a.iters, a.repeats);
  std::printf("%-8s %-5s %-7s %3s %3s %4s %5s %3s %7s %6s %9s %22s %8s %7s\n", "op", "dtype", "layout", "rpw", "if",
              "ring", "split", "pro", "rows", "n", "MB", "us/launch med (min-max)", "GB/s", "ceiling");
  for (const auto& r : rows)
    std::printf("%-8s %-5s %-7s %3d %3d %4d %5d %3d %7lld %6lld %9.2f %8.2f (%6.2f-%6.2f) %8.0f %6.1f%%\n", r.op.c_str(),
                r.dtype.c_str(), r.layout.c_str(), r.rows_per_warp, r.in_flight, r.ring, r.split_rows, r.prologue,
                static_cast<long long>(r.rows),
                static_cast<long long>(r.n), r.bytes / 1e6,
                r.us_median, r.us_min, r.us_max, r.gbs(), 100.0 * r.gbs() / ceiling);
}

const CommandRegistration reg(43, [](CLI::App& root) {
  auto a = std::make_shared<Args>();
  CLI::App* c = root.add_subcommand(
      "bench-gemv", "Decode GEMV alone on each matrix of a model shape: GB/s and share of the passport's read ceiling");
  c->add_option("--backend", a->backend, "Backend with a GEMV benchmark")->capture_default_str();
  c->add_option("--preset", a->preset, "Model shape (a p64 synth preset)")->capture_default_str();
  c->add_option("--dtypes", a->dtypes, "Weight types: Q4_K, Q6_K, Q8_0")->delimiter(',')->capture_default_str();
  c->add_option("--layouts", a->layouts, "Weight forms: blocks (SoA), tiles (gemv_layout=tiles)")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--rows-per-warp", a->rows_per_warp, "Rows per warp to sweep: 1, 2, 4 (gemv_rows)")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--in-flight", a->in_flight, "Units in flight per lane to sweep: 0 (auto), 1, 2 (gemv_in_flight)")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--ring", a->ring,
                "Ring refills to sweep: 0, 1 (two units in flight, each refilled as it is consumed: gemv_ring)")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--split", a->split_rows, "Rows per block of the block-split kernel to sweep: 0 (none), 2, 4 (gemv_split)")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--prologue", a->prologue,
                "GEMVs that make their own input to sweep: 0 (from the norm kernel's buffers), 1 (RMSNorm and "
                "int16 quantization of the fp32 vector in the GEMV, gemv_prologue)")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--iters", a->iters, "Launches per timed repeat")->check(CLI::Range(1, 100000))->capture_default_str();
  c->add_option("--repeats", a->repeats, "Timed repeats (median, min, max)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  c->add_flag("--json", a->json, "Print JSON");
  c->callback([a] { run(*a); });
});

}  // namespace
}  // namespace p64::cli
