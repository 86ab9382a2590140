#include "ui/charts/depth_chart.h"

#include <QChart>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>

#include <algorithm>

#include "ui/core/theme.h"
#include "ui/models/depth_sweep_points.h"

namespace p64::ui {

void fill_depth_chart(QChart* chart, const std::vector<DepthSweepPoint>& points) {
  chart->removeAllSeries();
  for (QAbstractAxis* a : chart->axes()) chart->removeAxis(a);
  style_chart(chart);
  if (points.empty()) {
    chart->setTitle(QObject::tr("Depth sweep — give depths (e.g. 0,512,4096) or choose a sweep's run"));
    return;
  }
  chart->setTitle(QObject::tr("Decode against depth: tok/s and effective GB/s (weights + KV read)"));
  std::vector<DepthSweepPoint> by_depth = points;
  std::sort(by_depth.begin(), by_depth.end(), [](const auto& a, const auto& b) { return a.depth < b.depth; });

  auto* tok = new QLineSeries;
  tok->setName(QObject::tr("decode tok/s (median)"));
  tok->setPointsVisible(true);
  tok->setColor(series_a_color());
  auto* gbs = new QLineSeries;
  gbs->setName(QObject::tr("effective GB/s"));
  gbs->setPointsVisible(true);
  gbs->setColor(series_b_color());
  auto* roof = new QLineSeries;
  roof->setName(QObject::tr("read roofline tok/s"));
  QPen dash(QColor(0xd0, 0x3a, 0x3a));
  dash.setWidthF(2);
  dash.setStyle(Qt::DashLine);
  roof->setPen(dash);
  double tok_hi = 0, gbs_hi = 0;
  for (const DepthSweepPoint& p : by_depth) {
    *tok << QPointF(p.depth, p.tok_s);
    *gbs << QPointF(p.depth, p.effective_gbs);
    tok_hi = std::max(tok_hi, p.tok_s + p.tok_s_stddev);
    gbs_hi = std::max(gbs_hi, p.effective_gbs);
    if (p.roof_tok_s() > 0) *roof << QPointF(p.depth, p.roof_tok_s());
  }
  // The roofline is drawn only when every depth has one: a line through some points would lie.
  const bool with_roof = roof->count() == static_cast<int>(by_depth.size());
  if (with_roof)
    for (const QPointF& p : roof->points()) tok_hi = std::max(tok_hi, p.y());

  auto* x = new QValueAxis;
  x->setTitleText(QObject::tr("depth (tokens prefilled before decode)"));
  x->setRange(0, std::max(1, by_depth.back().depth));
  x->setLabelFormat("%.0f");
  auto* y_tok = new QValueAxis;
  y_tok->setTitleText(QObject::tr("decode tok/s"));
  y_tok->setRange(0, tok_hi > 0 ? tok_hi * 1.1 : 1);
  auto* y_gbs = new QValueAxis;
  y_gbs->setTitleText(QObject::tr("effective GB/s"));
  y_gbs->setRange(0, gbs_hi > 0 ? gbs_hi * 1.1 : 1);
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y_tok, Qt::AlignLeft);
  chart->addAxis(y_gbs, Qt::AlignRight);
  for (QLineSeries* s : {tok, roof}) {
    if (s == roof && !with_roof) {
      delete roof;
      continue;
    }
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y_tok);
  }
  chart->addSeries(gbs);
  gbs->attachAxis(x);
  gbs->attachAxis(y_gbs);
  chart->legend()->setAlignment(Qt::AlignBottom);
}

}  // namespace p64::ui
