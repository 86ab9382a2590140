#pragma once
// A read-only table over a JSON array of objects: each column says how to show a row. The
// scoreboard, its bars and the peer diagnostics are all views of report.h's JSON this way, so
// the page shows exactly what the exported report says.
#include <QAbstractTableModel>
#include <QVariant>
#include <QVector>

#include <functional>

#include <nlohmann/json.hpp>

namespace p64::ui {

class JsonTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  struct Column {
    QString header;
    std::function<QVariant(const nlohmann::json& row, int role)> cell;  // DisplayRole, ToolTipRole, ...
  };
  explicit JsonTableModel(QVector<Column> columns, QObject* parent = nullptr)
      : QAbstractTableModel(parent), columns_(std::move(columns)) {}

  void set_rows(const nlohmann::json& array);  // anything but an array clears the table
  const nlohmann::json& row(int r) const { return rows_.at(static_cast<size_t>(r)); }

  int rowCount(const QModelIndex& parent = {}) const override {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
  }
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : columns_.size(); }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  QVector<Column> columns_;
  nlohmann::json rows_ = nlohmann::json::array();
};

// The scoreboard page's three tables, over build_report()'s "scoreboard", "bars" and
// "peer_diagnostics" arrays.
JsonTableModel* make_scoreboard_model(QObject* parent);
JsonTableModel* make_bars_model(QObject* parent);
JsonTableModel* make_peers_model(QObject* parent);

}  // namespace p64::ui
