// p64 compare: a candidate backend against a reference backend on the same model — the check
// every GPU backend must pass before its speed means anything. Two parts:
//  1. teacher forcing: the reference's own greedy continuation is fed to both, position by
//     position, and the logit rows are compared (quality gate);
//  2. greedy identity: both generate greedily from BOS and the token streams must match.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/cli/command_registry.h"
#include "app/cli/decode_args.h"
#include "app/cli/option_checks.h"
#include "app/cli/progress_line.h"
#include "engine/common/error.h"
#include "engine/lab/lab_run.h"
#include "engine/lab/quality_gate.h"
#include "engine/lab/store_text.h"
#include "engine/model/model.h"
#include "engine/quant/dtype.h"

namespace p64::cli {
namespace {

struct Args {
  std::string model;
  std::string tokenizer;  // llama2.c checkpoints only
  std::string backend = "auto";
  std::string reference = "cpu";
  int tokens = 128;
  int greedy = 200;
  uint32_t threads = 0;
  std::vector<std::string> opts;
  std::vector<std::string> reference_opts;
  bool json = false;
};

// `start` (BOS, and any greedy tokens of `b` already in its cache) followed by greedy tokens of
// `b` up to n + 1 ids in all.
std::vector<int32_t> greedy_tokens(Backend& b, std::vector<int32_t> start, int n) {
  start.resize(std::min(start.size(), size_t(n) + 1));
  for (int i = int(start.size()) - 1; i < n; ++i) start.push_back(b.decode_argmax(start.back(), int32_t(i)));
  return start;
}

bool float_weights(const Model& m) {
  const DType t = m.layers().front().wq->dtype;
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

void run(const Args& a) {
  // Two backends read it: converted in the source's own layout, which both read.
  auto model = open_lab_model(a.model, "", a.tokenizer, stderr_progress_line("convert"));
  const uint32_t ctx = uint32_t(std::max(a.tokens, a.greedy) + 2);
  // The default reference is the project's: the CPU backend's exact float path.
  LabConfig ref_cfg = a.reference == "cpu" && a.reference_opts.empty()
                          ? reference_config()
                          : LabConfig::from_options(a.reference, a.threads, a.reference_opts);
  ref_cfg.threads = a.threads;
  LabConfig cand_cfg = LabConfig::from_options(a.backend, a.threads, a.opts);
  LoadedBackend ref = load_backend(ref_cfg, model, ctx, /*with_passport=*/false);
  LoadedBackend cand = load_backend(cand_cfg, model, ctx, /*with_passport=*/false);

  // Teacher forcing on the reference's greedy stream (a realistic, in-distribution sequence).
  const QualityThresholds th = float_weights(*model) ? QualityThresholds::float_weights() : QualityThresholds{};
  const int32_t bos = std::max(0, model->vocab().bos_id);
  std::vector<int32_t> ref_stream;
  const QualityReport q = greedy_forced_compare(*ref.backend, *cand.backend, bos, size_t(a.tokens), th, &ref_stream);

  // Greedy streams; --greedy 0 skips this part (random-weight models sit on near-ties). The
  // reference's stream goes on from the one it just made, whose positions its cache holds.
  const std::vector<int32_t> g_ref = a.greedy > 0 ? greedy_tokens(*ref.backend, ref_stream, a.greedy) : std::vector<int32_t>{};
  const std::vector<int32_t> g_cand = a.greedy > 0 ? greedy_tokens(*cand.backend, {bos}, a.greedy) : std::vector<int32_t>{};
  int first_diff = -1;
  for (size_t i = 0; i < g_ref.size() && first_diff < 0; ++i)
    if (g_ref[i] != g_cand[i]) first_diff = int(i);

  const bool pass = q.pass && first_diff < 0;
  if (a.json) {
    nlohmann::json j{{"model", a.model},          {"reference", ref_cfg.to_string()},
                     {"candidate", cand.name},    {"config", cand_cfg.to_string()},
                     {"positions", q.positions},  {"top1_agreement", q.top1_agreement},
                     {"rms_rel_error", q.rms_rel_error}, {"max_rel_error", q.max_rel_error},
                     {"mean_kl", q.mean_kl},      {"max_kl", q.max_kl},
                     {"quality_pass", q.pass},    {"failure", q.failure},
                     {"greedy_tokens", a.greedy}, {"greedy_first_difference", first_diff},
                     {"pass", pass}};
    std::cout << json_text(j, 2) << "\n";
  } else {
    std::printf("compare %s: %s (%s) against %s (%s)\n", a.model.c_str(), cand.name.c_str(),
                cand_cfg.to_string().c_str(), ref.name.c_str(), ref_cfg.to_string().c_str());
    std::printf("  teacher-forced, %d positions: %s\n", q.positions, q.summary().c_str());
    if (a.greedy == 0)
      std::printf("  greedy: not checked (--greedy 0)\n");
    else if (first_diff < 0)
      std::printf("  greedy, %d tokens: identical\n", a.greedy);
    else
      std::printf("  greedy, %d tokens: first difference at position %d (reference %d, candidate %d)\n", a.greedy,
                  first_diff, g_ref[size_t(first_diff)], g_cand[size_t(first_diff)]);
    std::printf("  %s\n", pass ? "PASS" : "FAIL");
  }
  set_exit_code(pass ? 0 : 1);
}

const CommandRegistration reg(44, [](CLI::App& root) {
  auto args = std::make_shared<Args>();
  CLI::App* c = root.add_subcommand(
      "compare", "Check a backend against a reference backend: teacher-forced logits and greedy tokens (exit 1 on fail)");
  add_model_argument(*c, args->model, args->tokenizer);
  c->add_option("--backend", args->backend, "Candidate backend: auto, cpu, cuda, vulkan")->capture_default_str();
  c->add_option("--reference", args->reference, "Reference backend")->capture_default_str();
  c->add_option("--tokens", args->tokens, "Teacher-forced positions")->capture_default_str()->check(CLI::Range(2, 1 << 16));
  c->add_option("--greedy", args->greedy, "Greedy tokens that must be identical (0 = skip)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 16));
  c->add_option("--threads", args->threads, threads_help("CPU threads (0 = all)"))
      ->capture_default_str()
      ->check(thread_count());
  c->add_option("--opt", args->opts, "Candidate's optimisation switch NAME=VALUE (repeatable)");
  c->add_option("--reference-opt", args->reference_opts,
                "Reference's switch NAME=VALUE (default for cpu: int8_activations=0, the exact float path)");
  c->add_flag("--json", args->json, "Print the result as JSON")->capture_default_str();
  c->callback([args] { run(*args); });
});

}  // namespace
}  // namespace p64::cli
