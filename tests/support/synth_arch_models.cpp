#include "support/synth_arch_models.h"

#include <algorithm>

#include "engine/format/convert.h"
#include "engine/model/architecture.h"
#include "engine/format/p64_reader.h"
#include "backends/cpu/cpu_backend.h"

namespace p64::test {

std::shared_ptr<const Model> synth_arch_model(const TempDir& dir, const std::string& preset, SynthQuant quant) {
  SynthOptions o;
  o.threads = 1;
  o.sync = false;
  o.weight_std = 0.125f;
  const std::string name = preset + "-" + std::string(synth_quant_name(quant));
  const std::string gguf = (dir / (name + ".gguf")).string(), p64 = (dir / (name + ".p64")).string();
  HParams hp = synth_preset(preset);
  // tiny-gemma2's 26 layers are there for llama.cpp's loader, which no backend test involves; six
  // (tiny-gemma3's count) keep its local/global alternation at under a quarter of the time
  // (lavapipe runs these in CI).
  hp.n_layer = std::min(hp.n_layer, 6u);
  write_synth(plan_synth(hp, quant), gguf, o);
  convert_to_p64(gguf, p64, {});
  return open_p64(p64);
}

std::unique_ptr<Backend> cpu_float_reference(const std::shared_ptr<const Model>& model) {
  auto cpu = make_cpu_backend();
  BackendOptions o;
  o.max_context = 256;
  o.switches["int8_activations"] = "0";
  cpu->load(model, o);
  return cpu;
}

std::unique_ptr<Backend> loaded_for_comparison(std::unique_ptr<Backend> backend, const std::shared_ptr<const Model>& model,
                                               const std::map<std::string, std::string>& switches) {
  BackendOptions o;
  o.max_context = 256;
  o.switches = switches;
  backend->load(model, o);
  return backend;
}

std::string arch_case_name(const ::testing::TestParamInfo<ArchCase>& info) {
  std::string s = std::string(info.param.preset) + "_" + std::string(synth_quant_name(info.param.quant));
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

std::string describe_switches(const std::map<std::string, std::string>& switches) {
  std::string s;
  for (const auto& [k, v] : switches) s += k + "=" + v + " ";
  return s.empty() ? "defaults " : s;
}

std::vector<int32_t> greedy_from_token_one(Backend& backend, int positions) {
  std::vector<int32_t> tokens = {1};
  for (int pos = 0; pos < positions; ++pos) tokens.push_back(backend.decode_argmax(tokens.back(), pos));
  return tokens;
}

PrefillOutcome prefill_then_decode(Backend& backend, const std::vector<int32_t>& tokens, int32_t then) {
  PrefillOutcome o;
  o.next = backend.prefill(tokens, 0);
  o.logits.assign(backend.logits().begin(), backend.logits().end());
  const auto after = backend.decode_logits(then < 0 ? o.next : then, int(tokens.size()));
  o.logits_after_next.assign(after.begin(), after.end());
  return o;
}

void expect_unrun_architectures_refused(Backend& gpu, const std::string& backend_name) {
  const std::vector<std::string> decoded = {"llama", "qwen2", "qwen3", "phi3", "gemma2", "gemma3"};
  std::string runs;
  for (const Architecture& a : architectures())
    if (gpu.runs_architecture(a.name)) runs += (runs.empty() ? "" : ", ") + std::string(a.name);
  TempDir dir;
  for (const Architecture& a : architectures()) {
    const std::string arch(a.name);
    if (gpu.runs_architecture(arch)) {
      EXPECT_NE(std::find(decoded.begin(), decoded.end(), arch), decoded.end()) << arch << " is claimed, not tested";
      continue;
    }
    const auto m = synth_arch_model(dir, "tiny-" + arch, SynthQuant::Q8_0);
    BackendOptions o;
    o.max_context = 64;
    const std::string e = error_of([&] { gpu.load(m, o); });
    EXPECT_EQ(e, m->source() + ": a " + arch + " model; the " + backend_name + " backend runs " + runs +
                     " (the cpu backend runs " + arch + ")");
  }
}

}  // namespace p64::test
