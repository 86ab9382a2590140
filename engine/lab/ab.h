#pragma once
// A/B: two configurations of one model (or of two model files that share a vocabulary, e.g. two
// quantisations of one model), measured interleaved (A B A B ...) so drift (thermal,
// other load) hits both sides alike, then teacher-forced quality of each side against the CPU
// reference, then the verdict (verdict.h) and the optimisation history update.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/common/progress.h"
#include "engine/lab/decode_proxy.h"
#include "engine/lab/lab_config.h"
#include "engine/lab/quality_gate.h"
#include "engine/lab/verdict.h"

namespace p64 {
class Store;

struct AbParams {
  // Per side (>= 2). Five is the fewest with which the test (verdict.h) reaches p < 0.05 while
  // one run lands out of order; with 2-3 a verdict can only be inconclusive.
  int runs = 5;
  int warmup = 1;           // per side, untimed
  int decode_tokens = 32;
  int prompt_tokens = 32;
  int quality_tokens = 32;  // teacher-forced positions (prompt + A's greedy continuation)
  bool compare_reference = true;  // each side vs the reference; off: B vs A is the gate
  LabConfig reference = reference_config();  // what each side is judged against
  QualityThresholds thresholds;
  MachineProbe machine_probe = read_machine_sample;  // watches the measured runs (tests inject one)
};

struct AbSide {
  LabConfig config;
  std::string backend;  // resolved
  std::string model;    // the model's source (its file path) this side decoded
  Passport passport;
  double load_ms = 0;
  std::vector<SampleRecord> samples;  // side "a" or "b", rep = interleave index
  MinMedianMax decode_tok_s;
  BusyFlag busy;  // this side's CV, and the machine over the whole interleaved measurement
  std::optional<DecodeEnergy> energy;  // a side's decode energy per measured run, where NVML (CUDA) or RAPL (CPU) read it
  std::string energy_unavailable;      // why a CPU side has none
};

struct AbResult {
  AbParams params;
  AbSide a, b;
  // Over the measured runs of both sides; its GPU is B's when B runs on CUDA, else A's.
  MachineLoad machine;
  std::string switch_name;  // the switch judged (from --switch, or the one that differs)
  // The switch's value on each side: given in the config, else the backend's default.
  std::string switch_a_value, switch_b_value;
  // The quality gate judges each side against params.reference (the CPU's exact float path)
  // on that side's model: A's approximation is no yardstick for B. B vs A is how far apart the
  // two are, shown beside them; it is the gate only when the reference is not run
  // (params.compare_reference off and neither side is the reference).
  QualityReport b_vs_a;
  std::optional<QualityReport> a_vs_reference;  // nullopt when A is the reference (or it is not run)
  std::optional<QualityReport> b_vs_reference;  // nullopt when B is the reference (or it is not run)
  bool b_is_reference = false;
  std::string reference;                        // the reference config, "A (backend=cpu,...)" when A is it
  bool quality_pass() const { return quality_failure().empty(); }
  bool two_models = false;  // A and B ran different Model objects (files)
  bool same_model() const { return !two_models; }
  std::string quality_failure() const;  // B's failure of the gate; "" when it passes
  // B turns the judged switch off where A runs it on: the A/B asks whether to keep the switch,
  // so its verdict never lowers the switch's status (a slower B means "keep it on").
  bool b_turns_switch_off() const;
};

// Loads both configurations (and the CPU reference when needed) and measures them. The switch
// judged is judged_switch(a, b, switch_name) (lab_config.h): a named one A and B do not set
// differently is refused before anything loads.
AbResult run_ab(const LabConfig& a, const LabConfig& b, std::shared_ptr<const Model> model, const AbParams& params,
                std::string switch_name = {}, const ProgressFn& progress = {});
// A on model_a, B on model_b. Two different models must have the same vocabulary size (the
// quality gate compares logits token by token) and the verdict is then about the model, not a
// switch: naming one, or configs that differ in a switch, throws p64::Error (one change at a
// time). B is checked against the CPU reference on B's own model.
AbResult run_ab(const LabConfig& a, std::shared_ptr<const Model> model_a, const LabConfig& b,
                std::shared_ptr<const Model> model_b, const AbParams& params, std::string switch_name = {},
                const ProgressFn& progress = {});

// The verdict, given the previous one on this switch + model + device.
VerdictOutcome judge_ab(const AbResult& r, std::optional<Verdict> previous);

struct StoredAb {
  int64_t run_id = 0;
  VerdictOutcome outcome;
  std::optional<Verdict> previous;
};
// Looks up the previous verdict, judges, and writes the A/B run, its comparison and the
// optimisation history entry (evidence = this run) in one transaction. The run and comparison
// are filed under A's model; with `model_b` (B ran another model) that one is described in the
// store too and both are named in the run's config and summary.
StoredAb judge_and_store_ab(Store& store, const AbResult& r, const Model& model, const std::string& model_path,
                            const Model* model_b = nullptr, const std::string& model_b_path = {});

nlohmann::json ab_to_json(const AbResult& r, const VerdictOutcome& o);

}  // namespace p64
