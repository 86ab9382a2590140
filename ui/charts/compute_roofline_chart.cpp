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
#include "ui/models/op_roofline_model.h"
#include "ui/models/roofline_model.h"

namespace p64::ui {

namespace {
struct Roof {
  double read_gbs = 0;
  double ceiling_flop_s = 0;  // 0 = none
  QString kind;               // nominal | passport | measured | none
};

struct Marker {
  QString name;  // the point's label
  double intensity = 0, gflop_s = 0;
  bool circle = false;  // a prefill; squares for decode
  QColor color;
};

QScatterSeries* marker_series(const Marker& m, const QColor& border) {
  auto* s = new QScatterSeries;
  s->setName(m.name);
  s->setMarkerShape(m.circle ? QScatterSeries::MarkerShapeCircle : QScatterSeries::MarkerShapeRectangle);
  s->setMarkerSize(m.circle ? 12 : 10);
  s->setColor(m.color);
  s->setBorderColor(border);
  *s << QPointF(m.intensity, m.gflop_s);
  return s;
}

// A point's label is shown where no other point sits close to it.
bool crowded(const std::vector<Marker>& all, const Marker& m) {
  int near = 0;
  for (const Marker& q : all) {
    const double rx = q.intensity / m.intensity, ry = q.gflop_s / m.gflop_s;
    near += rx < 1.25 && rx > 0.8 && ry < 1.3 && ry > 0.77 ? 1 : 0;
  }
  return near > 1;  // itself, and another
}

void draw_roofline(QChart* chart, const QMap<QString, Roof>& roofs, const std::vector<Marker>& markers) {
  double x_lo = 1e300, x_hi = 0, y_lo = 1e300, y_hi = 0;
  for (const Marker& m : markers) {
    x_lo = std::min(x_lo, m.intensity);
    x_hi = std::max(x_hi, m.intensity);
    y_lo = std::min(y_lo, m.gflop_s);
    y_hi = std::max(y_hi, m.gflop_s);
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
  QLogValueAxis* y = make_decade_axis(y_lo / 2, std::max(y_hi * 2, ceiling_top * 1.2), QObject::tr("GFLOP/s (log)"));
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
  // The legend names the lines; each point is named by its label where points do not crowd one
  // another (and by its colour in the table beside the chart).
  for (const Marker& m : markers) {
    QScatterSeries* s = marker_series(m, ink);
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
    for (QLegendMarker* lm : chart->legend()->markers(s)) lm->setVisible(false);
    s->setPointLabelsFormat(s->name());  // no @-placeholders: printed as it is
    s->setPointLabelsVisible(!crowded(markers, m));
    s->setPointLabelsClipping(false);
    s->setPointLabelsColor(ink);
  }
  chart->legend()->setAlignment(Qt::AlignBottom);
}

void clear(QChart* chart) {
  chart->removeAllSeries();
  for (QAbstractAxis* a : chart->axes()) chart->removeAxis(a);
  style_chart(chart);
}
}  // namespace

void fill_compute_roofline_chart(QChart* chart, const std::vector<RooflinePoint>& points) {
  clear(chart);
  const bool any = std::any_of(points.begin(), points.end(), [](const auto& p) { return p.decode_flops > 0; });
  if (!any) {
    chart->setTitle(points.empty() ? QObject::tr("Compute roofline — choose runs in the table")
                                   : QObject::tr("Compute roofline — the chosen runs have no FLOP count"));
    return;
  }
  chart->setTitle(QObject::tr("Compute roofline: ● prefill, ■ decode — GFLOP/s against FLOP per byte read"));
  QMap<QString, Roof> roofs;  // device -> the first chosen run's roof
  std::vector<Marker> markers;
  int i = 0;
  for (const auto& p : points) {
    const QColor color = run_color(i++);
    if (p.has_prefill()) markers.push_back({p.tag(), p.prefill_intensity(), p.prefill_flop_s() / 1e9, true, color});
    if (p.decode_flops > 0)
      markers.push_back({p.tag() + QObject::tr(" decode"), p.decode_intensity(), p.decode_flop_s() / 1e9, false, color});
    if (p.measured_read_gbs > 0 && !roofs.contains(p.device))
      roofs[p.device] = {p.measured_read_gbs, p.compute_ceiling, compute_ceiling_kind(p.compute_ceiling, p.compute_ceiling_source)};
    // The ceiling is the device's: a backend whose passport gives none (Vulkan) takes another's.
    if (p.compute_ceiling > 0 && roofs.contains(p.device) && roofs[p.device].ceiling_flop_s <= 0) {
      roofs[p.device].ceiling_flop_s = p.compute_ceiling;
      roofs[p.device].kind = compute_ceiling_kind(p.compute_ceiling, p.compute_ceiling_source);
    }
  }
  draw_roofline(chart, roofs, markers);
}

void fill_op_compute_roofline_chart(QChart* chart, const OpRooflineModel& ops, const QString& device) {
  clear(chart);
  std::vector<Marker> markers;
  for (const OpTotal& o : ops.ops())
    if (o.gflops() > 0 && o.intensity() > 0)
      markers.push_back({QString::fromStdString(o.name), o.intensity(), o.gflops(), false, series_a_color()});
  if (markers.empty()) {
    chart->setTitle(QObject::tr("Per-op compute roofline: no op with counted FLOPs (a timeline stored since schema 8)"));
    return;
  }
  chart->setTitle(QObject::tr("Per-op compute roofline: GFLOP/s of each op against FLOP per byte it moved"));
  QMap<QString, Roof> roofs;
  if (ops.ceiling_gbs() > 0) roofs[device] = {ops.ceiling_gbs(), ops.ceiling_flops(), ops.ceiling_flops_kind()};
  draw_roofline(chart, roofs, markers);
}

}  // namespace p64::ui
