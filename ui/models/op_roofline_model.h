#pragma once
// The per-op roofline of a timeline run: each op whose memory traffic the lab counts
// (engine/lab/op_bytes.h), its ms and MB per decode step, the GB/s it reached over its own spans
// and that as a share of the passport's measured read ceiling. Ops it cannot count are left out.
#include <QAbstractTableModel>

#include <vector>

#include "engine/lab/timeline_run.h"

namespace p64::ui {

class OpRooflineModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kOp, kGroup, kMs, kMb, kGbs, kShare, kColumns };

  explicit OpRooflineModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  // `ceiling_gbs`: the run's passport read bandwidth; 0 when it measured none.
  void set_ops(const std::vector<OpTotal>& ops, double ceiling_gbs);
  const std::vector<OpTotal>& ops() const { return ops_; }  // counted ops, most time first
  double ceiling_gbs() const { return ceiling_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kColumns; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::vector<OpTotal> ops_;
  double ceiling_ = 0;
};

}  // namespace p64::ui
