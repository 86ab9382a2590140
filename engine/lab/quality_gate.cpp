#include "engine/lab/quality_gate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "engine/common/error.h"
#include "engine/runtime/backend.h"

namespace p64 {
namespace {

// log(sum(exp(x))) in double, shifted by the max so large logits do not overflow.
double log_sum_exp(std::span<const float> x, double max_x) {
  double s = 0;
  for (float v : x) s += std::exp(static_cast<double>(v) - max_x);
  return max_x + std::log(s);
}

}  // namespace

QualityThresholds QualityThresholds::float_weights() {
  QualityThresholds t;
  t.max_rms_rel_error = 1e-3;
  t.max_position_rel_error = 5e-3;
  t.max_mean_kl = 1e-4;
  t.max_kl = 1e-3;
  return t;
}

void QualityAccumulator::add_row(std::span<const float> ref, std::span<const float> cand) {
  if (ref.size() != cand.size())
    throw Error("quality gate: logit rows differ in length (" + std::to_string(ref.size()) + " vs " +
                std::to_string(cand.size()) + ")");
  if (ref.empty()) throw Error("quality gate: empty logit row");
  ++positions_;

  size_t ref_top = 0, ref_second = ref.size() > 1 ? 1 : 0, cand_top = 0;
  if (ref.size() > 1 && ref[1] > ref[0]) std::swap(ref_top, ref_second);
  double ref_min = ref[0], ref_max = ref[0], cand_max = cand[0];
  double err_sq = 0, ref_sq = 0;
  bool finite = true;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double r = ref[i], c = cand[i];
    if (!std::isfinite(c)) finite = false;
    ref_min = std::min(ref_min, r);
    ref_max = std::max(ref_max, r);
    if (i >= 2) {
      if (r > ref[ref_top]) {
        ref_second = ref_top;
        ref_top = i;
      } else if (r > ref[ref_second]) {
        ref_second = i;
      }
    }
    if (c > cand[cand_top]) cand_top = i;
    cand_max = std::max(cand_max, c);
    err_sq += (c - r) * (c - r);
    ref_sq += r * r;
  }
  if (!finite) {
    // A NaN poisons every statistic below; record the row as a disagreement and stop here.
    finite_ = false;
    ++compared_;
    max_rel_ = INFINITY;
    kl_max_ = INFINITY;
    return;
  }

  err_sq_ += err_sq;
  ref_sq_ += ref_sq;
  const double row_rel = ref_sq > 0 ? std::sqrt(err_sq / ref_sq) : (err_sq > 0 ? INFINITY : 0.0);
  max_rel_ = std::max(max_rel_, row_rel);

  const double margin = ref.size() > 1 ? static_cast<double>(ref[ref_top]) - ref[ref_second] : INFINITY;
  const double range = ref_max - ref_min;
  if (!(margin <= tie_fraction_ * range)) {
    ++compared_;
    if (cand_top == ref_top) ++agree_;
  }

  // KL(p || q) = sum p (log p - log q) with log p = r - lse(r), log q = c - lse(c).
  const double lse_r = log_sum_exp(ref, ref_max), lse_c = log_sum_exp(cand, cand_max);
  double kl = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double logp = ref[i] - lse_r;
    const double logq = cand[i] - lse_c;
    kl += std::exp(logp) * (logp - logq);
  }
  kl = std::max(kl, 0.0);  // rounding can make an exact match come out at -1e-17
  kl_sum_ += kl;
  kl_max_ = std::max(kl_max_, kl);
}

QualityReport QualityAccumulator::finish(const QualityThresholds& t) const {
  QualityReport r;
  r.positions = positions_;
  r.compared_positions = compared_;
  r.top1_agreement = compared_ > 0 ? static_cast<double>(agree_) / compared_ : 1.0;
  r.rms_rel_error = finite_ ? (ref_sq_ > 0 ? std::sqrt(err_sq_ / ref_sq_) : (err_sq_ > 0 ? INFINITY : 0.0)) : INFINITY;
  r.max_rel_error = max_rel_;
  r.mean_kl = finite_ ? (positions_ > 0 ? kl_sum_ / positions_ : 0.0) : INFINITY;
  r.max_kl = kl_max_;
  r.finite = finite_;

  char buf[160];
  auto fail = [&](const char* what, double got, const char* op, double limit) {
    if (!r.failure.empty()) r.failure += "; ";
    std::snprintf(buf, sizeof buf, "%s %.3g %s %.3g", what, got, op, limit);
    r.failure += buf;
  };
  if (positions_ == 0) r.failure = "no positions compared";
  if (!finite_) fail("non-finite candidate logits, rms", r.rms_rel_error, ">", t.max_rms_rel_error);
  else {
    if (r.rms_rel_error > t.max_rms_rel_error) fail("rms_rel_error", r.rms_rel_error, ">", t.max_rms_rel_error);
    if (r.max_rel_error > t.max_position_rel_error)
      fail("max_rel_error", r.max_rel_error, ">", t.max_position_rel_error);
    if (r.mean_kl > t.max_mean_kl) fail("mean_kl", r.mean_kl, ">", t.max_mean_kl);
    if (r.max_kl > t.max_kl) fail("max_kl", r.max_kl, ">", t.max_kl);
  }
  if (r.top1_agreement < t.min_top1_agreement)
    fail("top1_agreement", r.top1_agreement, "<", t.min_top1_agreement);
  r.pass = r.failure.empty();
  return r;
}

std::string QualityReport::summary() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s top1 %.3f (%d/%d compared, %d near-tie) rms %.2e max %.2e KL mean %.2e max %.2e",
                pass ? "PASS" : "FAIL", top1_agreement, compared_positions, positions,
                positions - compared_positions, rms_rel_error, max_rel_error, mean_kl, max_kl);
  std::string s = buf;
  if (!pass) s += " (" + failure + ")";
  return s;
}

QualityReport compare_logits(std::span<const float> reference, std::span<const float> candidate, size_t n_vocab,
                             const QualityThresholds& thresholds) {
  if (n_vocab == 0) throw Error("quality gate: n_vocab is 0");
  if (reference.size() != candidate.size() || reference.size() % n_vocab != 0)
    throw Error("quality gate: logit buffers of " + std::to_string(reference.size()) + " and " +
                std::to_string(candidate.size()) + " floats are not whole rows of " + std::to_string(n_vocab));
  QualityAccumulator acc(thresholds);
  for (size_t off = 0; off < reference.size(); off += n_vocab)
    acc.add_row(reference.subspan(off, n_vocab), candidate.subspan(off, n_vocab));
  return acc.finish(thresholds);
}

namespace {

// Feeds token_at(p, reference row p - 1) at position p = 0 .. positions - 1 to both backends
// through decode_logits and compares the rows.
template <class NextToken>
QualityReport compare_positions(Backend& reference, Backend& candidate, size_t positions, NextToken token_at,
                                const QualityThresholds& thresholds) {
  if (positions == 0) throw Error("quality gate: no tokens to compare on");
  const uint32_t ctx = std::min(reference.max_context(), candidate.max_context());
  if (positions > ctx)
    throw Error("quality gate: " + std::to_string(positions) + " tokens exceed the KV cache of " +
                std::to_string(ctx) + " positions");
  QualityAccumulator acc(thresholds);
  std::vector<float> ref_row;
  for (size_t p = 0; p < positions; ++p) {
    const auto pos = static_cast<int32_t>(p);
    const int32_t token = token_at(p, std::span<const float>(ref_row));
    // The span is valid only until the backend's next call, so the reference row is copied.
    std::span<const float> r = reference.decode_logits(token, pos);
    ref_row.assign(r.begin(), r.end());
    std::span<const float> c = candidate.decode_logits(token, pos);
    acc.add_row(ref_row, c);
  }
  return acc.finish(thresholds);
}

}  // namespace

QualityReport teacher_forced_compare(Backend& reference, Backend& candidate, std::span<const int32_t> tokens,
                                     const QualityThresholds& thresholds) {
  return compare_positions(
      reference, candidate, tokens.size(), [&](size_t p, std::span<const float>) { return tokens[p]; }, thresholds);
}

QualityReport greedy_forced_compare(Backend& reference, Backend& candidate, int32_t first_token, size_t positions,
                                    const QualityThresholds& thresholds, std::vector<int32_t>* stream) {
  auto argmax = [](std::span<const float> row) {
    return static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
  };
  std::vector<int32_t> fed;
  const QualityReport report = compare_positions(
      reference, candidate, positions,
      [&](size_t p, std::span<const float> previous_row) {
        fed.push_back(p == 0 ? first_token : argmax(previous_row));
        return fed.back();
      },
      thresholds);
  if (stream) {
    fed.push_back(argmax(reference.logits()));
    *stream = std::move(fed);
  }
  return report;
}

}  // namespace p64
