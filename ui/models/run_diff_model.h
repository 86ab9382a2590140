#pragma once
// Two runs side by side (engine/lab/run_diff.h) as one table: the headline figures first, then the
// op groups, then every op, each with A, B, B - A and B/A. Ops one run lacks say so.
#include <QAbstractTableModel>

#include "engine/lab/run_diff.h"

namespace p64::ui {

class RunDiffModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kName, kA, kB, kDelta, kRatio, kColumns };
  enum class RowKind { Figure, Group, Total, Op };

  explicit RunDiffModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void set_diff(RunDiff d);
  void clear();
  const RunDiff& diff() const { return d_; }
  RowKind kind_of(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kColumns; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  const OpDelta* op_row(int row) const;  // a group, total or op row; nullptr for a figure

  RunDiff d_;
  std::vector<OpDelta> op_rows_;  // groups, the total, then the ops
  size_t groups_ = 0;             // op_rows_[0, groups_) are groups
  bool has_total_ = false;
};

}  // namespace p64::ui
