#include "ui/models/run_table_model.h"

#include <QColor>

namespace p64::ui {

namespace {
QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }
}

void RunTableModel::set_rows(std::vector<RunRow> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  std::sort(rows_.begin(), rows_.end(), [](const RunRow& a, const RunRow& b) { return a.run.id > b.run.id; });
  endResetModel();
}

const RunRow* RunTableModel::row_at(int row) const {
  return (row >= 0 && row < static_cast<int>(rows_.size())) ? &rows_[static_cast<size_t>(row)] : nullptr;
}

int RunTableModel::row_of_run(int64_t run_id) const {
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].run.id == run_id) return static_cast<int>(i);
  return -1;
}

int RunTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant RunTableModel::data(const QModelIndex& index, int role) const {
  const RunRow* row = row_at(index.row());
  if (!row || !index.isValid()) return {};
  const RunRecord& r = row->run;
  if (role == Qt::UserRole) {
    switch (index.column()) {
      case kId: return QVariant::fromValue<qlonglong>(r.id);
      case kDecode: return row->decode_median;
      default: break;
    }
  }
  if (role == Qt::ForegroundRole && index.column() == kStatus) {
    if (r.status == RunStatus::Failed) return QColor(0xd0, 0x4a, 0x4a);
    if (r.status == RunStatus::Cancelled) return QColor(0x90, 0x90, 0x90);
  }
  if (role == Qt::TextAlignmentRole && (index.column() == kDecode || index.column() == kId))
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && index.column() == kStatus && !r.error.empty()) return qs(r.error);
  if (role != Qt::DisplayRole && role != Qt::UserRole) return {};
  switch (index.column()) {
    case kId: return QString::number(r.id);
    case kKind: return qs(to_string(r.kind));
    case kStatus: return qs(to_string(r.status));
    case kModel: return row->model_name;
    case kBackend: return qs(r.backend);
    case kDevice: return qs(r.device);
    case kConfig: return qs(r.config);
    case kDecode:
      if (row->decode_median <= 0) return QString("—");
      return QString("%1 (%2–%3)").arg(row->decode_median, 0, 'f', 2).arg(row->decode_min, 0, 'f', 2).arg(row->decode_max, 0, 'f', 2);
    case kStarted: return qs(r.started_at);
    case kLabel: {
      QString label = r.imported ? QString("%1 [imported]").arg(qs(r.label)) : qs(r.label);
      // A sweep's runs share one label: the depth tells them apart.
      if (row->depth) label += QString(label.isEmpty() ? "depth %1" : " (depth %1)").arg(*row->depth);
      return label;
    }
  }
  return {};
}

QVariant RunTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Id", "Kind", "Status", "Decode tok/s (min–max)", "Model", "Backend", "Device",
                                "Config", "Started", "Label"};
  return section < kColumns ? tr(names[section]) : QVariant();
}

RunFilterProxy::RunFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(Qt::UserRole);
  setFilterCaseSensitivity(Qt::CaseInsensitive);
}

void RunFilterProxy::set_kind(std::optional<RunKind> kind) {
  kind_ = kind;
  invalidateFilter();
}

void RunFilterProxy::set_text(const QString& text) {
  text_ = text.trimmed();
  invalidateFilter();
}

void RunFilterProxy::set_show_imported(bool show) {
  show_imported_ = show;
  invalidateFilter();
}

bool RunFilterProxy::filterAcceptsRow(int source_row, const QModelIndex&) const {
  const auto* m = static_cast<const RunTableModel*>(sourceModel());
  const RunRow* row = m->row_at(source_row);
  if (!row) return false;
  if (kind_ && row->run.kind != *kind_) return false;
  if (!show_imported_ && row->run.imported) return false;
  if (text_.isEmpty()) return true;
  for (int c : {RunTableModel::kModel, RunTableModel::kBackend, RunTableModel::kDevice, RunTableModel::kConfig,
                RunTableModel::kLabel, RunTableModel::kStatus})
    if (m->index(source_row, c).data().toString().contains(text_, Qt::CaseInsensitive)) return true;
  return false;
}

}  // namespace p64::ui
