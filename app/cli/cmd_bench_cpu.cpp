// p64 bench-cpu: CPU decode/prefill speed on synthetic models of real shapes, as a table.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "app/cli/command_registry.h"
#include "app/cli/option_checks.h"
#include "app/cli/progress_line.h"
#include "engine/common/error.h"
#include "engine/common/temp_files.h"
#include "engine/lab/cpu_bench.h"
#include "engine/lab/decode_proxy.h"
#include "engine/lab/lab_run.h"

namespace p64::cli {
namespace {

struct Args {
  std::string dir = (p64_cache_dir() / "bench-cpu").string();
  std::vector<std::string> models;  // PRESET:QUANT[:LAYOUT]
  CpuBenchParams params;
};

// The machine is shared: its load average, printed before and after, says how noisy the run was.
std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(in >> one >> five >> fifteen)) return "n/a";
  return one + " " + five + " " + fifteen;
}

std::string join(const std::vector<double>& v) {
  std::string s;
  char b[32];
  for (double x : v) {
    std::snprintf(b, sizeof b, "%s%.1f", s.empty() ? "" : " ", x);
    s += b;
  }
  return s.empty() ? "-" : s;
}

void run(const Args& a) {
  std::vector<CpuBenchModel> models;
  for (const std::string& m : a.models) models.push_back(parse_cpu_bench_model(m));
  if (models.empty()) models = default_cpu_bench_models();
  std::fprintf(stderr, "bench-cpu: the models are written to %s and kept for the next run (--dir chooses "
               "another folder; delete it to reclaim the space)\n", a.dir.c_str());
  std::vector<std::string> paths;
  for (const CpuBenchModel& m : models)
    paths.push_back(ensure_cpu_bench_model(a.dir, m, stderr_progress_line("prepare " + m.label())));

  const CpuBenchParams& p = a.params;
  const std::string load_before = load_average();
  const auto rows = run_cpu_bench(models, paths, p, stderr_progress_line("bench-cpu"));
  const std::string load_after = load_average();
  std::printf("bench-cpu: cpu backend, %u threads, prompt %d tokens, decode %d tokens; %d measured rounds "
              "(median [min-max]) after %d warm-up round(s), models interleaved\n\n",
              p.threads, p.prompt_tokens, p.decode_tokens, p.rounds, p.warmup_rounds);
  std::printf("| model | weights MiB | decode tok/s | prefill tok/s | effective GB/s | share of read | warm-up decode | "
              "warm-up prefill |\n");
  std::printf("|---|---:|---|---|---|---:|---|---|\n");
  for (const CpuBenchRow& r : rows)
    std::printf("| %s | %.0f | %s | %s | %s | %.0f%% | %s | %s |\n", r.model.label().c_str(),
                static_cast<double>(r.weight_bytes) / (1 << 20), format_min_median_max(r.decode_tok_s, 1).c_str(),
                format_min_median_max(r.prefill_tok_s, 1).c_str(), format_min_median_max(r.effective_gbs, 2).c_str(),
                100 * r.bandwidth_share.median, join(r.warmup_decode_tok_s).c_str(), join(r.warmup_prefill_tok_s).c_str());
  std::printf("\neffective GB/s = (weight bytes + mean KV bytes read per decode step) x decode tok/s\n");
  if (!rows.empty() && rows.front().measured_read_gbs > 0)
    std::printf("share of read = effective GB/s over this host's measured read bandwidth, %.1f GB/s (all cores, "
                "measured once before the runs)\n",
                rows.front().measured_read_gbs);
  std::printf("load average (1/5/15 min) before: %s, after: %s (%u logical cores)\n", load_before.c_str(),
              load_after.c_str(), std::thread::hardware_concurrency());
}

const CommandRegistration reg(49, [](CLI::App& root) {
  auto a = std::make_shared<Args>();
  CLI::App* c = root.add_subcommand(
      "bench-cpu", "CPU decode/prefill tok/s and effective GB/s on synthetic SmolLM2-360M / Llama-3.2-1B models");
  c->add_option("--dir", a->dir, "Folder for the synthesized .p64 models (made once, then reused)")->capture_default_str();
  c->add_option("--synth", a->models,
                "PRESET:QUANT[:LAYOUT] to run instead of the default three (repeatable); LAYOUT is cpu-rows (Q8_0, Q5_0, "
                "Q4_K and Q6_K matrices 16 rows interleaved, p64 convert --cpu-rows; the default on AVX-512 CPUs) or "
                "plain (GGUF's blocks; the default elsewhere)");
  c->add_option("--threads", a->params.threads, threads_help("CPU threads"))->capture_default_str()->check(thread_count(1));
  c->add_option("--rounds", a->params.rounds, "Measured rounds")->capture_default_str()->check(CLI::Range(1, 1000));
  c->add_option("--warmup", a->params.warmup_rounds, "Warm-up rounds (reported apart)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100));
  c->add_option("--tokens", a->params.decode_tokens, "Decode steps per run")->capture_default_str()->check(CLI::Range(1, 4096));
  c->add_option("--prompt-tokens", a->params.prompt_tokens, "Prompt length")->capture_default_str()->check(CLI::Range(1, 4096));
  c->callback([a] { run(*a); });
});

}  // namespace
}  // namespace p64::cli
