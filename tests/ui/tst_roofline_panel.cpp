// The roofline page: points read from stored decode-proxy summaries (headless), the chart's
// log-log axes, the ceiling and G5 lines and one labelled point per chosen run; the compute
// roofline (prefill and decode FLOP/s against FLOP/byte under the bandwidth slope and the compute
// ceiling, with the ceiling's source); then on a real store of stories260K runs on the CPU,
// ticking runs in the table redraws both charts.
#include <QtTest>

#include <QChart>
#include <QChartView>
#include <QDoubleSpinBox>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>

#include <nlohmann/json.hpp>

#include "engine/format/convert.h"
#include "ui/core/lab_sessions.h"
#include "ui/core/workbench.h"
#include "engine/lab/model_flops.h"
#include "ui/charts/compute_roofline_chart.h"
#include "ui/charts/roofline_chart.h"
#include "ui/core/run_colors.h"
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
    // The table shows each chosen run in the colour the charts draw it in: the i-th chosen one.
    QCOMPARE(m.index(1, RooflineModel::kRun).data(Qt::DecorationRole).value<QColor>(), run_color(1));
    QVERIFY(!m.index(3, RooflineModel::kRun).data(Qt::DecorationRole).isValid());
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
    QCOMPARE(dots[1]->name(), QString("#2"));  // legends name runs by number; the label has the rest
    QCOMPARE(dots[1]->at(0).y(), 5.0);
  }

  // A run that recorded its FLOPs and ceiling, and one from before (FLOPs from the stored model's
  // hyperparameters, the ceiling from its passport), on the compute roofline.
  void compute_roofline_from_recorded_and_stored_figures() {
    p64::RunRecord recorded = run(7, 10.0, 2.0, 8.0);
    auto j = nlohmann::json::parse(recorded.summary_json);
    j["params"] = {{"prompt_tokens", 16}, {"decode_tokens", 32}};
    j["prefill_tok_s"] = {{"median", 100.0}};
    j["flops"] = {{"decode_per_token", 1e8}, {"prefill", 1.6e9}, {"prefill_bytes", 2e8}};
    j["compute_ceiling"] = {{"flops", 2e11}, {"source", "nominal: 2 cores × 8 fp32 lanes (avx2) × 2 (FMA) × 6.25 GHz (x)"}};
    recorded.summary_json = j.dump();
    const auto p = roofline_point(recorded);
    QVERIFY(p.has_value());
    QCOMPARE(p->prefill_flop_s(), 1.6e9 * 100.0 / 16);  // FLOPs of the prompt × prompts per second
    QCOMPARE(p->prefill_intensity(), 8.0);
    QCOMPARE(p->decode_flop_s(), 1e8 * 10.0);
    QCOMPARE(p->decode_intensity(), 1e8 / (2.0e9 / 10.0));
    QCOMPARE(compute_ceiling_kind(p->compute_ceiling, p->compute_ceiling_source), QString("nominal"));
    RooflineModel m;
    m.set_points({*p});
    QCOMPARE(m.index(0, RooflineModel::kPrefillFlops).data().toString(), QString("10.0 GFLOP/s"));
    QCOMPARE(m.index(0, RooflineModel::kComputeCeiling).data().toString(), QString("200 GFLOP/s (nominal)"));
    QVERIFY(m.index(0, RooflineModel::kComputeCeiling).data(Qt::ToolTipRole).toString().contains("6.25 GHz"));

    // Stored before FLOPs were recorded: the model record and the passport fill them in.
    p64::RunRecord old = run(8, 20.0, 4.0, 8.0, "gpu0");
    auto k = nlohmann::json::parse(old.summary_json);
    k["params"] = {{"prompt_tokens", 4}, {"decode_tokens", 8}};
    k["prefill_tok_s"] = {{"median", 50.0}};
    k["weight_bytes"] = 1e6;
    k["kv_bytes_per_position"] = 1000.0;
    old.summary_json = k.dump();
    p64::ModelRecord model;
    model.name = "toy";
    model.n_layer = 2, model.n_embd = 32, model.n_head = 4, model.n_head_kv = 4, model.n_ff = 64, model.n_vocab = 96;
    p64::Passport gpu;
    gpu.device.backend = "cuda";
    gpu.device.peak_flops = 5e13;
    const auto q = roofline_point(old, "toy", &model, &gpu);
    QVERIFY(q.has_value());
    const p64::ModelFlops f = p64::model_flops(model);
    QCOMPARE(q->prefill_flops, f.prefill(4));
    QCOMPARE(q->decode_flops, f.decode_token(4 + 4.5));
    QCOMPARE(q->prefill_bytes, 1e6 + 4 * 1000.0);
    QVERIFY(q->flops_source.contains("hyperparameters"));
    QCOMPARE(q->compute_ceiling, 5e13);
    QCOMPARE(compute_ceiling_kind(q->compute_ceiling, q->compute_ceiling_source), QString("passport"));
    // Without model or passport the run keeps its decode point and says it has no ceiling.
    const auto bare = roofline_point(old);
    QVERIFY(bare.has_value());
    QVERIFY(!bare->has_prefill());
    QCOMPARE(bare->compute_ceiling, 0.0);
    QVERIFY(!bare->compute_ceiling_source.isEmpty());

    QChart chart;
    fill_compute_roofline_chart(&chart, {*p, *q});
    QCOMPARE(chart.axes().size(), 2);
    for (QAbstractAxis* a : chart.axes()) QVERIFY(qobject_cast<QLogValueAxis*>(a));
    const auto roofs = test::series_of<QLineSeries>(&chart);
    QCOMPARE(roofs.size(), 2);  // one per device
    for (QLineSeries* roof : roofs) {
      QCOMPARE(roof->count(), 3);  // the bandwidth slope, the ridge, the flat ceiling
      QCOMPARE(roof->at(0).y(), 8.0 * roof->at(0).x());  // both read 8 GB/s; GB/s × FLOP/byte = GFLOP/s
      QCOMPARE(roof->at(1).y(), roof->at(2).y());       // flat from the ridge on
    }
    const QLineSeries* cpu_roof = roofs[0]->name().startsWith("cpu0") ? roofs[0] : roofs[1];
    QCOMPARE(cpu_roof->at(1), QPointF(200.0 / 8.0, 200.0));  // ridge at ceiling ÷ bandwidth
    QVERIFY(cpu_roof->name().contains("nominal"));
    const auto dots = test::series_of<QScatterSeries>(&chart);
    QCOMPARE(dots.size(), 4);  // a prefill circle and a decode square per run
    QCOMPARE(dots[0]->markerShape(), QScatterSeries::MarkerShapeCircle);
    QCOMPARE(dots[0]->at(0), QPointF(8.0, 10.0));  // FLOP/byte, GFLOP/s
    QCOMPARE(dots[1]->markerShape(), QScatterSeries::MarkerShapeRectangle);
    QCOMPARE(dots[1]->color(), dots[0]->color());  // one colour per run

    // A Vulkan run on the same device (its passport has no peak) shares the CUDA run's ceiling.
    RooflinePoint vk = *q;
    vk.run_id = 9;
    vk.compute_ceiling = 0;
    vk.compute_ceiling_source = "none: the vulkan passport gives no peak FLOP/s";
    fill_compute_roofline_chart(&chart, {vk, *q});
    const auto shared = test::series_of<QLineSeries>(&chart);
    QCOMPARE(shared.size(), 1);
    QCOMPARE(shared[0]->count(), 3);
    QCOMPARE(shared[0]->at(2).y(), 5e13 / 1e9);
    QVERIFY(shared[0]->name().contains("passport"));

    fill_compute_roofline_chart(&chart, {*bare});  // a run without FLOPs draws its decode square only
    QCOMPARE(test::series_of<QScatterSeries>(&chart).size(), 0);
    QVERIFY(chart.title().contains("no FLOP count"));
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
      QVERIFY(p.has_prefill());          // decode-proxy records FLOPs from the tensor shapes
      QVERIFY(p.prefill_intensity() > p.decode_intensity());  // a prompt reads the weights once for 4 tokens
      QVERIFY2(!p.compute_ceiling_source.isEmpty(), "the ceiling (or why there is none) is stated");
      // The CPU passport measures its ceiling, and no measured point may sit above it.
      QVERIFY2(p.compute_ceiling_source.startsWith("measured"), qPrintable(p.compute_ceiling_source));
      QVERIFY2(p.prefill_flop_s() < p.compute_ceiling, qPrintable(p.compute_ceiling_source));
      QVERIFY(p.decode_flop_s() < p.compute_ceiling);
    }
    QChart* compute = panel.compute_chart_view()->chart();
    QCOMPARE(test::series_of<QScatterSeries>(compute).size(), 4);  // prefill + decode of both runs
    QChart* chart = panel.chart_view()->chart();
    QCOMPARE(test::series_of<QScatterSeries>(chart).size(), 2);
    QVERIFY(test::series_of<QLineSeries>(chart).size() >= 2);
    panel.runs()->set_chosen(panel.runs()->points().front().run_id, false);
    QCOMPARE(test::series_of<QScatterSeries>(chart).size(), 1);
    QCOMPARE(test::series_of<QScatterSeries>(compute).size(), 2);
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
