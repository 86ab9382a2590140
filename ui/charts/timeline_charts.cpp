#include "ui/charts/timeline_charts.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QCursor>
#include <QHorizontalPercentBarSeries>
#include <QStackedBarSeries>
#include <QToolTip>
#include <QValueAxis>

#include "ui/core/theme.h"
#include "ui/models/timeline_model.h"

namespace p64::ui {

namespace {
void reset(QChart* chart) {
  chart->removeAllSeries();
  for (QAbstractAxis* a : chart->axes()) chart->removeAxis(a);
  style_chart(chart);
}
}  // namespace

void fill_layer_split_chart(QChart* chart, const TimelineSplitModel& m) {
  reset(chart);
  chart->setTitle(QObject::tr("Decode split per layer (ms per token, %1 steps)").arg(m.steps()));
  auto* series = new QStackedBarSeries;
  QStringList categories;
  const int rows = m.rowCount();
  for (int r = 0; r < rows; ++r) categories << (r == m.layers() ? QObject::tr("out") : QString::number(r));
  double max_total = 0;
  for (int r = 0; r < rows; ++r) {
    double t = 0;
    for (int g = 0; g < TimelineSplitModel::kGroups; ++g) t += m.ms(r, g);
    max_total = std::max(max_total, t);
  }
  for (int g = 0; g < TimelineSplitModel::kGroups; ++g) {
    if (m.group_total_ms(g) <= 0) continue;
    auto* set = new QBarSet(group_label(g));
    set->setColor(op_group_color(g));
    set->setBorderColor(op_group_color(g));
    for (int r = 0; r < rows; ++r) *set << m.ms(r, g);
    QObject::connect(set, &QBarSet::hovered, set, [&m, g, categories](bool on, int index) {
      if (!on) {
        QToolTip::hideText();
        return;
      }
      const QString where = index == m.layers() ? QObject::tr("outside blocks") : QObject::tr("block %1").arg(index);
      QToolTip::showText(QCursor::pos(), QObject::tr("<b>%1</b>, %2: %3 ms<br>%4")
                                              .arg(group_label(g), where)
                                              .arg(m.ms(index, g), 0, 'f', 4)
                                              .arg(m.ops_of(index, g).join("<br>")));
    });
    series->append(set);
  }
  series->setBarWidth(0.85);
  chart->addSeries(series);
  auto* x = new QBarCategoryAxis;
  x->append(categories);
  x->setTitleText(QObject::tr("layer"));
  if (rows > 24) x->setLabelsAngle(-90);
  auto* y = new QValueAxis;
  y->setRange(0, max_total > 0 ? max_total * 1.08 : 1);
  y->setTitleText(QObject::tr("ms / token"));
  y->setLabelFormat("%.3g");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
  chart->legend()->setAlignment(Qt::AlignTop);
}

void fill_token_split_chart(QChart* chart, const TimelineSplitModel& m) {
  reset(chart);
  const double total = m.total_ms();
  chart->setTitle(QObject::tr("Whole token: %1 ms of spans per decode step").arg(total, 0, 'f', 3));
  auto* series = new QHorizontalPercentBarSeries;
  for (int g = 0; g < TimelineSplitModel::kGroups; ++g) {
    const double ms = m.group_total_ms(g);
    if (ms <= 0) continue;
    auto* set = new QBarSet(QString("%1 %2 ms (%3%)")
                                .arg(group_label(g))
                                .arg(ms, 0, 'f', 3)
                                .arg(total > 0 ? 100.0 * ms / total : 0, 0, 'f', 1));
    set->setColor(op_group_color(g));
    set->setBorderColor(op_group_color(g));
    *set << ms;
    series->append(set);
  }
  series->setBarWidth(0.7);
  chart->addSeries(series);
  auto* y = new QBarCategoryAxis;
  y->append(QObject::tr("decode"));
  auto* x = new QValueAxis;
  x->setRange(0, 100);
  x->setLabelFormat("%d%%");
  chart->addAxis(y, Qt::AlignLeft);
  chart->addAxis(x, Qt::AlignBottom);
  series->attachAxis(x);
  series->attachAxis(y);
  chart->legend()->setAlignment(Qt::AlignBottom);
}

}  // namespace p64::ui
