// p64 timeline: per-op split of decode (and one prefill), optional Chrome trace.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/cli/command_registry.h"
#include "app/cli/decode_args.h"
#include "app/cli/option_checks.h"
#include "app/cli/progress_line.h"
#include "engine/common/atomic_output.h"
#include "engine/common/error.h"
#include "engine/lab/compute_ceiling.h"
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
  int tokens = 16;
  int prompt_tokens = 32;
  int top = 10;
  uint32_t threads = 0;
  std::vector<std::string> opts;
  std::string trace;
  bool force = false;
  bool json = false;
  std::string db = default_store_path();
  bool no_store = false;
};

// "41.3%" of `ceiling`, "-" without one.
std::string percent_of(double value, double ceiling) {
  if (ceiling <= 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * value / ceiling);
  return text;
}

// One span's time per op over the decode steps: the spread the per-step means hide, and for
// ops inside blocks the layers with the lowest and highest median.
void print_spread(const TimelineSummary& t, int top) {
  std::printf("\n  %-14s %-7s %6s %10s %10s %10s %8s  %s\n", "op spread", "group", "spans", "median us", "min us",
              "max us", "max/min", "layer medians us: fastest - slowest");
  int shown = 0;
  for (const OpSpread& o : t.spread) {
    if (shown++ >= top) break;
    std::printf("  %-14s %-7s %6d %10.2f %10.2f %10.2f %7.1fx", o.name.c_str(), o.group.c_str(), o.us.n, o.us.median,
                o.us.min, o.us.max, o.us.min > 0 ? o.us.max / o.us.min : 0.0);
    if (o.fastest_layer >= 0)
      std::printf("  %.2f (L%d) - %.2f (L%d)", o.fastest_layer_us, o.fastest_layer, o.slowest_layer_us, o.slowest_layer);
    std::printf("\n");
  }
}

void run(const Args& a) {
  OutputPolicy trace_policy{a.force};
  trace_policy.reads(a.model, "the model this command reads");
  if (!a.no_store) protect_store_files(trace_policy, a.db);
  if (!a.trace.empty()) check_output_path(a.trace, trace_policy);  // before the measurement, not after
  ExperimentRequest req;
  req.measurement = Measurement::Timeline;
  req.model_path = a.model;
  req.tokenizer_path = a.tokenizer;
  req.config = LabConfig::from_options(a.backend, a.threads, a.opts);
  req.decode_tokens = a.tokens;
  req.prompt_tokens = a.prompt_tokens;
  if (!a.no_store) req.store_path = a.db;
  const ExperimentOutcome out =
      run_experiment(req, {stderr_progress_line("convert"), {}, stderr_progress_line("timeline")});
  const TimelineResult& r = out.timeline;
  if (!a.trace.empty())
    write_chrome_trace(a.trace, r.spans, "p64 timeline " + a.model + " (" + out.backend + ")", trace_policy);
  nlohmann::json summary = out.summary;
  if (a.json) {
    summary["run_id"] = out.run_id;
    summary["backend"] = out.backend;
    std::cout << summary.dump(2) << "\n";
    return;
  }
  const TimelineSummary& t = r.summary;
  std::printf("timeline %s, backend %s (%s)\n", a.model.c_str(), out.backend.c_str(), out.passport.device.name.c_str());
  std::printf("  %d decode steps: wall %.3f ms/step, spans %.3f ms/step (coverage %.1f%%); prefill of %d: wall %.3f ms, spans %.3f ms\n",
              t.steps, r.decode_wall_ms / std::max(1, a.tokens), t.span_ms_per_step, 100 * r.coverage, a.prompt_tokens,
              r.prefill_wall_ms, t.prefill_ms);
  std::printf("  dispatches: %.1f per layer (%d layers), %.1f per decode step\n\n", t.dispatches_per_layer, t.layers,
              t.dispatches_per_step);
  std::printf("  %-8s %10s %7s\n", "group", "ms/step", "share");
  for (const auto& g : t.groups) std::printf("  %-8s %10.4f %6.1f%%\n", g.group.c_str(), g.ms, 100 * g.share);
  // Each op's achieved bandwidth and FLOP rate over its own spans, against the passport's read
  // and compute ceilings: the per-op roofline (spans are timed with timing on, so they run a
  // little slower than decode-proxy).
  const double read_ceiling = out.passport.measured.read_gbs;
  const ComputeCeiling compute = live_compute_ceiling(out.passport);
  std::printf("\n  %-14s %-7s %10s %6s %7s %9s %8s %6s %9s %7s %6s\n", "top op", "group", "ms/step", "count", "share",
              "MB/step", "GB/s", "%read", "GFLOP/s", "FLOP/B", "%peak");
  int shown = 0;
  for (const auto& o : t.top_ops) {
    if (shown++ >= a.top) break;
    std::printf("  %-14s %-7s %10.4f %6d %6.1f%%", o.name.c_str(), o.group.c_str(), o.ms, o.count, 100 * o.share);
    if (o.gbs() > 0) std::printf(" %9.2f %8.1f %6s", o.mb, o.gbs(), percent_of(o.gbs(), read_ceiling).c_str());
    else if (o.gflops() > 0) std::printf(" %9s %8s %6s", "", "", "");
    if (o.gflops() > 0)
      std::printf(" %9.1f %7.2f %6s", o.gflops(), o.intensity(), percent_of(o.gflops() * 1e9, compute.flops).c_str());
    std::printf("\n");
  }
  const std::string read_text =
      read_ceiling > 0 ? std::to_string(std::lround(read_ceiling)) + " GB/s" : std::string("none measured");
  const std::string peak_text =
      compute.flops > 0 ? std::to_string(std::lround(compute.flops / 1e9)) + " GFLOP/s, " + compute.source : compute.source;
  std::printf("  (%%read: of the passport's measured read bandwidth, %s; %%peak: of the compute ceiling, %s. Ops whose "
              "traffic or FLOPs are not counted show none.)\n",
              read_text.c_str(), peak_text.c_str());
  print_spread(t, a.top);
  if (!a.trace.empty()) std::printf("\n  trace: %s (open in https://ui.perfetto.dev)\n", a.trace.c_str());
  if (out.run_id) std::printf("  stored as run %lld in %s\n", static_cast<long long>(out.run_id), out.store_path.c_str());
}

const CommandRegistration reg(41, [](CLI::App& root) {
  auto args = std::make_shared<Args>();
  CLI::App* c = root.add_subcommand("timeline", "Per-op device spans of decode and one prefill, split by op group");
  add_model_argument(*c, args->model, args->tokenizer);
  c->add_option("--backend", args->backend, "Backend: auto (cuda > vulkan > cpu), cpu, cuda, vulkan")->capture_default_str();
  c->add_option("--tokens", args->tokens, "Decode steps to record")->capture_default_str()->check(CLI::Range(1, 1 << 16));
  c->add_option("--prompt-tokens", args->prompt_tokens, "Prompt length of the recorded prefill")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
  c->add_option("--top", args->top, "How many top ops to print")->capture_default_str();
  c->add_option("--threads", args->threads, threads_help("CPU threads (0 = all)"))
      ->capture_default_str()
      ->check(thread_count());
  c->add_option("--opt", args->opts, "Optimisation switch NAME=VALUE (repeatable)");
  c->add_option("--trace", args->trace, "Write Chrome trace-event JSON here (Perfetto opens it; never over the model or the store)");
  c->add_flag("--force", args->force, "Replace an existing --trace file")->capture_default_str();
  c->add_flag("--json", args->json, "Print the summary as JSON")->capture_default_str();
  c->add_option("--db", args->db, "Lab store (SQLite)")->capture_default_str();
  c->add_flag("--no-store", args->no_store, "Do not write the run to the store")->capture_default_str();
  c->callback([args] { run(*args); });
});

}  // namespace
}  // namespace p64::cli
