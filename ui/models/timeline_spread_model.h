#pragma once
#include <QAbstractTableModel>

#include <vector>

#include "engine/lab/op_spread.h"

namespace p64::ui {

// How each op's span time spreads over the decode steps of a timeline run (engine/lab/op_spread.h):
// one row per op over every layer, then a row per layer of the ops inside blocks, with the
// median, min and max of a span in µs and max/min. Raw numbers come back with Qt::UserRole, so
// a proxy sorts by them (max/min first finds the op whose identical layers vary most).
class TimelineSpreadModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kOp, kGroup, kLayer, kSpans, kMedian, kMin, kMax, kMaxOverMin, kColumns };
  explicit TimelineSpreadModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}

  void set_spans(const std::vector<OpSpan>& spans);
  const std::vector<OpSpread>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kColumns; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<OpSpread> rows_;  // each op's all-layers row, then its per-layer rows
};

}  // namespace p64::ui
