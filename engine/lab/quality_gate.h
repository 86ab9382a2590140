#pragma once
// The quality gate: a candidate backend (or a candidate configuration of one) is checked
// against a reference on the same model by teacher forcing: both are fed the same tokens,
// position by position, and their logit rows are compared. Speed without coherence is failure,
// so every A/B verdict and every GPU backend test goes through this gate.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>
#include <string>

namespace p64 {
class Backend;

// Pass/fail limits. The defaults are for quantized weights run by two different kernels
// (different accumulation order, fp16/int8 activations): a candidate is allowed a small,
// diffuse logit error but must pick the same token wherever the reference is not at a tie.
// docs/measurement.md states the same numbers; change both together.
struct QualityThresholds {
  // RMS(candidate - reference) / RMS(reference) over every compared logit.
  double max_rms_rel_error = 1e-2;
  // The same ratio for the worst single position; catches one broken position hidden in a mean.
  double max_position_rel_error = 5e-2;
  // Share of compared positions whose argmax agrees.
  double min_top1_agreement = 0.99;
  // A position is a near-tie (left out of top-1 agreement only) when the reference's top-2
  // margin is <= near_tie_fraction x (max - min) of its logit row: both answers are right.
  double near_tie_fraction = 1e-3;
  // KL(reference || candidate) of the softmax distributions, in nats.
  double max_mean_kl = 5e-3;
  double max_kl = 5e-2;

  // Tighter limits for float weights (F32/F16/BF16) where only summation order differs.
  static QualityThresholds float_weights();
};

struct QualityReport {
  int positions = 0;           // rows compared
  int compared_positions = 0;  // rows counted in top1_agreement (near-ties excluded)
  double top1_agreement = 0;   // in [0, 1]; 1 when compared_positions == 0
  double rms_rel_error = 0;    // RMS(err) / RMS(reference) over all logits
  double max_rel_error = 0;    // worst position's RMS(err) / RMS(reference row)
  double mean_kl = 0;          // nats
  double max_kl = 0;           // nats
  bool finite = true;          // false when the candidate produced NaN or Inf
  bool pass = false;
  std::string failure;         // which limit failed (empty on pass)

  // One line, e.g. "PASS top1 1.000 (31/32, 1 near-tie) rms 2.1e-04 max 8.0e-04 KL 1e-07/3e-07".
  std::string summary() const;
};

// Accumulates row pairs one position at a time, so long teacher-forced runs need no storage.
class QualityAccumulator {
 public:
  // Only near_tie_fraction is used while adding rows; finish() applies the rest.
  explicit QualityAccumulator(const QualityThresholds& thresholds = {})
      : tie_fraction_(thresholds.near_tie_fraction) {}
  // Both rows have the vocabulary's length; throws p64::Error when they differ.
  void add_row(std::span<const float> reference, std::span<const float> candidate);
  QualityReport finish(const QualityThresholds& thresholds) const;

 private:
  double tie_fraction_;
  int positions_ = 0;
  int compared_ = 0;
  int agree_ = 0;
  double err_sq_ = 0;
  double ref_sq_ = 0;
  double max_rel_ = 0;
  double kl_sum_ = 0;
  double kl_max_ = 0;
  bool finite_ = true;
};

// Compares logit rows laid end to end (row r is [r * n_vocab, (r + 1) * n_vocab)).
QualityReport compare_logits(std::span<const float> reference, std::span<const float> candidate,
                             size_t n_vocab, const QualityThresholds& thresholds = {});

// Both backends already loaded with the same model. Feeds tokens[p] at position p = 0, 1, ...
// through decode_logits on each and compares the rows. Overwrites both KV caches from 0.
QualityReport teacher_forced_compare(Backend& reference, Backend& candidate, std::span<const int32_t> tokens,
                                     const QualityThresholds& thresholds = {});

// The same on the reference's own greedy stream, made as it goes: first_token at position 0, then
// the argmax (lowest id on ties) of the reference's previous row. One reference pass, not two.
// `stream`, when given, receives that greedy stream: the positions' tokens and then the argmax of
// the last row (positions + 1 ids), so a longer greedy run can go on from the reference's cache.
QualityReport greedy_forced_compare(Backend& reference, Backend& candidate, int32_t first_token, size_t positions,
                                    const QualityThresholds& thresholds = {}, std::vector<int32_t>* stream = nullptr);

}  // namespace p64
