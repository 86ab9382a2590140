#pragma once
// Chart images: PNG (the view's pixels) and SVG (vector: lines, markers and text as SVG elements,
// through QSvgGenerator). Each throws p64::Error naming the file when it cannot be written.
#include <QList>
#include <QString>
#include <QStringList>

class QChartView;

namespace p64::ui {

void save_chart_png(QChartView* view, const QString& path);
void save_chart_svg(QChartView* view, const QString& path, const QString& title);
// Every view as <dir>/<stem>-<n>.png and .svg, n from 1; returns the files written.
QStringList save_charts(const QList<QChartView*>& views, const QString& dir, const QString& stem,
                        const QString& title);

}  // namespace p64::ui
