#include "ui/charts/roofline_chart.h"

#include <QChart>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMap>
#include <QPen>
#include <QScatterSeries>

#include <algorithm>

#include "ui/core/theme.h"
#include "ui/charts/log_axis.h"
#include "ui/core/run_colors.h"
#include "ui/models/roofline_model.h"

namespace p64::ui {

void fill_roofline_chart(QChart* chart, const std::vector<RooflinePoint>& points, double g5_share) {
  chart->removeAllSeries();
  for (QAbstractAxis* a : chart->axes()) chart->removeAxis(a);
  style_chart(chart);
  if (points.empty()) {
    chart->setTitle(QObject::tr("Roofline — choose runs in the table"));
    return;
  }
  chart->setTitle(QObject::tr("Decode roofline: achieved effective GB/s against the measured read bandwidth"));
  double x_lo = 1e300, x_hi = 0, y_lo = 1e300, y_hi = 0;
  QMap<QString, double> ceilings;  // device -> measured read GB/s (the first run's passport)
  for (const auto& p : points) {
    const double mb = p.bytes_per_token / 1e6;
    x_lo = std::min(x_lo, mb);
    x_hi = std::max(x_hi, mb);
    y_lo = std::min(y_lo, p.effective_gbs);
    y_hi = std::max(y_hi, p.effective_gbs);
    if (p.measured_read_gbs > 0 && !ceilings.contains(p.device)) ceilings[p.device] = p.measured_read_gbs;
  }
  for (double c : ceilings) {
    y_lo = std::min(y_lo, g5_share * c);
    y_hi = std::max(y_hi, c);
  }
  QLogValueAxis* x = make_decade_axis(x_lo / 1.5, x_hi * 1.5, QObject::tr("MB read per decode token (weights + KV), log"));
  QLogValueAxis* y = make_decade_axis(y_lo / 1.5, y_hi * 1.5, QObject::tr("effective GB/s (log)"));
  const double xa = x->min(), xb = x->max();
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);

  const QColor ink = current_theme_is_dark() ? QColor(0xee, 0xee, 0xee) : QColor(0x20, 0x20, 0x20);
  for (auto it = ceilings.begin(); it != ceilings.end(); ++it) {
    auto* roof = new QLineSeries;
    roof->setName(QObject::tr("%1: %2 GB/s read").arg(it.key(), format_gbs(it.value())));
    *roof << QPointF(xa, it.value()) << QPointF(xb, it.value());
    QPen pen(ink);
    pen.setWidthF(2.5);
    roof->setPen(pen);
    auto* g5 = new QLineSeries;
    g5->setName(QObject::tr("G5 (%1%): %2 GB/s").arg(100 * g5_share, 0, 'f', 0).arg(format_gbs(g5_share * it.value())));
    *g5 << QPointF(xa, g5_share * it.value()) << QPointF(xb, g5_share * it.value());
    QPen dash(QColor(0xd0, 0x3a, 0x3a));
    dash.setWidthF(2);
    dash.setStyle(Qt::DashLine);
    g5->setPen(dash);
    for (QLineSeries* s : {roof, g5}) {
      chart->addSeries(s);
      s->attachAxis(x);
      s->attachAxis(y);
    }
  }
  // The legend names the lines only: a legend shares its width equally among its entries, so
  // with the runs in it every name would be cut. A run is named by its point's label, unless
  // points sit almost on one another and the labels would print over each other; the table
  // shows every run's colour beside its row.
  auto crowded = [&](const RooflinePoint& p) {
    for (const auto& q : points) {
      if (q.run_id == p.run_id) continue;
      const double rx = q.bytes_per_token / p.bytes_per_token, ry = q.effective_gbs / p.effective_gbs;
      if (rx < 1.25 && rx > 0.8 && ry < 1.3 && ry > 0.77) return true;
    }
    return false;
  };
  int i = 0;
  for (const auto& p : points) {
    auto* s = new QScatterSeries;
    s->setName(p.tag());
    s->setMarkerSize(11);
    s->setColor(run_color(i++));
    s->setBorderColor(ink);
    *s << QPointF(p.bytes_per_token / 1e6, p.effective_gbs);
    // A format without @-placeholders is printed as it is: the run's own label beside its point.
    QString text = p.label;
    s->setPointLabelsFormat(text.replace('@', ' ') +
                            (p.measured_read_gbs > 0 ? QString(" (%1%)").arg(100 * p.share(), 0, 'f', 0) : QString()));
    s->setPointLabelsVisible(!crowded(p));
    s->setPointLabelsClipping(false);
    s->setPointLabelsColor(ink);
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
    for (QLegendMarker* m : chart->legend()->markers(s)) m->setVisible(false);
  }
  chart->legend()->setAlignment(Qt::AlignBottom);
}

}  // namespace p64::ui
