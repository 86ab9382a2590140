#include "support/device_fault_scenario.h"

namespace p64::test {

int64_t write_run_before_fault(Store& store, const std::string& backend) {
  RunBundle kept;
  kept.run.kind = RunKind::DecodeProxy;
  kept.run.backend = backend;
  kept.run.label = "before the fault";
  return store.write_run(kept);
}

DecodeProxyParams three_short_runs() {
  DecodeProxyParams p;
  p.decode_tokens = 8;
  p.prompt_tokens = 4;
  p.runs = 3;
  p.warmup = 0;
  p.warm_repeats = 0;
  return p;
}

}  // namespace p64::test
