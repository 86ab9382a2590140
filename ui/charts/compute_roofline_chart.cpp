#include "ui/charts/compute_roofline_chart.h"

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

namespace {
struct Roof {
  double read_gbs = 0;
  double ceiling_flop_s = 0;  // 0 = none
  QString kind;               // nominal | passport | none
};

QScatterSeries* run_marker(const QString& name, QScatterSeries::MarkerShape shape, const QColor& color,
                           const QColor& border, QPointF at) {
  auto* s = new QScatterSeries;
  s->setName(name);
  s->setMarkerShape(shape);
  s->setMarkerSize(shape == QScatterSeries::MarkerShapeCircle ? 12 : 10);
  s->setColor(color);
  s->setBorderColor(border);
  *s << at;
  return s;
}
}  // namespace

void fill_compute_roofline_chart(QChart* chart, const std::vector<RooflinePoint>& points) {
  chart->removeAllSeries();
  for (QAbstractAxis* a : chart->axes()) chart->removeAxis(a);
  style_chart(chart);
  const bool any = std::any_of(points.begin(), points.end(), [](const auto& p) { return p.decode_flops > 0; });
  if (!any) {
    chart->setTitle(points.empty() ? QObject::tr("Compute roofline — choose runs in the table")
                                   : QObject::tr("Compute roofline — the chosen runs have no FLOP count"));
    return;
  }
  chart->setTitle(QObject::tr("Compute roofline: ● prefill, ■ decode — GFLOP/s against FLOP per byte read"));

  double x_lo = 1e300, x_hi = 0, y_lo = 1e300, y_hi = 0;
  auto extend = [&](double intensity, double gflop_s) {
    x_lo = std::min(x_lo, intensity);
    x_hi = std::max(x_hi, intensity);
    y_lo = std::min(y_lo, gflop_s);
    y_hi = std::max(y_hi, gflop_s);
  };
  QMap<QString, Roof> roofs;  // device -> the first chosen run's roof
  for (const auto& p : points) {
    if (p.decode_flops > 0) extend(p.decode_intensity(), p.decode_flop_s() / 1e9);
    if (p.has_prefill()) extend(p.prefill_intensity(), p.prefill_flop_s() / 1e9);
    if (p.measured_read_gbs > 0 && !roofs.contains(p.device))
      roofs[p.device] = {p.measured_read_gbs, p.compute_ceiling, compute_ceiling_kind(p)};
    // The ceiling is the device's: a backend whose passport gives none (Vulkan) takes another's.
    if (p.compute_ceiling > 0 && roofs.contains(p.device) && roofs[p.device].ceiling_flop_s <= 0) {
      roofs[p.device].ceiling_flop_s = p.compute_ceiling;
      roofs[p.device].kind = compute_ceiling_kind(p);
    }
  }
  double ceiling_top = 0;  // a ceiling gets little headroom, so one just under a decade keeps it
  for (const Roof& r : roofs) {
    if (r.ceiling_flop_s <= 0) continue;
    const double ridge = r.ceiling_flop_s / 1e9 / r.read_gbs;
    x_lo = std::min(x_lo, ridge);
    x_hi = std::max(x_hi, ridge);
    ceiling_top = std::max(ceiling_top, r.ceiling_flop_s / 1e9);
  }
  QLogValueAxis* x = make_decade_axis(x_lo / 2, x_hi * 2, QObject::tr("arithmetic intensity, FLOP per byte read (log)"));
  QLogValueAxis* y = make_decade_axis(y_lo / 2, std::max(y_hi * 2, ceiling_top * 1.2), QObject::tr("achieved GFLOP/s (log)"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  const double xa = x->min(), xb = x->max();

  const QColor ink = current_theme_is_dark() ? QColor(0xee, 0xee, 0xee) : QColor(0x20, 0x20, 0x20);
  for (auto it = roofs.begin(); it != roofs.end(); ++it) {
    const Roof& r = it.value();
    auto* roof = new QLineSeries;
    roof->setPen(QPen(ink, 2.5));
    *roof << QPointF(xa, r.read_gbs * xa);
    if (r.ceiling_flop_s > 0) {
      const double peak = r.ceiling_flop_s / 1e9, ridge = peak / r.read_gbs;
      *roof << QPointF(ridge, peak) << QPointF(std::max(xb, ridge), peak);
      roof->setName(QObject::tr("%1: %2 GB/s, ceiling %3 (%4)")
                        .arg(it.key(), format_gbs(r.read_gbs), format_flop_s(r.ceiling_flop_s), r.kind));
    } else {
      *roof << QPointF(xb, r.read_gbs * xb);
      roof->setName(QObject::tr("%1: %2 GB/s, no compute ceiling").arg(it.key(), format_gbs(r.read_gbs)));
    }
    chart->addSeries(roof);
    roof->attachAxis(x);
    roof->attachAxis(y);
  }
  // As in the decode roofline, the legend names the lines and each run is named by its point's
  // label where points do not crowd one another (and by its colour in the table).
  QList<QPointF> all;
  for (const auto& p : points) {
    if (p.has_prefill()) all << QPointF(p.prefill_intensity(), p.prefill_flop_s());
    if (p.decode_flops > 0) all << QPointF(p.decode_intensity(), p.decode_flop_s());
  }
  auto crowded = [&](QPointF at) {
    int near = 0;
    for (const QPointF& q : all) {
      const double rx = q.x() / at.x(), ry = q.y() / at.y();
      near += rx < 1.25 && rx > 0.8 && ry < 1.3 && ry > 0.77 ? 1 : 0;
    }
    return near > 1;  // itself, and another
  };
  int i = 0;
  for (const auto& p : points) {
    const QColor color = run_color(i++);
    QList<QScatterSeries*> markers;
    if (p.has_prefill())
      markers << run_marker(p.tag(), QScatterSeries::MarkerShapeCircle, color, ink,
                            QPointF(p.prefill_intensity(), p.prefill_flop_s() / 1e9));
    if (p.decode_flops > 0)
      markers << run_marker(p.tag() + QObject::tr(" decode"), QScatterSeries::MarkerShapeRectangle, color, ink,
                            QPointF(p.decode_intensity(), p.decode_flop_s() / 1e9));
    for (QScatterSeries* s : markers) {
      chart->addSeries(s);
      s->attachAxis(x);
      s->attachAxis(y);
      for (QLegendMarker* m : chart->legend()->markers(s)) m->setVisible(false);
      const QPointF at(s->at(0).x(), s->at(0).y() * 1e9);
      s->setPointLabelsFormat(s->name());  // no @-placeholders: printed as it is
      s->setPointLabelsVisible(!crowded(at));
      s->setPointLabelsClipping(false);
      s->setPointLabelsColor(ink);
    }
  }
  chart->legend()->setAlignment(Qt::AlignBottom);
}

}  // namespace p64::ui
