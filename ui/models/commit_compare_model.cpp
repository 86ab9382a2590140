#include "ui/models/commit_compare_model.h"

#include <QColor>

namespace p64::ui {

void CommitCompareModel::set_compare(CommitCompare c) {
  beginResetModel();
  c_ = std::move(c);
  endResetModel();
}

const CommitCompareRow* CommitCompareModel::row_at(int row) const {
  return row >= 0 && static_cast<size_t>(row) < c_.rows.size() ? &c_.rows[static_cast<size_t>(row)] : nullptr;
}

int CommitCompareModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(c_.rows.size());
}

QVariant CommitCompareModel::data(const QModelIndex& index, int role) const {
  const CommitCompareRow* r = index.isValid() ? row_at(index.row()) : nullptr;
  if (!r) return {};
  if (role == Qt::ForegroundRole && (index.column() == kFlag || index.column() == kRatio)) {
    if (r->flag == "regression") return QColor(207, 34, 46);
    if (r->flag == "faster") return QColor(26, 127, 55);
    return {};
  }
  if (role == Qt::ToolTipRole) {
    QString tip = QString::fromStdString(r->reason);
    if (r->a_busy + r->b_busy > 0)
      tip += tr("\nThe machine was busy during %1 of A's and %2 of B's runs: the difference may be load, not the build.")
                 .arg(r->a_busy)
                 .arg(r->b_busy);
    return tip;
  }
  if (role == Qt::DisplayRole && index.column() == kFlag && r->a_busy + r->b_busy > 0)
    return QString::fromStdString(r->flag) + tr(" (busy)");
  if (role == Qt::TextAlignmentRole && index.column() >= kTokens && index.column() <= kP)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kModel: return QString::fromStdString(r->model);
    case kBackend: return QString::fromStdString(r->backend);
    case kDevice: return QString::fromStdString(r->device);
    case kConfig: return QString::fromStdString(r->config);
    case kTokens: return QStringLiteral("%1+%2").arg(r->prompt_tokens).arg(r->decode_tokens);
    case kA: return QStringLiteral("%1 (%2)").arg(r->a_median, 0, 'f', 2).arg(r->a_runs);
    case kB: return QStringLiteral("%1 (%2)").arg(r->b_median, 0, 'f', 2).arg(r->b_runs);
    case kRatio: return r->ratio > 0 ? QString::number(r->ratio, 'f', 3) : QStringLiteral("-");
    case kP: return r->flag == "too few runs" ? QStringLiteral("-") : QString::number(r->p_value, 'g', 3);
    case kFlag: return QString::fromStdString(r->flag);
  }
  return {};
}

QVariant CommitCompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  const QString a = QString::fromStdString(c_.baseline.substr(0, 8)), b = QString::fromStdString(c_.against.substr(0, 8));
  switch (section) {
    case kModel: return tr("model");
    case kBackend: return tr("backend");
    case kDevice: return tr("device");
    case kConfig: return tr("config");
    case kTokens: return tr("prompt+decode");
    case kA: return a.isEmpty() ? tr("A tok/s (runs)") : tr("%1 tok/s (runs)").arg(a);
    case kB: return b.isEmpty() ? tr("B tok/s (runs)") : tr("%1 tok/s (runs)").arg(b);
    case kRatio: return tr("B/A");
    case kP: return tr("p");
    case kFlag: return tr("flag");
  }
  return {};
}

}  // namespace p64::ui
