#include "ui/charts/manifold_grid.h"

#include <QChart>
#include <QChartView>
#include <QGridLayout>
#include <QLineSeries>
#include <QScatterSeries>
#include <QValueAxis>

#include <algorithm>

#include "ui/core/theme.h"
#include "ui/models/p64_tables.h"

namespace p64::ui {

ManifoldGrid::ManifoldGrid(QWidget* parent) : QWidget(parent) {
  auto* grid = new QGridLayout(this);
  grid->setSpacing(4);
  for (int k = 0; k < 10; ++k) {
    auto* chart = new QChart;
    style_chart(chart);
    chart->legend()->hide();
    auto* view = new QChartView(chart, this);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumSize(220, 150);
    grid->addWidget(view, k / 5, k % 5);
    views_ << view;
  }
}

void ManifoldGrid::set_model(const ManifoldModel* model) {
  for (int k = 0; k < 10; ++k) {
    QChart* chart = views_[k]->chart();
    chart->removeAllSeries();
    for (QAbstractAxis* a : chart->axes()) chart->removeAxis(a);
    style_chart(chart);
    chart->legend()->hide();
    QFont f = chart->titleFont();
    f.setPointSizeF(8.5);
    chart->setTitleFont(f);
    chart->setTitle(ManifoldModel::coordinate_name(k));
    const QVector<double> v = model ? model->coordinate_across_layers(k) : QVector<double>{};
    auto* line = new QLineSeries;
    line->setColor(op_group_color(k % 5));
    auto* dots = new QScatterSeries;
    dots->setMarkerSize(5);
    dots->setColor(op_group_color(k % 5));
    for (int i = 0; i < v.size(); ++i) {
      line->append(i, v[i]);
      dots->append(i, v[i]);
    }
    chart->addSeries(line);
    chart->addSeries(dots);
    auto* x = new QValueAxis;
    x->setLabelFormat("%d");
    x->setRange(0, std::max<qsizetype>(1, v.size() - 1));
    x->setTickCount(std::min<int>(static_cast<int>(v.size()), 5) < 2 ? 2 : std::min<int>(static_cast<int>(v.size()), 5));
    x->setTitleText(tr("layer"));
    auto* y = new QValueAxis;
    double lo = v.isEmpty() ? 0 : *std::min_element(v.begin(), v.end());
    double hi = v.isEmpty() ? 1 : *std::max_element(v.begin(), v.end());
    if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) {
      lo -= 0.5 * std::max(1e-6, std::abs(lo));
      hi += 0.5 * std::max(1e-6, std::abs(hi));
    }
    y->setRange(lo, hi);
    y->setLabelFormat("%.3g");
    y->setTickCount(3);
    QFont lf = x->labelsFont();
    lf.setPointSizeF(7.5);
    x->setLabelsFont(lf);
    y->setLabelsFont(lf);
    x->setTitleFont(lf);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    for (QAbstractSeries* s : chart->series()) {
      s->attachAxis(x);
      s->attachAxis(y);
    }
  }
}

}  // namespace p64::ui
