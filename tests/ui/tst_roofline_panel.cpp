// The roofline page: points read from stored decode-proxy summaries (headless), the chart's
// log-log axes, the ceiling and G5 lines and one labelled point per chosen run; then on a real
// store of stories260K runs on the CPU, ticking runs in the table redraws the chart.
#include <QtTest>

#include <QChart>
#include <QChartView>
#include <QDoubleSpinBox>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>

#include <nlohmann/json.hpp>

#include "engine/format/convert.h"
#include "ui/app/lab_sessions.h"
#include "ui/app/workbench.h"
#include "ui/charts/roofline_chart.h"
#include "ui/models/roofline_model.h"
#include "ui/panels/roofline_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;

namespace {
p64::RunRecord run(qint64 id, double tok_s, double gbs, double ceiling, const char* device = "cpu0") {
  p64::RunRecord r;
  r.id = id;
  r.backend = "cpu";
  r.device = device;
  r.config = "backend=cpu,threads=1";
  r.summary_json = nlohmann::json{{"decode_tok_s", {{"median", tok_s}}},
                                  {"effective_gbs", {{"median", gbs}}},
                                  {"measured_read_gbs", ceiling}}
                       .dump();
  return r;
}
}  // namespace

class TestRooflinePanel : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QTemporaryDir settings_;

 private Q_SLOTS:
  void initTestCase() { test::isolate_settings(settings_); }

  void points_from_summaries() {
    const auto p = roofline_point(run(4, 10.0, 2.0, 8.0));
    QVERIFY(p.has_value());
    QCOMPARE(p->bytes_per_token, 2.0e9 / 10.0);  // GB/s ÷ tok/s when the summary has no bytes
    QCOMPARE(p->share(), 0.25);
    QVERIFY(p->label.startsWith("#4 "));
    QVERIFY(!roofline_point(run(5, 0.0, 2.0, 8.0)));  // no decode figure: not on the roofline
    p64::RunRecord bad = run(6, 1, 1, 1);
    bad.summary_json = "not json";
    QVERIFY(!roofline_point(bad));

    RooflineModel m;
    std::vector<RooflinePoint> pts;
    for (qint64 id = 1; id <= 4; ++id) pts.push_back(*roofline_point(run(id, 10.0 * id, 1.0 * id, 8.0)));
    m.set_points(pts, 3);
    QCOMPARE(m.rowCount(), 4);
    QCOMPARE(m.chosen().size(), size_t{3});  // the newest three
    QCOMPARE(m.index(0, RooflineModel::kRun).data(Qt::CheckStateRole).toInt(), int(Qt::Checked));
    QCOMPARE(m.index(3, RooflineModel::kRun).data(Qt::CheckStateRole).toInt(), int(Qt::Unchecked));
    QSignalSpy changed(&m, &RooflineModel::chosen_changed);
    m.set_chosen(4, false);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(m.chosen().size(), size_t{2});
    m.set_points(pts, 3);  // a reload keeps the user's choice
    QCOMPARE(m.chosen().size(), size_t{2});

    QChart chart;
    std::vector<RooflinePoint> chosen{*roofline_point(run(1, 10, 2.0, 8.0)), *roofline_point(run(2, 20, 5.0, 8.0)),
                                      *roofline_point(run(3, 30, 1.0, 20.0, "gpu0"))};
    fill_roofline_chart(&chart, chosen, 0.4);
    for (QAbstractAxis* a : chart.axes()) QVERIFY(qobject_cast<QLogValueAxis*>(a));
    QCOMPARE(chart.axes().size(), 2);
    const auto lines = test::series_of<QLineSeries>(&chart);
    QCOMPARE(lines.size(), 4);  // ceiling + G5 for each of the two devices
    QList<double> levels;
    for (QLineSeries* l : lines) {
      QCOMPARE(l->count(), 2);
      QCOMPARE(l->at(0).y(), l->at(1).y());  // horizontal
      levels << l->at(0).y();
    }
    std::sort(levels.begin(), levels.end());
    QCOMPARE(levels, (QList<double>{0.4 * 8.0, 8.0, 0.4 * 20.0, 20.0}));
    const auto dots = test::series_of<QScatterSeries>(&chart);
    QCOMPARE(dots.size(), 3);
    QVERIFY(dots[1]->pointLabelsVisible());
    QVERIFY(dots[1]->pointLabelsFormat().startsWith("#2 "));
    QCOMPARE(dots[1]->at(0).y(), 5.0);
  }

  void panel_draws_the_chosen_stored_runs() {
    const QString model = dir_.filePath("stories260K.p64");
    p64::convert_to_p64(test::shared_model("stories260K.gguf").toStdString(), model.toStdString(), {});
    const QString db = dir_.filePath("lab.db");
    Workbench wb;  // registers the backends
    wb.set_store_path(db);
    for (const char* config : {"backend=cpu,threads=1", "backend=cpu,threads=2"}) {
      LabRequest req{model.toStdString(), nullptr, config, db.toStdString(), ""};
      p64::DecodeProxyParams params;
      params.decode_tokens = 8;
      params.prompt_tokens = 4;
      params.runs = 2;
      params.warmup = 0;
      QVERIFY(run_decode_proxy_session(req, params, {}).run_id > 0);
    }
    RooflinePanel panel(wb);
    panel.show();
    QSignalSpy loaded(&panel, &RooflinePanel::reloaded);
    QVERIFY(test::wait_until([&] { return loaded.count() > 0; }, 30000));
    QCOMPARE(panel.runs()->rowCount(), 2);
    for (const auto& p : panel.runs()->points()) {
      QVERIFY(p.effective_gbs > 0);
      QVERIFY(p.measured_read_gbs > 0);  // the CPU passport's bandwidth is measured for every run
    }
    QChart* chart = panel.chart_view()->chart();
    QCOMPARE(test::series_of<QScatterSeries>(chart).size(), 2);
    QVERIFY(test::series_of<QLineSeries>(chart).size() >= 2);
    panel.runs()->set_chosen(panel.runs()->points().front().run_id, false);
    QCOMPARE(test::series_of<QScatterSeries>(chart).size(), 1);
    // The G5 line follows the spin box.
    panel.g5_box()->setValue(50);
    const auto lines = test::series_of<QLineSeries>(chart);
    const double ceiling = panel.runs()->chosen().front().measured_read_gbs;
    bool half = false;
    for (QLineSeries* l : lines) half = half || qFuzzyCompare(l->at(0).y(), 0.5 * ceiling);
    QVERIFY(half);
    QVERIFY(test::wait_until([&] { return wb.jobs().isEmpty(); }, 30000));
  }
};

QTEST_MAIN(TestRooflinePanel)
#include "tst_roofline_panel.moc"
