#include "ui/models/key_value_model.h"

namespace p64::ui {

void KeyValueModel::set_rows(QVector<Row> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

QString KeyValueModel::value(const QString& key) const {
  for (const Row& r : rows_)
    if (r.first == key) return r.second;
  return {};
}

QVariant KeyValueModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rows_.size()) return {};
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  const Row& r = rows_[index.row()];
  return index.column() == 0 ? r.first : r.second;
}

QVariant KeyValueModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  return section == 0 ? tr("Property") : tr("Value");
}

}  // namespace p64::ui
