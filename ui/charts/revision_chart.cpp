#include "ui/charts/revision_chart.h"

#include <QCategoryAxis>
#include <QChart>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>

#include <algorithm>

#include "engine/lab/commit_compare.h"
#include "ui/core/theme.h"

namespace p64::ui {

void fill_revision_chart(QChart* chart, const std::vector<RevisionPoint>& points, const QString& group) {
  chart->removeAllSeries();
  for (QAbstractAxis* a : chart->axes()) chart->removeAxis(a);
  style_chart(chart);
  if (points.empty()) {
    chart->setTitle(QObject::tr("Decode tok/s over builds — select a row above"));
    return;
  }
  chart->setTitle(QObject::tr("Decode tok/s over builds: %1").arg(group));
  auto* median = new QLineSeries;
  median->setName(QObject::tr("median"));
  median->setPointsVisible(true);
  median->setColor(series_a_color());
  auto* lo = new QLineSeries;
  auto* hi = new QLineSeries;
  lo->setName(QObject::tr("min"));
  hi->setName(QObject::tr("max"));
  QPen thin(series_a_color().lighter(150));
  thin.setWidthF(1);
  thin.setStyle(Qt::DotLine);
  lo->setPen(thin);
  hi->setPen(thin);
  auto* x = new QCategoryAxis;
  x->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  x->setTitleText(QObject::tr("build (git revision, in the order first measured)"));
  double top = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const RevisionPoint& p = points[i];
    const double at = static_cast<double>(i);
    *median << QPointF(at, p.median);
    *lo << QPointF(at, p.min);
    *hi << QPointF(at, p.max);
    x->append(QString::fromStdString(p.revision.substr(0, 8)) + QStringLiteral(" (%1)").arg(p.runs), at);
    top = std::max(top, p.max);
  }
  x->setRange(-0.5, static_cast<double>(points.size()) - 0.5);
  auto* y = new QValueAxis;
  y->setTitleText(QObject::tr("decode tok/s"));
  y->setLabelFormat("%.0f");
  y->setRange(0, top > 0 ? top * 1.1 : 1);
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (QLineSeries* s : {lo, hi, median}) {
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  chart->legend()->setAlignment(Qt::AlignBottom);
}

}  // namespace p64::ui
