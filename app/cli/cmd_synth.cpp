// p64 synth: a GGUF of a real model's shape with random weights, for benchmarks on machines
// that cannot download models.
#include <chrono>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "app/cli/command_registry.h"
#include "app/cli/option_checks.h"
#include "engine/format/synth.h"

namespace p64::cli {
namespace {

struct SynthArgs {
  std::string preset = "tiny";
  std::string quant = "Q4_K_M";
  std::string out;
  uint64_t seed = 1;
  float weight_std = 0.02f;
  std::string vocab;
  int threads = 0;
  bool quiet = false;
  bool force = false;
};

void run_synth(const SynthArgs& a) {
  const SynthPlan plan = plan_synth(synth_preset(a.preset), synth_quant_from_name(a.quant));
  SynthOptions opt;
  opt.seed = a.seed;
  opt.weight_std = a.weight_std;
  opt.vocab_path = a.vocab;
  opt.threads = a.threads;
  opt.output.replace_existing = a.force;
  const auto t0 = std::chrono::steady_clock::now();
  int last_pct = -1;
  if (!a.quiet)
    opt.progress = [&](double f, std::string_view what) {
      const int pct = static_cast<int>(f * 100.0);
      if (pct != last_pct) {
        last_pct = pct;
        std::fprintf(stderr, "\r%s: %3d%%", std::string(what).c_str(), pct);
        std::fflush(stderr);
      }
      return true;
    };
  const SynthResult r = write_synth(plan, a.out, opt);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!a.quiet) std::fprintf(stderr, "\n");
  std::printf("%s: %s %s, %zu tensors, %llu bytes (%llu of tensor data), %.1f s\n", a.out.c_str(), a.preset.c_str(),
              a.quant.c_str(), r.tensors, static_cast<unsigned long long>(r.file_bytes),
              static_cast<unsigned long long>(r.tensor_bytes), secs);
}

const CommandRegistration reg(60, [](CLI::App& root) {
  auto args = std::make_shared<SynthArgs>();
  CLI::App* c = root.add_subcommand("synth", "Write a GGUF v3 model of a preset's shape with random weights");
  std::string presets;
  for (const auto& n : synth_preset_names()) presets += (presets.empty() ? "" : ", ") + n;
  c->add_option("--preset", args->preset, "model shape: " + presets)->capture_default_str();
  c->add_option("--quant", args->quant, "tensor-type mix: Q4_K_M, Q8_0, F16 or F32")->capture_default_str();
  c->add_option("-o,--output", args->out, "output .gguf path (a new file unless --force)")->required();
  c->add_option("--seed", args->seed, "random seed (same seed, same bytes)")->capture_default_str();
  c->add_option("--weight-std", args->weight_std,
                "spread of the random matrix values (a trained model's 0.02; 1/sqrt(width) for greedy-text comparisons)")
      ->capture_default_str()
      ->check(finite_number(0, false, 1, true));
  c->add_option("--vocab", args->vocab, "Llama 3 tokenizer (tiktoken llama3_tokenizer.model) to embed instead of a synthetic vocabulary")
      ->capture_default_str();
  c->add_option("--threads", args->threads, threads_help("worker threads (0 = all cores)"))
      ->capture_default_str()
      ->check(thread_count());
  c->add_flag("-q,--quiet", args->quiet, "no progress output")->capture_default_str();
  c->add_flag("--force", args->force, "replace an existing output file")->capture_default_str();
  c->callback([args] { run_synth(*args); });
});

}  // namespace
}  // namespace p64::cli
