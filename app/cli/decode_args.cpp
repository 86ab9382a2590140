#include "app/cli/decode_args.h"

#include <cstdio>
#include <limits>

#include <CLI/CLI.hpp>

#include "app/cli/option_checks.h"
#include "engine/lab/lab_run.h"
#include "engine/lab/lab_config.h"
#include "engine/quant/dtype.h"
#include "engine/runtime/backend_registry.h"

namespace p64::cli {

void add_decode_options(CLI::App& cmd, DecodeArgs& a) {
  cmd.add_option("--model", a.model, kModelHelp)->required();
  cmd.add_option("--tokenizer", a.tokenizer, "llama2.c tokenizer file, for a llama2.c checkpoint");
  cmd.add_option("--backend", a.backend, "Backend: auto (cuda > vulkan > cpu), cpu, cuda, vulkan")->capture_default_str();
  cmd.add_option("--threads", a.threads, threads_help("CPU threads (0 = all)"))->capture_default_str()->check(thread_count());
  cmd.add_option("--ctx", a.max_context, "KV cache positions, capped by the model's trained context")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1u << 24));
  cmd.add_option("--opt", a.opts, "Backend optimisation switch NAME=VALUE (repeatable)");
  SamplerSettings& s = a.sampler;
  cmd.add_option("--temp", s.temperature, "Temperature; 0 = greedy (the backend's argmax)")
      ->capture_default_str()
      ->check(finite_number(0, true));
  cmd.add_option("--top-k", s.top_k, "Keep the k most likely tokens (0 = off)")
      ->capture_default_str()
      ->check(CLI::Range(0, std::numeric_limits<int>::max()));
  cmd.add_option("--top-p", s.top_p, "Nucleus cut (1 = off)")->capture_default_str()->check(finite_number(0, false, 1, true));
  cmd.add_option("--min-p", s.min_p, "Drop tokens below min-p x the top probability (0 = off)")
      ->capture_default_str()
      ->check(finite_number(0, true, 1, true));
  cmd.add_option("--repeat-penalty", s.repeat_penalty, "Repetition penalty (1 = off)")
      ->capture_default_str()
      ->check(finite_number(0, false));
  cmd.add_option("--repeat-last-n", s.repeat_last_n, "Recent tokens the penalty looks at (-1 = all)")
      ->capture_default_str()
      ->check(CLI::Range(-1, std::numeric_limits<int>::max()));
  cmd.add_option("--seed", s.seed, "Sampling seed")->capture_default_str();
}

void add_model_argument(CLI::App& cmd, std::string& model, std::string& tokenizer) {
  cmd.add_option("model", model, kModelHelp)->required();
  cmd.add_option("--tokenizer", tokenizer, "llama2.c tokenizer file, for a llama2.c checkpoint");
}

OpenedSession open_session(const DecodeArgs& a) {
  const LabConfig config = LabConfig::from_options(a.backend, a.threads, a.opts);
  OpenedSession o;
  // A GGUF / llama2.c / HF input is converted for the backend that will run it; a .p64 in plain
  // blocks gets a hint when the CPU would read it faster row-interleaved.
  const bool cpu_rows = conversion_layout_for(config.backend) == ConvertOptions::Layout::CpuRows;
  o.model = open_lab_model(a.model, config.backend, a.tokenizer);
  if (cpu_rows) {
    int plain = 0;
    for (const TensorView& t : o.model->tensors())
      plain += dtype_interleaved_for(t.dtype, t.row_length(), t.rows()) != t.dtype;
    if (plain > 0)
      std::fprintf(stderr, "note: %s has %d matrices in plain blocks; `p64 convert %s OUT.p64 --cpu-rows` lays them out "
                   "for this CPU's faster kernels\n", a.model.c_str(), plain, a.model.c_str());
  }
  SessionOptions so;
  so.backend = config.backend;
  so.threads = config.threads;
  so.max_context = a.max_context;
  so.switches = config.switches;
  o.session = Session::create(o.model, so);
  return o;
}

}  // namespace p64::cli
