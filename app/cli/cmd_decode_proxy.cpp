// p64 decode-proxy: the plan's §9 measurement contract on one model and backend.
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/cli/command_registry.h"
#include "app/cli/decode_args.h"
#include "app/cli/option_checks.h"
#include "engine/common/error.h"
#include "engine/lab/decode_proxy.h"
#include "engine/lab/lab_run.h"
#include "engine/lab/store.h"
#include "engine/lab/store_text.h"
#include "engine/model/model.h"

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
}

void run(const Args& a) {
  const LabConfig config = LabConfig::from_options(a.backend, a.threads, a.opts);
  auto model = open_lab_model(a.model, config.backend, a.tokenizer, stderr_progress_line("convert"));
  std::unique_ptr<Store> store = a.no_store ? nullptr : Store::open(a.db);
  const uint32_t needed = static_cast<uint32_t>(std::max(0, a.prompt_tokens) + std::max(0, a.tokens));
  LoadedBackend lb = load_backend(config, model, needed);
  if (store) store->sync_switches(lb.name, lb.backend->switches());

  DecodeProxyParams p;
  p.decode_tokens = a.tokens;
  p.prompt_tokens = a.prompt_tokens;
  p.runs = a.runs;
  p.warmup = a.warmup;
  p.warm_repeats = a.warm;
  DecodeProxyResult r = run_decode_proxy(*lb.backend, *model, lb.passport, p, stderr_progress_line("decode-proxy"));

  int64_t run_id = 0;
  if (store) {
    RunBundle b = begin_run_bundle(store.get(), RunKind::DecodeProxy, *model, a.model, lb, config);
    b.samples = r.samples;
    b.run.params_json = nlohmann::json{{"tokens", a.tokens}, {"prompt_tokens", a.prompt_tokens}, {"runs", a.runs},
                                       {"warmup", a.warmup}, {"warm", a.warm}}
                            .dump();
    b.run.summary_json = nlohmann::json(r).dump();
    run_id = store->write_run(std::move(b));
  }

  if (a.json) {
    nlohmann::json j = r;
    j["model"] = a.model;
    j["backend"] = lb.name;
    j["device"] = lb.passport.device.name;
    j["config"] = config.to_string();
    j["load_ms"] = lb.load_ms;
    j["run_id"] = run_id;
    if (store) j["db"] = store->path();
    std::cout << json_text(j, 2) << "\n";
    return;
  }
  std::printf("decode-proxy %s\n  backend %s (%s), config %s, load %.0f ms\n", a.model.c_str(), lb.name.c_str(),
              lb.passport.device.name.c_str(), config.to_string().c_str(), lb.load_ms);
  std::printf("  prompt %d ids: %s\n  decode %d tokens per run, %d warm-up, %d runs%s\n", a.prompt_tokens,
              r.prompt.rule.c_str(), a.tokens, a.warmup, a.runs,
              a.warm ? (", " + std::to_string(a.warm) + " warm repeats").c_str() : "");
  std::printf("\n  %-4s %-5s %12s %13s %9s %9s %7s\n", "run", "warm", "decode tok/s", "prefill tok/s", "ttft ms",
              "eff GB/s", "share");
  for (const auto& s : r.samples)
    std::printf("  %-4d %-5s %12.2f %13.2f %9.2f %9.3f %6.1f%%\n", s.rep + 1, s.warm ? "yes" : "", s.decode_tok_s,
                s.prefill_tok_s, s.ttft_ms, s.effective_gbs, 100.0 * s.bandwidth_share);
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
  if (store) std::printf("  stored as run %lld in %s\n", static_cast<long long>(run_id), store->path().c_str());
}

const CommandRegistration reg(40, [](CLI::App& root) {
  auto args = std::make_shared<Args>();
  CLI::App* c = root.add_subcommand("decode-proxy", "Measure decode/prefill tok/s, TTFT and effective GB/s (plan §9)");
  add_model_argument(*c, args->model, args->tokenizer);
  c->add_option("--backend", args->backend, "Backend: auto (cuda > vulkan > cpu), cpu, cuda, vulkan")->capture_default_str();
  c->add_option("--tokens", args->tokens, "Decode steps per run")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  c->add_option("--prompt-tokens", args->prompt_tokens, "Prompt length in tokens (fixed, deterministic ids)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
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
