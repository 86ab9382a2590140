#pragma once
#include <QAbstractTableModel>

#include <vector>

#include "engine/lab/store_types.h"

namespace p64::ui {

// The repetitions of one run: side (A/B), warm, decode and prefill tok/s, TTFT, effective
// GB/s and its share of the measured bandwidth, peak device memory.
class SampleTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kRep, kSide, kWarm, kDecode, kPrefill, kTtft, kGbs, kShare, kPeak, kColumns };
  explicit SampleTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void set_samples(std::vector<SampleRecord> samples);
  const std::vector<SampleRecord>& samples() const { return samples_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kColumns; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<SampleRecord> samples_;
};

}  // namespace p64::ui
