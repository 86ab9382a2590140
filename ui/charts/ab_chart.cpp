#include "ui/charts/ab_chart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPen>
#include <QScatterSeries>
#include <QStackedBarSeries>
#include <QValueAxis>

#include <algorithm>

#include "ui/core/theme.h"
#include "ui/models/ab_view.h"
#include "ui/models/timeline_model.h"

namespace p64::ui {

namespace {
void reset(QChart* chart) {
  chart->removeAllSeries();
  for (QAbstractAxis* a : chart->axes()) chart->removeAxis(a);
  style_chart(chart);
}

void hide_from_legend(QChart* chart, QAbstractSeries* s) {
  for (QLegendMarker* m : chart->legend()->markers(s)) m->setVisible(false);
}

// A whisker drawn as one polyline: lower cap, the stem, upper cap (x is the category index).
QLineSeries* whisker(double x, double lo, double hi) {
  constexpr double cap = 0.08;
  auto* s = new QLineSeries;
  s->setName(QObject::tr("min–max"));
  *s << QPointF(x - cap, lo) << QPointF(x + cap, lo) << QPointF(x, lo) << QPointF(x, hi) << QPointF(x - cap, hi)
     << QPointF(x + cap, hi);
  QPen pen(current_theme_is_dark() ? QColor(0xee, 0xee, 0xee) : QColor(0x20, 0x20, 0x20));
  pen.setWidthF(2);
  s->setPen(pen);
  return s;
}
}  // namespace

void fill_ab_chart(QChart* chart, const AbView& v) {
  reset(chart);
  if (v.empty()) {
    chart->setTitle(QObject::tr("Decode tok/s — no A/B run yet"));
    return;
  }
  chart->setTitle(QObject::tr("Decode tok/s (median, min–max, each run) — B/A %1").arg(v.ratio_median, 0, 'f', 3));
  // Stacked with a zero in the other category, so each side gets one centred bar of its own colour.
  auto* bars = new QStackedBarSeries;
  auto* set_a = new QBarSet(QObject::tr("A median"));
  *set_a << v.a.median << 0.0;
  set_a->setColor(series_a_color());
  set_a->setBorderColor(series_a_color());
  auto* set_b = new QBarSet(QObject::tr("B median"));
  *set_b << 0.0 << v.b.median;
  set_b->setColor(series_b_color());
  set_b->setBorderColor(series_b_color());
  bars->append(set_a);
  bars->append(set_b);
  bars->setBarWidth(0.5);
  chart->addSeries(bars);

  auto* x = new QBarCategoryAxis;
  x->append({QObject::tr("A"), QObject::tr("B")});
  auto* y = new QValueAxis;
  const double top = std::max({v.a.max, v.b.max, v.a.median, v.b.median});
  y->setRange(0, top > 0 ? top * 1.15 : 1);
  y->setTitleText(QObject::tr("decode tok/s"));
  y->applyNiceNumbers();
  y->setLabelFormat("%g");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  bars->attachAxis(x);
  bars->attachAxis(y);

  const AbSideView* sides[] = {&v.a, &v.b};
  for (int i = 0; i < 2; ++i) {
    QLineSeries* w = whisker(i, sides[i]->min, sides[i]->max);
    chart->addSeries(w);
    w->attachAxis(x);
    w->attachAxis(y);
    if (i == 1) hide_from_legend(chart, w);
    auto* runs = new QScatterSeries;
    runs->setName(QObject::tr("runs"));
    runs->setMarkerSize(7);
    runs->setColor(current_theme_is_dark() ? QColor(0xff, 0xff, 0xff) : QColor(0x30, 0x30, 0x30));
    runs->setBorderColor(Qt::transparent);
    for (double t : sides[i]->tok_s) *runs << QPointF(i + 0.14, t);
    chart->addSeries(runs);
    runs->attachAxis(x);
    runs->attachAxis(y);
    if (i == 1) hide_from_legend(chart, runs);
  }
  chart->legend()->setAlignment(Qt::AlignBottom);
}

void fill_ab_split_chart(QChart* chart, const AbView& v) {
  reset(chart);
  if (!v.has_split) {
    chart->setTitle(QObject::tr("Per-op split — tick “Per-op split” and start an A/B"));
    return;
  }
  chart->setTitle(QObject::tr("Per-op split (ms per decode token, timing on)"));
  auto* bars = new QStackedBarSeries;
  double top = 0, a_total = 0, b_total = 0;
  for (int g = 0; g < 6; ++g) {
    a_total += v.a_split_ms[g];
    b_total += v.b_split_ms[g];
    if (v.a_split_ms[g] <= 0 && v.b_split_ms[g] <= 0) continue;
    auto* set = new QBarSet(group_label(g));
    *set << v.a_split_ms[g] << v.b_split_ms[g];
    set->setColor(op_group_color(g));
    set->setBorderColor(op_group_color(g));
    bars->append(set);
  }
  top = std::max(a_total, b_total);
  bars->setBarWidth(0.5);
  chart->addSeries(bars);
  auto* x = new QBarCategoryAxis;
  x->append({QObject::tr("A"), QObject::tr("B")});
  auto* y = new QValueAxis;
  y->setRange(0, top > 0 ? top * 1.1 : 1);
  y->applyNiceNumbers();
  y->setLabelFormat("%g");
  y->setTitleText(QObject::tr("ms per token"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  bars->attachAxis(x);
  bars->attachAxis(y);
  chart->legend()->setAlignment(Qt::AlignRight);
}

}  // namespace p64::ui
