#pragma once
#include <QAbstractTableModel>
#include <QVector>

#include "engine/runtime/passport.h"

namespace p64::ui {

// A passport as rows of (section, fact, value): host, device, measured, build. Empty facts
// (a device that gives no figure) are shown as "—" rather than left out, so a missing
// number is visible.
class PassportModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kSection, kFact, kValue, kColumns };
  explicit PassportModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}

  void set_passport(const Passport& passport);
  void clear();
  const Passport& passport() const { return passport_; }
  bool has_device() const { return !passport_.device.backend.empty(); }

  // Value of one fact by its label, e.g. value_of("Device", "Name"); empty when absent.
  QString value_of(const QString& section, const QString& fact) const;

  int rowCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : rows_.size(); }
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kColumns; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  struct Row {
    QString section, fact, value;
  };
  Passport passport_;
  QVector<Row> rows_;
};

QString format_bytes(double bytes);  // "1.5 GiB"

}  // namespace p64::ui
