// Chart export: every chart of the Roofline, A/B and Timeline panels written as PNG and SVG from a
// store of real CPU runs (stories260K), and the Scoreboard's bars chart through its export menu's
// path. Each PNG must load at the chart's size; each SVG must parse as XML with an <svg> root and
// hold the legend's series names as text. The charts carry the Save-as context menu.
#include <QtTest>

#include <QAction>
#include <QChart>
#include <QChartView>
#include <QFile>
#include <QImage>
#include <QLegend>
#include <QLegendMarker>
#include <QXmlStreamReader>

#include "engine/format/convert.h"
#include "engine/format/p64_reader.h"
#include "ui/core/ab_session.h"
#include "ui/core/lab_sessions.h"
#include "ui/shell/main_window.h"
#include "ui/core/workbench.h"
#include "ui/charts/chart_export.h"
#include "ui/models/json_table_model.h"
#include "ui/panels/roofline_panel.h"
#include "ui/panels/scoreboard_panel.h"
#include "ui/panels/timeline_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;

namespace {

struct SvgContents {
  QString error;    // empty when the file is well-formed XML
  QString root;
  QString text;     // every text node, joined
};

SvgContents read_svg(const QString& path) {
  SvgContents out;
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    out.error = "cannot open";
    return out;
  }
  QXmlStreamReader xml(&f);
  while (!xml.atEnd()) {
    xml.readNext();
    if (xml.isStartElement() && out.root.isEmpty()) out.root = xml.name().toString();
    if (xml.isCharacters() && !xml.isWhitespace()) out.text += xml.text().toString() + "\n";
  }
  if (xml.hasError()) out.error = xml.errorString();
  return out;
}

// What the legend shows (a long name may be elided at its end, so the start is what is compared).
QStringList legend_starts(QChart* chart) {
  QStringList out;
  for (QLegendMarker* m : chart->legend()->markers())
    if (m->isVisible() && !m->label().isEmpty()) out << m->label().left(8);
  return out;
}

}  // namespace

class TestChartExport : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QTemporaryDir settings_;

  // PNG at the view's pixel size, SVG well-formed with the legend's names in it.
  void check_files(QChartView* view, const QString& png, const QString& svg) {
    const QImage image(png);
    QVERIFY2(!image.isNull(), qPrintable(png));
    QCOMPARE(image.size(), view->size() * view->devicePixelRatio());
    const SvgContents s = read_svg(svg);
    QVERIFY2(s.error.isEmpty(), qPrintable(svg + ": " + s.error));
    QCOMPARE(s.root, QString("svg"));
    const QStringList names = legend_starts(view->chart());
    QVERIFY2(!names.isEmpty() || view->chart()->series().isEmpty(), qPrintable(svg + ": no legend"));
    QVERIFY2(s.text.contains(view->chart()->title().left(12)), qPrintable(svg + ": no title"));
    for (const QString& n : names) QVERIFY2(s.text.contains(n), qPrintable(QString("%1 lacks '%2'").arg(svg, n)));
  }

 private Q_SLOTS:
  void initTestCase() { test::isolate_settings(settings_); }

  void panels_export_png_and_svg() {
    Workbench wb;  // registers the backends
    const QString model = dir_.filePath("stories260K.p64");
    p64::convert_to_p64(test::shared_model("stories260K.gguf").toStdString(), model.toStdString(), {});
    const std::string db = dir_.filePath("lab.db").toStdString();
    LabRequest req{model.toStdString(), nullptr, "backend=cpu,threads=1", db, ""};
    p64::DecodeProxyParams proxy;
    proxy.decode_tokens = 8;
    proxy.prompt_tokens = 8;
    proxy.runs = 2;
    proxy.warmup = 0;
    QVERIFY(run_decode_proxy_session(req, proxy, {}).run_id > 0);
    p64::TimelineParams timeline;
    timeline.decode_tokens = 4;
    timeline.prompt_tokens = 4;
    QVERIFY(run_timeline_session(req, timeline, {}).run_id > 0);
    AbRequest ab;
    ab.model_path = model.toStdString();
    ab.config_a = "backend=cpu,threads=1";
    ab.config_b = "backend=cpu,threads=1,opt.kv_f16=1";
    ab.store_path = db;
    ab.params.runs = 2;
    ab.params.warmup = 0;
    ab.params.decode_tokens = 4;
    ab.params.prompt_tokens = 4;
    ab.params.quality_tokens = 8;
    QVERIFY(run_ab_session(ab, {}).stored.run_id > 0);

    wb.set_store_path(QString::fromStdString(db));
    MainWindow window(wb);
    window.resize(1400, 900);
    window.show();
    const QString out = dir_.filePath("charts");
    for (const QString id : {"roofline", "ab", "timeline"}) {
      window.show_panel(id);
      Panel* panel = window.panel(id);
      // The panels read the store on the job pool; wait until their main chart shows a legend (the
      // A/B's per-op split stays empty: it is measured on request, never stored).
      QVERIFY2(test::wait_until([&] { return !legend_starts(panel->chart_views().front()->chart()).isEmpty(); }, 60000),
               qPrintable(id + ": the chart stayed empty"));
      const QStringList files = save_charts(panel->chart_views(), out, id, panel->title());
      QCOMPARE(files.size(), 2 * panel->chart_views().size());
      for (int i = 0; i < panel->chart_views().size(); ++i) {
        QChartView* view = panel->chart_views()[i];
        check_files(view, files[2 * i], files[2 * i + 1]);
        QStringList menu;
        for (QAction* a : view->actions()) menu << a->text();
        QCOMPARE(menu, (QStringList{"Save Chart as PNG…", "Save Chart as SVG…"}));
      }
    }
    // The compute roofline is among them, with its roof and the runs' prefill points.
    auto* roofline = qobject_cast<RooflinePanel*>(window.panel("roofline"));
    QVERIFY(read_svg(out + "/roofline-2.svg").text.contains("GB/s, "));  // the roof: bandwidth, then the ceiling
    QVERIFY(roofline->compute_chart_view()->chart()->series().size() >= 3);

    // The Scoreboard's export menu writes the bars chart by suffix.
    window.show_panel("scoreboard");
    auto* scoreboard = qobject_cast<ScoreboardPanel*>(window.panel("scoreboard"));
    QVERIFY(test::wait_until([&] { return scoreboard->bars()->rowCount() > 0; }, 60000));
    QChartView* bars = scoreboard->chart_views().front();
    QVERIFY(scoreboard->export_to(dir_.filePath("bars.png")));
    QVERIFY(scoreboard->export_to(dir_.filePath("bars.svg")));
    check_files(bars, dir_.filePath("bars.png"), dir_.filePath("bars.svg"));
    QVERIFY(read_svg(dir_.filePath("bars.svg")).text.contains("G0"));
    QVERIFY(test::wait_until([&] { return wb.jobs().isEmpty(); }, 30000));
  }

  void unwritable_paths_are_clear_errors() {
    QChartView view(new QChart);
    view.resize(200, 100);
    for (const QString& path : {QString("/nonexistent-dir/x.png"), QString("/nonexistent-dir/x.svg")}) {
      try {
        if (path.endsWith("png")) save_chart_png(&view, path);
        else save_chart_svg(&view, path, "t");
        QFAIL("no error for an unwritable path");
      } catch (const std::exception& e) {
        QVERIFY2(QString(e.what()).contains(path), e.what());
      }
    }
  }
};

QTEST_MAIN(TestChartExport)
#include "tst_chart_export.moc"
