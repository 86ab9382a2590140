#pragma once
#include <QList>
#include <QWidget>

class QChartView;

namespace p64::ui {
class ManifoldModel;

// The D10 manifold as ten small line charts, one per coordinate, each across the layers:
// a layer whose statistics jump out of its neighbours' is visible at a glance.
class ManifoldGrid : public QWidget {
  Q_OBJECT
 public:
  explicit ManifoldGrid(QWidget* parent = nullptr);
  void set_model(const ManifoldModel* model);  // rebuilds the series from the model
  const QList<QChartView*>& views() const { return views_; }

 private:
  QList<QChartView*> views_;
};

}  // namespace p64::ui
