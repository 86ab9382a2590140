#pragma once
// Decode runs placed on the roofline: each run's achieved effective GB/s (bytes read per token
// × tok/s) against the measured read bandwidth of the passport it ran with. The table lists every
// stored decode-proxy run that has those figures; checked rows are the ones the chart draws.
#include <QAbstractTableModel>
#include <QSet>
#include <QString>

#include <optional>
#include <vector>

#include "engine/lab/store_types.h"

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
};

// The runs whose summary has decode tok/s and effective GB/s; bytes per token is taken from the
// summary or, when absent, from GB/s ÷ tok/s.
std::optional<RooflinePoint> roofline_point(const RunRecord& run, const QString& model_name = {});

class RooflineModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kRun, kModel, kBackend, kDevice, kTokS, kBytes, kGbs, kCeiling, kShare, kColumns };
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
