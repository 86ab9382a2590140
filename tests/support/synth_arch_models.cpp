#include "support/synth_arch_models.h"

#include "engine/format/convert.h"
#include "engine/format/p64_reader.h"
#include "engine/runtime/cpu_backend.h"

namespace p64::test {

std::shared_ptr<const Model> synth_arch_model(const TempDir& dir, const std::string& preset, SynthQuant quant) {
  SynthOptions o;
  o.threads = 1;
  o.sync = false;
  o.weight_std = 0.125f;
  const std::string name = preset + "-" + std::string(synth_quant_name(quant));
  const std::string gguf = (dir / (name + ".gguf")).string(), p64 = (dir / (name + ".p64")).string();
  write_synth(plan_synth(synth_preset(preset), quant), gguf, o);
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

}  // namespace p64::test
