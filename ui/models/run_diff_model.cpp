#include "ui/models/run_diff_model.h"

#include <QColor>
#include <QFont>

namespace p64::ui {

void RunDiffModel::set_diff(RunDiff d) {
  beginResetModel();
  d_ = std::move(d);
  op_rows_ = d_.groups;
  groups_ = op_rows_.size();
  has_total_ = d_.total.has_value();
  if (has_total_) op_rows_.push_back(*d_.total);
  op_rows_.insert(op_rows_.end(), d_.ops.begin(), d_.ops.end());
  endResetModel();
}

void RunDiffModel::clear() { set_diff({}); }

int RunDiffModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(d_.figures.size() + op_rows_.size());
}

RunDiffModel::RowKind RunDiffModel::kind_of(int row) const {
  const auto r = static_cast<size_t>(row);
  if (r < d_.figures.size()) return RowKind::Figure;
  const size_t o = r - d_.figures.size();
  if (o < groups_) return RowKind::Group;
  if (has_total_ && o == groups_) return RowKind::Total;
  return RowKind::Op;
}

const OpDelta* RunDiffModel::op_row(int row) const {
  const auto r = static_cast<size_t>(row);
  if (r < d_.figures.size() || r >= d_.figures.size() + op_rows_.size()) return nullptr;
  return &op_rows_[r - d_.figures.size()];
}

QVariant RunDiffModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const RowKind kind = kind_of(index.row());
  if (role == Qt::FontRole && kind != RowKind::Op) {
    QFont f;
    f.setBold(true);
    return f;
  }
  if (role == Qt::TextAlignmentRole && index.column() != kName) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (kind == RowKind::Figure) {
    const FigureDelta& f = d_.figures[static_cast<size_t>(index.row())];
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
      case kName: return QString::fromStdString(f.name);
      case kA: return QString::number(f.a, 'f', 2);
      case kB: return QString::number(f.b, 'f', 2);
      case kDelta: return QString::number(f.b - f.a, 'f', 2);
      case kRatio: return f.ratio() > 0 ? QString::number(f.ratio(), 'f', 3) : QStringLiteral("-");
    }
    return {};
  }
  const OpDelta& o = *op_row(index.row());
  if (role == Qt::ToolTipRole) {
    if (!o.in_a) return tr("Run A has no %1 op (another backend's op set)").arg(QString::fromStdString(o.name));
    if (!o.in_b) return tr("Run B has no %1 op (another backend's op set)").arg(QString::fromStdString(o.name));
    return tr("%1: ms per decode step, summed over the layers").arg(QString::fromStdString(o.name));
  }
  if (role == Qt::ForegroundRole && index.column() == kDelta && o.in_a && o.in_b && o.a_ms > 0) {
    const double change = o.delta_ms() / o.a_ms;  // time: less is better
    if (change < -0.02) return QColor(26, 127, 55);
    if (change > 0.02) return QColor(207, 34, 46);
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  const QString none = QStringLiteral("-");
  switch (index.column()) {
    case kName:
      return kind == RowKind::Op ? QStringLiteral("  %1 (%2)").arg(QString::fromStdString(o.name), QString::fromStdString(o.group))
                                 : QString::fromStdString(o.name);
    case kA: return o.in_a ? QString::number(o.a_ms, 'f', 4) : none;
    case kB: return o.in_b ? QString::number(o.b_ms, 'f', 4) : none;
    case kDelta: return o.in_a && o.in_b ? QString::number(o.delta_ms(), 'f', 4) : none;
    case kRatio: return o.in_a && o.in_b && o.ratio() > 0 ? QString::number(o.ratio(), 'f', 3) : none;
  }
  return {};
}

QVariant RunDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kName: return tr("figure / op (ms per step)");
    case kA: return d_.a_label.empty() ? tr("A") : tr("A: %1").arg(QString::fromStdString(d_.a_label));
    case kB: return d_.b_label.empty() ? tr("B") : tr("B: %1").arg(QString::fromStdString(d_.b_label));
    case kDelta: return tr("B - A");
    case kRatio: return tr("B/A");
  }
  return {};
}

}  // namespace p64::ui
