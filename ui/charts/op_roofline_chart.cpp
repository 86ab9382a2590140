#include "ui/charts/op_roofline_chart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QHorizontalStackedBarSeries>
#include <QValueAxis>

#include <algorithm>

#include "ui/core/theme.h"
#include "ui/models/op_roofline_model.h"

namespace p64::ui {

void fill_op_roofline_chart(QChart* chart, const OpRooflineModel& model) {
  chart->removeAllSeries();
  for (QAbstractAxis* a : chart->axes()) chart->removeAxis(a);
  style_chart(chart);
  const std::vector<OpTotal>& ops = model.ops();
  if (ops.empty()) {
    chart->setTitle(QObject::tr("Per-op bandwidth: no op with counted traffic (choose a timeline run)"));
    return;
  }
  const double ceiling = model.ceiling_gbs();
  chart->setTitle(ceiling > 0 ? QObject::tr("Per-op bandwidth against the read ceiling (%1 GB/s, p64 passport)").arg(ceiling, 0, 'f', 0)
                              : QObject::tr("Per-op bandwidth (the run's passport measured no read ceiling)"));
  auto* achieved = new QBarSet(QObject::tr("achieved GB/s"));
  achieved->setColor(series_a_color());
  auto* headroom = new QBarSet(QObject::tr("to the ceiling"));
  headroom->setColor(QColor(215, 215, 215));
  QStringList names;
  double top = ceiling;
  // the most time at the top: a horizontal bar axis lists its categories bottom-up
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    names << QString::fromStdString(it->name);
    *achieved << it->gbs();
    *headroom << (ceiling > it->gbs() ? ceiling - it->gbs() : 0.0);
    top = std::max(top, it->gbs());
  }
  auto* series = new QHorizontalStackedBarSeries;
  series->append(achieved);
  if (ceiling > 0) series->append(headroom);
  else delete headroom;
  chart->addSeries(series);
  auto* y = new QBarCategoryAxis;
  y->append(names);
  y->setTruncateLabels(false);  // Qt elides category labels to "…" long before they crowd
  auto* x = new QValueAxis;
  x->setRange(0, top * 1.02);
  x->applyNiceNumbers();
  x->setLabelFormat("%.0f");
  x->setTitleText(QObject::tr("GB/s over the op's own spans (time with timing on)"));
  chart->addAxis(y, Qt::AlignLeft);
  chart->addAxis(x, Qt::AlignBottom);
  series->attachAxis(y);
  series->attachAxis(x);
  chart->legend()->setAlignment(Qt::AlignBottom);
}

}  // namespace p64::ui
