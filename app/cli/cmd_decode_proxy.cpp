// p64 decode-proxy: the plan's §9 measurement contract on one model and backend.
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/cli/command_registry.h"
#include "app/cli/decode_args.h"
#include "app/cli/depth_sweep_table.h"
#include "app/cli/option_checks.h"
#include "app/cli/progress_line.h"
#include "engine/common/error.h"
#include "engine/lab/depth_sweep.h"
#include "engine/lab/experiment.h"
#include "engine/lab/lab_run.h"
#include "engine/lab/store.h"
#include "engine/lab/store_text.h"

namespace p64::cli {
namespace {

struct Args {
  std::string model;
  std::string tokenizer;  // llama2.c checkpoints only
  std::string backend = "auto";
  int tokens = 32;
  int prompt_tokens = 32;
  int runs = 2;
  int warmup = 1;
  int warm = 0;
  uint32_t threads = 0;
  std::vector<std::string> opts;
  std::string depth;  // a depth sweep: "0,512,4096"
  bool json = false;
  std::string db = default_store_path();
  bool no_store = false;
};

// What the machine did meanwhile: a busy run's figures are not what this machine can do.
void print_machine(const DecodeProxyResult& r) {
  const MachineLoad& m = r.machine;
  std::printf("  machine: %s\n", busy_line(r.busy).c_str());
  if (m.samples > 0 && m.runnable_mean >= 0)
    std::printf("    %.1f tasks runnable on average (at most %.0f) for %d cores over %d samples; 1-minute load %.2f\n",
                m.runnable_mean, m.runnable_max, m.cores, m.samples, m.load1);
  if (m.cpu_mhz_max > 0) std::printf("    CPU clock %.0f-%.0f MHz\n", m.cpu_mhz_min, m.cpu_mhz_max);
  if (m.gpu) std::printf("    GPU %s\n", gpu_line(*m.gpu).c_str());
  if (r.energy && r.energy->tok_per_j.n > 0)
    std::printf("    decode energy %s tok/J (%s)\n", format_min_median_max(r.energy->tok_per_j, 2).c_str(),
                r.energy->source.c_str());
  else if (r.energy)
    std::printf("    decode energy: unknown (%s: no usable reading around any decode)\n", r.energy->source.c_str());
  else if (!r.energy_unavailable.empty())
    std::printf("    decode energy: none (%s)\n", r.energy_unavailable.c_str());
}

// A measured run's decode tokens per joule, "" where its energy is unknown.
std::string tok_per_j_cell(const DecodeProxyResult& r, size_t measured_index) {
  if (!r.energy || measured_index >= r.energy->joules.size() || r.energy->joules[measured_index] <= 0) return "";
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", r.params.decode_tokens / r.energy->joules[measured_index]);
  return b;
}

void run(const Args& a) {
  ExperimentRequest req;
  req.model_path = a.model;
  req.tokenizer_path = a.tokenizer;
  req.config = LabConfig::from_options(a.backend, a.threads, a.opts);
  req.decode_tokens = a.tokens;
  req.prompt_tokens = a.prompt_tokens;
  req.runs = a.runs;
  req.warmup = a.warmup;
  req.warm_repeats = a.warm;
  if (!a.depth.empty()) req.depths = parse_depths(a.depth);
  if (!a.no_store) req.store_path = a.db;
  const ExperimentOutcome out =
      run_experiment(req, {stderr_progress_line("convert"), {}, stderr_progress_line("decode-proxy")});
  if (!req.depths.empty()) {
    if (a.json) std::cout << json_text(depth_sweep_json(req, out), 2) << "\n";
    else print_depth_sweep(req, out);
    return;
  }
  const DecodeProxyResult& r = out.decode_proxy;
  const LabConfig& config = req.config;
  const std::string& device = out.passport.device.name;

  if (a.json) {
    nlohmann::json j = out.summary;
    j["model"] = a.model;
    j["backend"] = out.backend;
    j["device"] = device;
    j["config"] = config.to_string();
    j["load_ms"] = out.load_ms;
    j["run_id"] = out.run_id;
    if (out.run_id) j["db"] = out.store_path;
    std::cout << json_text(j, 2) << "\n";
    return;
  }
  std::printf("decode-proxy %s\n  backend %s (%s), config %s, load %.0f ms\n", a.model.c_str(), out.backend.c_str(),
              device.c_str(), config.to_string().c_str(), out.load_ms);
  std::printf("  prompt %d ids: %s\n  decode %d tokens per run, %d warm-up, %d runs%s\n", a.prompt_tokens,
              r.prompt.rule.c_str(), a.tokens, a.warmup, a.runs,
              a.warm ? (", " + std::to_string(a.warm) + " warm repeats").c_str() : "");
  std::printf("\n  %-4s %-5s %12s %13s %9s %9s %7s%s\n", "run", "warm", "decode tok/s", "prefill tok/s", "ttft ms",
              "eff GB/s", "share", r.energy ? "    tok/J" : "");
  size_t measured = 0;
  for (const auto& s : r.samples) {
    const std::string tok_per_j = s.warm ? "" : tok_per_j_cell(r, measured++);
    std::printf("  %-4d %-5s %12.2f %13.2f %9.2f %9.3f %6.1f%%", s.rep + 1, s.warm ? "yes" : "", s.decode_tok_s,
                s.prefill_tok_s, s.ttft_ms, s.effective_gbs, 100.0 * s.bandwidth_share);
    if (r.energy) std::printf(" %8s", tok_per_j.c_str());
    std::printf("\n");
  }
  std::printf("\n  decode tok/s   %s  (median [min-max] ± stddev)\n", format_min_median_max(r.decode_tok_s, 2).c_str());
  std::printf("  prefill tok/s  %s\n", format_min_median_max(r.prefill_tok_s, 2).c_str());
  std::printf("  ttft ms        %s\n", format_min_median_max(r.ttft_ms, 2).c_str());
  std::printf("  effective GB/s %s  = (%.0f weight + %.0f KV bytes/token) x tok/s%s\n",
              format_min_median_max(r.effective_gbs, 3).c_str(), static_cast<double>(r.weight_bytes),
              r.bytes_per_token - static_cast<double>(r.weight_bytes), r.kv_bytes_assumed ? " (KV fp16 assumed)" : "");
  if (r.measured_read_gbs > 0)
    std::printf("  share of measured read %.1f GB/s: %.2f%% [%.2f-%.2f]\n", r.measured_read_gbs,
                100 * r.bandwidth_share.median, 100 * r.bandwidth_share.min, 100 * r.bandwidth_share.max);
  else
    std::printf("  share of measured bandwidth: n/a (the passport has no measured read bandwidth)\n");
  std::printf("  peak device memory %.2f MiB\n", static_cast<double>(r.peak_device_bytes) / (1 << 20));
  if (a.warm > 0)
    std::printf("  warm steady state %s tok/s = %.1f%% of peak (R6: within 10%%: %s)\n",
                format_min_median_max(r.warm_decode_tok_s, 2).c_str(), 100 * r.warm_over_peak,
                r.warm_within_10pct ? "yes" : "NO");
  print_machine(r);
  if (out.run_id) std::printf("  stored as run %lld in %s\n", static_cast<long long>(out.run_id), out.store_path.c_str());
}

const CommandRegistration reg(40, [](CLI::App& root) {
  auto args = std::make_shared<Args>();
  CLI::App* c = root.add_subcommand("decode-proxy", "Measure decode/prefill tok/s, TTFT and effective GB/s (plan §9)");
  add_model_argument(*c, args->model, args->tokenizer);
  c->add_option("--backend", args->backend, "Backend: auto (cuda > vulkan > cpu), cpu, cuda, vulkan")->capture_default_str();
  c->add_option("--tokens", args->tokens, "Decode steps per run")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  CLI::Option* prompt =
      c->add_option("--prompt-tokens", args->prompt_tokens, "Prompt length in tokens (fixed, deterministic ids)")
          ->capture_default_str()
          ->check(CLI::Range(1, 1 << 20));
  c->add_option("--depth", args->depth,
                "Depth sweep, as llama-bench -d: decode after a prefill of each depth, one stored run per depth "
                "(e.g. 0,512,4096)")
      ->check(depth_list())
      ->excludes(prompt);
  c->add_option("--runs", args->runs, "Measured runs")->capture_default_str()->check(CLI::Range(1, 1000));
  c->add_option("--warmup", args->warmup, "Untimed runs first")->capture_default_str()->check(CLI::Range(0, 1000));
  c->add_option("--warm", args->warm, "Extra runs on the kept-loaded engine; reports steady state vs peak (R6)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  c->add_option("--threads", args->threads, threads_help("CPU threads (0 = all)"))
      ->capture_default_str()
      ->check(thread_count());
  c->add_option("--opt", args->opts, "Optimisation switch NAME=VALUE (repeatable)");
  c->add_flag("--json", args->json, "Print the result as JSON")->capture_default_str();
  c->add_option("--db", args->db, "Lab store (SQLite)")->capture_default_str();
  c->add_flag("--no-store", args->no_store, "Do not write the run to the store")->capture_default_str();
  c->callback([args] { run(*args); });
});

}  // namespace
}  // namespace p64::cli
