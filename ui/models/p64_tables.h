#pragma once
// Item models over what a P64 file says about itself (engine/format/p64_format.h P64Contents):
// the Models panel's inspect tabs. Each takes a shared P64Contents so the tabs share one parse.
#include <QAbstractTableModel>

#include <memory>

#include "engine/format/p64_format.h"
#include "ui/models/key_value_model.h"

namespace p64::ui {

using ContentsPtr = std::shared_ptr<const P64Contents>;

// Header, sections and hparams as property rows.
QVector<KeyValueModel::Row> header_rows(const P64Contents& c);
QVector<KeyValueModel::Row> hparams_rows(const HParams& hp);
QVector<KeyValueModel::Row> tokenizer_rows(const Vocabulary& v);

// Tensor directory: name, layer, type, shape, bytes, offset, CRC-32C. Sorting by bytes sorts
// numerically (Qt::UserRole carries the raw number).
class TensorTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kName, kLayer, kType, kShape, kBytes, kOffset, kCrc, kColumns };
  explicit TensorTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void set_contents(ContentsPtr c);
  uint64_t total_bytes() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kColumns; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  ContentsPtr c_;
};

// The layer schedule: one row per group (embedding, each block, head) with its byte range.
class ScheduleModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kGroup, kFirstTensor, kTensors, kOffset, kBytes, kColumns };
  explicit ScheduleModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void set_contents(ContentsPtr c);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kColumns; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  ContentsPtr c_;
};

// The D10 manifold: one row per layer (then the global row), ten coordinate columns.
class ManifoldModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  explicit ManifoldModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void set_contents(ContentsPtr c);
  // The per-layer values of coordinate k (the global row left out), for the small charts.
  QVector<double> coordinate_across_layers(int k) const;
  static QString coordinate_name(int k);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : 11; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  ContentsPtr c_;
};

// The vocabulary: id, piece, score, type (the first rows of a 128k vocabulary are enough to
// see what kind it is, but all are there; views are lazy).
class VocabModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kId, kPiece, kScore, kType, kColumns };
  explicit VocabModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void set_contents(ContentsPtr c);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kColumns; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  ContentsPtr c_;
};

QString shape_text(const int64_t ne[4], uint32_t n_dims);  // "960 × 2560"

}  // namespace p64::ui
