#pragma once
// What the first-start offer does, on a worker thread: a small synthetic model (a synth preset,
// random weights) written as GGUF and converted to P64 beside it, then measured on the CPU backend
// and stored: a decode-proxy (Runs, Roofline, Scoreboard), a timeline (Timeline) and a short A/B of
// one thread against two (A/B; threads are not a switch, so no optimisation's history changes).
#include <cstdint>
#include <string>

#include "engine/common/progress.h"

namespace p64 {
class Store;
}

namespace p64::ui {

struct FirstStartPlan {
  std::string preset = "tiny";  // the smallest preset: 64 wide, 2 layers
  std::string quant = "Q8_0";
  std::string gguf_path;        // the .p64 goes beside it
  std::string store_path;
};

struct FirstStartOutcome {
  std::string p64_path;
  int64_t decode_proxy_run = 0, timeline_run = 0, ab_run = 0;
};

// Throws p64::Cancelled when progress returns false, p64::Error on a failure (naming the step).
FirstStartOutcome run_first_start(const FirstStartPlan& plan, const ProgressFn& progress);

// True when the store holds a run measured here (the plan's imported history does not count).
bool store_has_own_runs(const Store& store);

}  // namespace p64::ui
