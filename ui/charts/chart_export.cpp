#include "ui/charts/chart_export.h"

#include <QChartView>
#include <QDir>
#include <QFileInfo>
#include <QPainter>
#include <QPixmap>
#include <QSvgGenerator>

#include "engine/common/error.h"

namespace p64::ui {

namespace {
[[noreturn]] void fail(const QString& path, const QString& why) {
  throw Error(QString("%1: %2").arg(path, why).toStdString());
}
}  // namespace

void save_chart_png(QChartView* view, const QString& path) {
  const QPixmap pixels = view->grab();
  if (pixels.isNull()) fail(path, QObject::tr("the chart has no size to draw at"));
  if (!pixels.save(path, "PNG")) fail(path, QObject::tr("cannot write the PNG (is the folder writable?)"));
}

void save_chart_svg(QChartView* view, const QString& path, const QString& title) {
  if (view->size().isEmpty()) fail(path, QObject::tr("the chart has no size to draw at"));
  QSvgGenerator svg;
  svg.setFileName(path);
  svg.setSize(view->size());
  svg.setViewBox(QRect(QPoint(0, 0), view->size()));
  svg.setTitle(title);
  svg.setDescription(QObject::tr("P64 Lab chart"));
  QPainter painter;
  if (!painter.begin(&svg)) fail(path, QObject::tr("cannot write the SVG (is the folder writable?)"));
  view->render(&painter);
  painter.end();
  if (QFileInfo(path).size() == 0) fail(path, QObject::tr("the SVG came out empty"));
}

QStringList save_charts(const QList<QChartView*>& views, const QString& dir, const QString& stem,
                        const QString& title) {
  if (!QDir().mkpath(dir)) fail(dir, QObject::tr("cannot create the folder"));
  QStringList written;
  int n = 0;
  for (QChartView* v : views) {
    const QString base = QDir(dir).filePath(QString("%1-%2").arg(stem).arg(++n));
    save_chart_png(v, base + ".png");
    save_chart_svg(v, base + ".svg", title);
    written << base + ".png" << base + ".svg";
  }
  return written;
}

}  // namespace p64::ui
