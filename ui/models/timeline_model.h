#pragma once
#include <QAbstractTableModel>

#include <array>
#include <vector>

#include "engine/runtime/timeline.h"

namespace p64::ui {

// The per-op split of a timeline run: one row per layer (then "outside blocks"), one column
// per op group, milliseconds per decode step (mean over the steps). Prefill spans are left
// out: the split is the decode token's. Raw doubles come back with Qt::UserRole.
class TimelineSplitModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  static constexpr int kGroups = 6;  // RMS, ATTN, FFN, LOGITS, SAMPLE, OTHER (OpGroup order)
  explicit TimelineSplitModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}

  void set_spans(std::vector<OpSpan> spans);
  const std::vector<OpSpan>& spans() const { return spans_; }
  int steps() const { return steps_; }
  int layers() const { return layers_; }
  double ms(int layer_row, int group) const;  // row layers() is "outside blocks"
  double group_total_ms(int group) const;     // whole-token split
  double total_ms() const;
  // Per-op ms per step of one layer row, largest first ("qkv 0.120 ms"): the hover text.
  QStringList ops_of(int layer_row, int group) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kGroups + 2; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<OpSpan> spans_;
  std::vector<std::array<double, kGroups>> ms_;  // per layer row
  int steps_ = 0;
  int layers_ = 0;
};

QString group_label(int group);  // "RMS", "ATTN", ...

}  // namespace p64::ui
