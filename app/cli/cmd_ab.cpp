// p64 ab: interleaved A/B of two configurations with quality gate and the plan's verdict.
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/cli/command_registry.h"
#include "app/cli/decode_args.h"
#include "app/cli/progress_line.h"
#include "engine/lab/experiment.h"
#include "engine/lab/lab_run.h"
#include "engine/lab/store.h"
#include "engine/lab/store_text.h"

namespace p64::cli {
namespace {

struct Args {
  std::string model;
  std::string tokenizer;  // llama2.c checkpoints only
  std::string model_b;  // empty: B runs the same model as A
  std::string a = "backend=cpu";
  std::string b;
  std::string switch_name;
  int runs = AbParams{}.runs;
  int warmup = 1;
  int tokens = 32;
  int prompt_tokens = 32;
  int quality_tokens = 32;
  bool json = false;
  std::string db = default_store_path();
  bool no_store = false;
};

void print_side(const char* label, const AbSide& s) {
  std::printf("  %-2s %-44s %9.2f %9.2f %9.2f %8.2f %6.1f%%  [", label, s.config.to_string().c_str(),
              s.decode_tok_s.median, s.decode_tok_s.min, s.decode_tok_s.max, s.decode_tok_s.stddev,
              100 * s.decode_tok_s.cv);
  for (size_t i = 0; i < s.samples.size(); ++i) std::printf("%s%.2f", i ? " " : "", s.samples[i].decode_tok_s);
  std::printf("]\n");
}

void run(const Args& a) {
  AbExperimentRequest req;
  req.model_path = a.model;
  req.tokenizer_path = a.tokenizer;
  req.model_path_b = a.model_b;
  req.a = LabConfig::parse(a.a);
  req.b = LabConfig::parse(a.b);
  req.switch_name = a.switch_name;
  req.params.runs = a.runs;
  req.params.warmup = a.warmup;
  req.params.decode_tokens = a.tokens;
  req.params.prompt_tokens = a.prompt_tokens;
  req.params.quality_tokens = a.quality_tokens;
  if (!a.no_store) req.store_path = a.db;
  const AbExperimentOutcome out =
      run_ab_experiment(req, {stderr_progress_line("convert"), {}, stderr_progress_line("ab")});
  const AbResult& r = out.result;
  const StoredAb& stored = out.stored;
  const VerdictOutcome& o = stored.outcome;
  if (a.json) {
    nlohmann::json j = ab_to_json(r, o);
    j["run_id"] = stored.run_id;
    j["previous_verdict"] = stored.previous ? std::string(to_string(*stored.previous)) : std::string();
    std::cout << json_text(j, 2) << "\n";
    return;
  }
  if (!r.same_model()) std::printf("A on %s, B on %s\n", a.model.c_str(), a.model_b.c_str());
  std::printf("A/B %s  (%d runs each, interleaved ABAB..., %d decode tokens)\n", a.model.c_str(), a.runs, a.tokens);
  std::printf("  %-2s %-44s %9s %9s %9s %8s %7s  %s\n", "", "config", "median", "min", "max", "± stddev", "CV",
              "decode tok/s per run");
  print_side("A", r.a);
  print_side("B", r.b);
  std::printf("\n  B/A %.3f [%.3f-%.3f]  (%+.1f%%)\n", o.ratio_median, o.ratio_min, o.ratio_max,
              100 * (o.ratio_median - 1));
  std::printf("  test: %s\n", describe_test(o).c_str());
  for (const auto& [side, busy] : {std::pair{"A", &r.a.busy}, std::pair{"B", &r.b.busy}})
    std::printf("  machine during %s: %s\n", side, busy_line(*busy).c_str());
  if (r.machine.gpu) std::printf("  GPU during A/B: %s\n", gpu_line(*r.machine.gpu).c_str());
  for (const auto& [side, s] : {std::pair{"A", &r.a}, std::pair{"B", &r.b}})
    if (s->energy && s->energy->tok_per_j.n > 0)
      std::printf("  decode energy %s: %s tok/J (%s)\n", side, format_min_median_max(s->energy->tok_per_j, 2).c_str(),
                  s->energy->source.c_str());
  auto gate_line = [&](const char* side, const std::optional<QualityReport>& q, bool is_reference) {
    if (q) std::printf("  quality %s vs reference: %s\n", side, q->summary().c_str());
    else if (is_reference) std::printf("  quality %s vs reference: %s is the reference\n", side, r.reference.c_str());
    else std::printf("  quality %s vs reference: not run\n", side);
  };
  gate_line("A", r.a_vs_reference, !r.a_vs_reference && r.reference.rfind("A (", 0) == 0);
  gate_line("B", r.b_vs_reference, r.b_is_reference);
  // With one side the reference, B vs A is the other side's line above.
  if (r.a_vs_reference.has_value() == r.b_vs_reference.has_value())
    std::printf("  quality B vs A (%s): %s\n", r.b_vs_reference ? "how far apart, not the gate" : "the gate",
                r.b_vs_a.summary().c_str());
  const char* no_switch = r.same_model() ? "(none: configs differ in more than one)" : "(none: A and B run different models)";
  std::printf("  switch: %s  previous verdict: %s\n", r.switch_name.empty() ? no_switch : r.switch_name.c_str(),
              stored.previous ? std::string(to_string(*stored.previous)).c_str() : "none");
  std::printf("\n  VERDICT: %s — %s\n", std::string(to_string(o.verdict)).c_str(), o.reason.c_str());
  if (stored.run_id) std::printf("  stored as run %lld in %s\n", static_cast<long long>(stored.run_id), out.store_path.c_str());
}

const CommandRegistration reg(42, [](CLI::App& root) {
  auto args = std::make_shared<Args>();
  CLI::App* c = root.add_subcommand("ab", "Interleaved A/B of two configurations with quality gate and verdict");
  add_model_argument(*c, args->model, args->tokenizer);
  c->add_option("--model-b", args->model_b, "Model file B runs (default: the same as A; same vocabulary)")
      ->check(CLI::ExistingFile);
  c->add_option("--a", args->a, "Config A, e.g. \"backend=cpu\"")->capture_default_str();
  c->add_option("--b", args->b, "Config B, e.g. \"backend=cpu,opt.kv_f16=1\"")->required();
  c->add_option("--switch", args->switch_name,
                "Switch the verdict is about; A and B must set it differently (default: the one switch that differs)");
  c->add_option("--runs", args->runs, "Measured runs per side (>= 2; the test needs 4 or more to reach p < 0.05)")->capture_default_str()->check(CLI::Range(2, 1000));
  c->add_option("--warmup", args->warmup, "Untimed runs per side first")->capture_default_str();
  c->add_option("--tokens", args->tokens, "Decode steps per run")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  c->add_option("--prompt-tokens", args->prompt_tokens, "Prompt length")->capture_default_str();
  c->add_option("--quality-tokens", args->quality_tokens, "Teacher-forced positions for the quality gate")
      ->capture_default_str();
  c->add_flag("--json", args->json, "Print the result as JSON")->capture_default_str();
  c->add_option("--db", args->db, "Lab store (SQLite)")->capture_default_str();
  c->add_flag("--no-store", args->no_store, "Do not store (the verdict then ignores history)")->capture_default_str();
  c->callback([args] { run(*args); });
});

}  // namespace
}  // namespace p64::cli
