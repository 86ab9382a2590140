// p64 convert: GGUF, llama2.c or a Hugging Face folder (or a P64) to a P64 container.
#include <chrono>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "app/cli/command_registry.h"
#include "engine/common/error.h"
#include "engine/format/convert.h"

namespace p64::cli {
namespace {

struct ConvertArgs {
  std::string input;
  std::string output;
  std::string tokenizer;
  bool soa = false, cpu_rows = false, plain = false;
  std::string quant;
  bool quiet = false;
  bool force = false;
};

void run_convert(const ConvertArgs& a) {
  ConvertOptions o;
  o.tokenizer_path = a.tokenizer;
  o.output.replace_existing = a.force;
  using Layout = ConvertOptions::Layout;
  o.layout = a.soa ? Layout::Soa : a.cpu_rows ? Layout::CpuRows : a.plain ? Layout::Plain : Layout::Keep;
  if (!a.quant.empty()) {
    auto t = dtype_from_name(a.quant);
    if (!t) throw Error("convert: unknown --quant type '" + a.quant + "'");
    o.quant = *t;
  }
  const auto t0 = std::chrono::steady_clock::now();
  int last = -1;
  ProgressFn progress;
  if (!a.quiet)
    progress = [&](double f, std::string_view what) {
      const int pct = static_cast<int>(f * 100.0);
      if (pct != last) {
        last = pct;
        std::fprintf(stderr, "\r%3d%% %-48.48s", pct, std::string(what).c_str());
        std::fflush(stderr);
      }
      return true;
    };
  const ConvertResult r = convert_to_p64(a.input, a.output, o, progress);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!a.quiet) std::fprintf(stderr, "\n");
  std::printf("%s: from %s, %zu tensors (%zu quantized, %zu repacked), %llu bytes, flags %s, %.2f s\n", a.output.c_str(),
              r.input_kind.c_str(), r.tensors, r.quantized, r.repacked, static_cast<unsigned long long>(r.write.file_size),
              p64_flags_text(r.write.flags).c_str(), secs);
  if (!r.write.certification_problem.empty())
    std::printf("not certified for the decode profile: %s\n", r.write.certification_problem.c_str());
}

const CommandRegistration reg(10, [](CLI::App& root) {
  auto a = std::make_shared<ConvertArgs>();
  CLI::App* c = root.add_subcommand("convert", "Convert a GGUF, llama2.c checkpoint or Hugging Face folder to .p64");
  c->add_option("input", a->input, "input: .gguf, llama2.c .bin, Hugging Face folder, or .p64")->required();
  c->add_option("output", a->output, "output .p64 path (a new file unless --force; never the input)")->required();
  c->add_option("--tokenizer", a->tokenizer, "llama2.c tokenizer file (required for .bin checkpoints); tokenizer.json for HF")
      ->capture_default_str();
  // Without a layout flag, packed inputs (SoA, row-interleaved) keep their form.
  auto* soa = c->add_flag("--soa", a->soa, "store Q4_K, Q6_K and Q8_0 matrices in their SoA forms (the GPU backends' layout)");
  auto* cpu_rows = c->add_flag("--cpu-rows", a->cpu_rows,
                               "store Q8_0, Q5_0, Q4_K and Q6_K matrices 16 rows interleaved (Q8_0_R16 ...; the CPU backend's fast layout; "
                               "matrices whose rows are not whole groups stay Q8_0)");
  auto* plain = c->add_flag("--plain", a->plain, "store every matrix in its plain GGUF block form (undo --soa / --cpu-rows)");
  soa->excludes(cpu_rows)->excludes(plain);
  cpu_rows->excludes(plain);
  c->add_option("--quant", a->quant, "quantize float matrices to this type (e.g. Q4_K, Q6_K, Q8_0, F16); empty keeps them")
      ->capture_default_str();
  c->add_flag("-q,--quiet", a->quiet, "no progress line")->capture_default_str();
  c->add_flag("--force", a->force, "replace an existing output file")->capture_default_str();
  c->callback([a] { run_convert(*a); });
});

}  // namespace
}  // namespace p64::cli
