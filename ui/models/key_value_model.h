#pragma once
#include <QAbstractTableModel>
#include <QVector>

namespace p64::ui {

// Two columns, property and value: hparams, header facts, tokenizer summary, run options.
class KeyValueModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  using Row = QPair<QString, QString>;
  explicit KeyValueModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}

  void set_rows(QVector<Row> rows);
  const QVector<Row>& rows() const { return rows_; }
  QString value(const QString& key) const;  // first row with this key, empty when absent

  int rowCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : rows_.size(); }
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : 2; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  QVector<Row> rows_;
};

}  // namespace p64::ui
