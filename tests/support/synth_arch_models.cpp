#include "support/synth_arch_models.h"

#include <algorithm>

#include "engine/format/convert.h"
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

}  // namespace p64::test
