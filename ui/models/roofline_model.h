#pragma once
// Decode runs placed on the roofline: each run's achieved effective GB/s (bytes read per token
// × tok/s) against the measured read bandwidth of the passport it ran with, and its prefill and
// decode FLOP/s against arithmetic intensity and the compute ceiling. The table lists every stored
// decode-proxy run that has the decode figures; checked rows are the ones the charts draw.
#include <QAbstractTableModel>
#include <QSet>
#include <QString>

#include <optional>
#include <vector>

#include "engine/lab/store_types.h"
#include "engine/runtime/passport.h"

namespace p64::ui {

struct RooflinePoint {
  qint64 run_id = 0;
  QString label;   // "#12 cpu threads=1" — what the chart writes beside the point
  QString model, backend, device;
  double tok_s = 0;              // decode median
  double bytes_per_token = 0;    // weights + mean KV read per decode step
  double effective_gbs = 0;      // decode median
  double measured_read_gbs = 0;  // the passport's ceiling (0 = not measured)
  double share() const { return measured_read_gbs > 0 ? effective_gbs / measured_read_gbs : 0; }
  QString tag() const { return QString("#%1").arg(run_id); }  // the charts' legends name runs by it

  // The compute roofline; 0 where the run lacks a figure.
  int prompt_tokens = 0;
  double prefill_tok_s = 0;        // median
  double decode_flops = 0;         // one decode step
  double prefill_flops = 0;        // the whole prompt
  double prefill_bytes = 0;        // the least a prefill reads: weights once, the prompt's KV
  QString flops_source;            // how the FLOPs were counted
  double compute_ceiling = 0;      // FLOP/s; 0 = none
  QString compute_ceiling_source;  // where it came from, or why there is none
  double prefill_flop_s() const { return prompt_tokens > 0 ? prefill_flops * prefill_tok_s / prompt_tokens : 0; }
  double prefill_intensity() const { return prefill_bytes > 0 ? prefill_flops / prefill_bytes : 0; }
  double decode_flop_s() const { return decode_flops * tok_s; }
  double decode_intensity() const { return bytes_per_token > 0 ? decode_flops / bytes_per_token : 0; }
  bool has_prefill() const { return prefill_flop_s() > 0 && prefill_intensity() > 0; }
};

// The runs whose summary has decode tok/s and effective GB/s; bytes per token is taken from the
// summary or, when absent, from GB/s ÷ tok/s. FLOPs come from the summary (decode-proxy records
// them) or else from the stored `model`'s hyperparameters; the compute ceiling from the summary or
// else from the run's `passport` (measured on a CPU; an older CPU passport's nominal figure needs a
// clock in its model name).
std::optional<RooflinePoint> roofline_point(const RunRecord& run, const QString& model_name = {},
                                            const ModelRecord* model = nullptr, const Passport* passport = nullptr);

// A compute ceiling's origin in a word for tables and legends: "measured", "nominal", "passport"
// or "none", from its FLOP/s and its full source text (ComputeCeiling::source).
QString compute_ceiling_kind(double flops, const QString& source);

// "4488" (GB/s of 100 and more without decimals), "17.3", "0.42".
QString format_gbs(double gbs);

// "333 GFLOP/s", "66.9 TFLOP/s": FLOP/s in the unit that keeps 1–3 digits before the point.
QString format_flop_s(double flop_s);

class RooflineModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    kRun, kModel, kBackend, kDevice, kTokS, kBytes, kGbs, kCeiling, kShare,
    kPrefillTokS, kPrefillFlops, kIntensity, kComputeCeiling, kColumns
  };
  explicit RooflineModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}

  // Keeps the choice of runs still present; with no choice yet, the newest `initial` are chosen.
  void set_points(std::vector<RooflinePoint> points, int initial = 6);
  const std::vector<RooflinePoint>& points() const { return points_; }
  std::vector<RooflinePoint> chosen() const;
  void set_chosen(qint64 run_id, bool on);

  int rowCount(const QModelIndex& parent = {}) const override {
    return parent.isValid() ? 0 : static_cast<int>(points_.size());
  }
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kColumns; }
  QVariant data(const QModelIndex& index, int role) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 Q_SIGNALS:
  void chosen_changed();

 private:
  std::vector<RooflinePoint> points_;
  QSet<qint64> chosen_;
  bool chose_ = false;  // the user (or a first default) has made a choice
};

}  // namespace p64::ui
