#pragma once
// An explore matrix (engine/lab/explore.h) as a heatmap: a row per model, a column per switch
// set, each cell B/A of its A/B with its verdict, coloured by direction and size of the change
// (green faster, red slower, pale when not significant), grey where not measured yet.
#include <QAbstractTableModel>
#include <QColor>

#include "engine/lab/explore.h"

namespace p64::ui {

class ExploreMatrixModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  static constexpr int kRunIdRole = Qt::UserRole + 1;  // the cell's A/B run id (0: not measured)

  explicit ExploreMatrixModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void set_matrix(ExploreMatrix m);
  const ExploreMatrix& matrix() const { return m_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  // The heatmap colour of a cell: hue by the sign of B/A - 1, strength by its size (full at
  // +-10%), faded when the test found no significant difference.
  static QColor cell_color(const ExploreCell& c);
  // "3 of 4 cells measured: 1 win, 1 regression, 1 inconclusive"
  QString summary() const;

 private:
  ExploreMatrix m_;
};

// Every explore matrix in `store`, newest first.
std::vector<ExploreMatrix> load_explore_matrices(const Store& store);

}  // namespace p64::ui
