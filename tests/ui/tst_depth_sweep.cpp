// A depth sweep in the workbench: the Runs panel's Depths field runs decode-proxy once per depth
// through the engine call the CLI uses, and the Depth sweep tab charts tok/s and effective GB/s
// against depth, from the session or from a stored sweep's runs. The points and the chart are
// tested headless; the panel end to end on the CPU backend.
#include <QtTest>

#include <QChart>
#include <QChartView>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QSpinBox>

#include <nlohmann/json.hpp>

#include "engine/format/convert.h"
#include "engine/format/p64_reader.h"
#include "engine/lab/store.h"
#include "ui/core/workbench.h"
#include "ui/charts/depth_chart.h"
#include "ui/models/depth_sweep_points.h"
#include "ui/models/run_table_model.h"
#include "ui/models/store_snapshot.h"
#include "ui/panels/runs_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;

namespace {

RunRow sweep_row(qint64 id, int depth, const char* started, double tok_s) {
  RunRow r;
  r.run.id = id;
  r.run.kind = p64::RunKind::DecodeProxy;
  r.run.model_id = 1;
  r.run.config = "backend=cpu";
  r.run.params_json = nlohmann::json{{"depth", depth}, {"depth_sweep", {0, 64}}, {"sweep_started_at", started}}.dump();
  r.run.summary_json = nlohmann::json{{"decode_tok_s", {{"median", tok_s}, {"stddev", 0.5}}},
                                      {"effective_gbs", {{"median", tok_s / 10}}},
                                      {"bytes_per_token", 1e8},
                                      {"measured_read_gbs", 20.0}}
                           .dump();
  return r;
}

}  // namespace

class TestDepthSweep : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QTemporaryDir settings_;

 private Q_SLOTS:
  void initTestCase() { test::isolate_settings(settings_); }

  // Two sweeps of one list are told apart by their start; a run of no sweep has no points.
  void stored_runs_group_into_their_own_sweep() {
    std::vector<RunRow> rows = {sweep_row(1, 64, "2026-12-01T10:00:00Z", 8), sweep_row(2, 0, "2026-12-01T10:00:00Z", 12),
                                sweep_row(3, 0, "2026-12-02T09:00:00Z", 30), sweep_row(4, 64, "2026-12-02T09:00:00Z", 25)};
    RunRow plain;
    plain.run.id = 5;
    plain.run.kind = p64::RunKind::DecodeProxy;
    plain.run.params_json = R"({"tokens": 4, "prompt_tokens": 4})";
    rows.push_back(plain);

    const auto first = stored_sweep_points(rows, rows[0].run);
    QCOMPARE(first.size(), size_t{2});
    QCOMPARE(first[0].depth, 0);  // by depth, whatever order they ran in
    QCOMPARE(first[0].run_id, qint64{2});
    QCOMPARE(first[0].tok_s, 12.0);
    QCOMPARE(first[0].tok_s_stddev, 0.5);
    QCOMPARE(first[1].run_id, qint64{1});
    QCOMPARE(first[1].roof_tok_s(), 20.0 * 1e9 / 1e8);
    QCOMPARE(stored_sweep_points(rows, rows[3].run)[1].tok_s, 25.0);
    QVERIFY(stored_sweep_points(rows, plain.run).empty());
  }

  void the_chart_draws_tok_s_gbs_and_the_roofline_against_depth() {
    QChart chart;
    fill_depth_chart(&chart, {});
    QVERIFY(chart.series().isEmpty());
    QVERIFY(chart.title().contains("give depths"));

    std::vector<DepthSweepPoint> points(3);
    const int depths[] = {4096, 0, 512};
    for (int i = 0; i < 3; ++i) {
      points[i].depth = depths[i];
      points[i].tok_s = 100.0 - i;
      points[i].effective_gbs = 1.0 + i;
      points[i].bytes_per_token = 1e8;
      points[i].measured_read_gbs = 20;
    }
    fill_depth_chart(&chart, points);
    auto lines = test::series_of<QLineSeries>(&chart);
    QCOMPARE(lines.size(), 3);  // tok/s, roofline, GB/s
    QCOMPARE(lines[0]->count(), 3);
    QCOMPARE(lines[0]->at(0).x(), 0.0);  // sorted by depth
    QCOMPARE(lines[0]->at(2).x(), 4096.0);
    QCOMPARE(lines[0]->at(2).y(), 100.0);
    QCOMPARE(lines[1]->at(0).y(), 200.0);  // 20 GB/s over 100 MB per token
    QCOMPARE(lines[2]->at(1).y(), 3.0);    // depth 512's GB/s
    QCOMPARE(chart.axes(Qt::Vertical).size(), 2);

    points[1].measured_read_gbs = 0;  // one depth without a ceiling: no roofline at all
    fill_depth_chart(&chart, points);
    QCOMPARE(test::series_of<QLineSeries>(&chart).size(), 2);
  }

  void a_sweep_from_the_runs_panel_stores_a_run_per_depth_and_charts_them() {
    const QString model = dir_.filePath("stories260K.p64");
    p64::convert_to_p64(test::shared_model("stories260K.gguf").toStdString(), model.toStdString(), {});
    Workbench wb;
    wb.set_store_path(dir_.filePath("lab.db"));
    wb.set_model(model, p64::open_p64(model.toStdString()));
    RunsPanel panel(wb);
    panel.config_edit()->setText("backend=cpu,threads=1");
    panel.tokens_box()->setValue(4);
    panel.runs_box()->setValue(2);
    panel.warmup_box()->setValue(0);

    // A bad list is the engine's message, and nothing starts.
    panel.depth_edit()->setText("0,,16");
    QVERIFY(!panel.prompt_box()->isEnabled());
    panel.start_decode_proxy();
    QVERIFY(!panel.session_running());
    QVERIFY2(panel.result_label()->text().contains("item 2 of '0,,16' is empty"),
             qPrintable(panel.result_label()->text()));

    panel.depth_edit()->setText("16,0");
    QSignalSpy done(&panel, &RunsPanel::session_finished);
    panel.start_decode_proxy();
    QVERIFY(panel.session_running());
    QVERIFY(test::wait_until([&] { return done.count() > 0; }, 120000));
    const qint64 last = done.first().at(0).toLongLong();
    QVERIFY2(last > 0, qPrintable(panel.result_label()->text()));
    QVERIFY2(panel.result_label()->text().contains("at depth 16"), qPrintable(panel.result_label()->text()));

    auto store = p64::Store::open(wb.store_path().toStdString());
    std::vector<int> stored;
    for (const auto& run : store->runs()) {
      const auto params = nlohmann::json::parse(run.params_json, nullptr, false);
      if (params.is_object() && params.contains("depth")) stored.push_back(params["depth"].get<int>());
    }
    QCOMPARE(stored, (std::vector<int>{16, 0}));
    auto lines = test::series_of<QLineSeries>(panel.depth_chart()->chart());
    QVERIFY(!lines.isEmpty());
    QCOMPARE(lines[0]->count(), 2);
    QCOMPARE(lines[0]->at(1).x(), 16.0);

    // Choosing a stored run of the sweep charts the sweep again.
    QVERIFY(test::wait_until([&] { return panel.runs()->row_of_run(last) >= 0; }, 30000));
    // The sweep's runs share a label (none here): the table's label column names the depth.
    QCOMPARE(panel.runs()->index(panel.runs()->row_of_run(last), RunTableModel::kLabel).data().toString(),
             QString("depth 0"));
    fill_depth_chart(panel.depth_chart()->chart(), {});
    QSignalSpy shown(&panel, &RunsPanel::run_shown);
    panel.select_run(last);
    QVERIFY(test::wait_until([&] { return shown.count() > 0; }, 30000));
    QCOMPARE(test::series_of<QLineSeries>(panel.depth_chart()->chart()).value(0)->count(), 2);
    QVERIFY(test::wait_until([&] { return wb.jobs().isEmpty(); }, 30000));
  }
};

QTEST_MAIN(TestDepthSweep)
#include "tst_depth_sweep.moc"
