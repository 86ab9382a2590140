#pragma once
// `p64 runs compare` as a table: a row per measurement group both builds measured, with each
// build's median decode tok/s and runs, B/A, p and the flag (regressions red, faster green).
#include <QAbstractTableModel>

#include "engine/lab/commit_compare.h"

namespace p64::ui {

class CommitCompareModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kModel, kBackend, kDevice, kConfig, kTokens, kA, kB, kRatio, kP, kFlag, kColumns };

  explicit CommitCompareModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void set_compare(CommitCompare c);
  const CommitCompare& compare() const { return c_; }
  const CommitCompareRow* row_at(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kColumns; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  CommitCompare c_;
};

}  // namespace p64::ui
