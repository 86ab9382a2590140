#pragma once
// The per-op roofline of a timeline run: each op whose memory traffic the lab counts
// (engine/lab/op_work.h), its ms and MB per decode step, the GB/s it reached over its own spans
// and that as a share of the passport's measured read ceiling; where its FLOPs are counted too,
// the GFLOP/s it reached, its FLOP per byte and that rate as a share of the compute ceiling.
// Ops it cannot count are left out.
#include <QAbstractTableModel>
#include <QString>

#include <vector>

#include "engine/lab/compute_ceiling.h"
#include "engine/lab/timeline_run.h"

namespace p64::ui {

class OpRooflineModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kOp, kGroup, kMs, kMb, kGbs, kShare, kGflops, kIntensity, kPeakShare, kColumns };

  explicit OpRooflineModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  // `ceiling_gbs`: the run's passport read bandwidth, 0 when it measured none; `compute`: its
  // compute ceiling (flops 0 when it has none).
  void set_ops(const std::vector<OpTotal>& ops, double ceiling_gbs, const ComputeCeiling& compute = {});
  const std::vector<OpTotal>& ops() const { return ops_; }  // counted ops, most time first
  double ceiling_gbs() const { return ceiling_; }
  double ceiling_flops() const { return compute_.flops; }
  QString ceiling_flops_kind() const;  // "measured", "passport", "nominal" or "none"

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kColumns; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::vector<OpTotal> ops_;
  double ceiling_ = 0;
  ComputeCeiling compute_;
};

}  // namespace p64::ui
