#include "ui/models/timeline_model.h"

#include <QMap>
#include <QSet>

#include <algorithm>

namespace p64::ui {

QString group_label(int group) {
  const auto n = op_group_name(static_cast<OpGroup>(group));
  return QString::fromUtf8(n.data(), static_cast<qsizetype>(n.size()));
}

void TimelineSplitModel::set_spans(std::vector<OpSpan> spans) {
  beginResetModel();
  spans_ = std::move(spans);
  QSet<int32_t> steps;
  int max_layer = -1;
  for (const OpSpan& s : spans_) {
    if (s.prefill) continue;
    steps.insert(s.step);
    max_layer = std::max(max_layer, s.layer);
  }
  steps_ = static_cast<int>(steps.size());
  layers_ = max_layer + 1;
  ms_.assign(static_cast<size_t>(layers_ + 1), {});
  const double per_step = steps_ > 0 ? 1.0 / (1000.0 * steps_) : 0.0;  // µs summed over steps -> ms per step
  for (const OpSpan& s : spans_) {
    if (s.prefill) continue;
    const size_t row = s.layer < 0 ? static_cast<size_t>(layers_) : static_cast<size_t>(s.layer);
    const auto g = std::min<size_t>(static_cast<size_t>(s.group), kGroups - 1);
    ms_[row][g] += s.dur_us * per_step;
  }
  endResetModel();
}

double TimelineSplitModel::ms(int layer_row, int group) const {
  if (layer_row < 0 || layer_row >= static_cast<int>(ms_.size()) || group < 0 || group >= kGroups) return 0;
  return ms_[static_cast<size_t>(layer_row)][static_cast<size_t>(group)];
}

double TimelineSplitModel::group_total_ms(int group) const {
  double t = 0;
  for (size_t r = 0; r < ms_.size(); ++r) t += ms(static_cast<int>(r), group);
  return t;
}

double TimelineSplitModel::total_ms() const {
  double t = 0;
  for (int g = 0; g < kGroups; ++g) t += group_total_ms(g);
  return t;
}

QStringList TimelineSplitModel::ops_of(int layer_row, int group) const {
  QMap<QString, double> by_name;
  for (const OpSpan& s : spans_) {
    if (s.prefill || static_cast<int>(s.group) != group) continue;
    const int row = s.layer < 0 ? layers_ : s.layer;
    if (row != layer_row) continue;
    by_name[QString::fromStdString(s.name)] += s.dur_us / (1000.0 * std::max(1, steps_));
  }
  QList<QPair<double, QString>> sorted;
  for (auto it = by_name.begin(); it != by_name.end(); ++it) sorted << qMakePair(it.value(), it.key());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  QStringList out;
  for (const auto& [ms, name] : sorted) out << QString("%1 %2 ms").arg(name).arg(ms, 0, 'f', 4);
  return out;
}

int TimelineSplitModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || ms_.empty() ? 0 : static_cast<int>(ms_.size());
}

QVariant TimelineSplitModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  const int row = index.row(), col = index.column();
  double total = 0;
  for (int g = 0; g < kGroups; ++g) total += ms(row, g);
  if (role == Qt::UserRole) return col == 0 ? QVariant(row) : QVariant(col <= kGroups ? ms(row, col - 1) : total);
  if (role == Qt::TextAlignmentRole && col > 0) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  if (col == 0) return row == layers_ ? tr("outside blocks") : tr("block %1").arg(row);
  return QString::number(col <= kGroups ? ms(row, col - 1) : total, 'f', 4);
}

QVariant TimelineSplitModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  if (section == 0) return tr("Layer");
  if (section <= kGroups) return tr("%1 ms").arg(group_label(section - 1));
  return tr("Total ms");
}

}  // namespace p64::ui
