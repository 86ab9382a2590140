// The A/B page: its view and quality model built from a harness result (headless), the chart's
// series (bars at the medians, whiskers at min–max, a dot per run), then a real interleaved A/B
// of kv_f16 on the CPU backend driven from the panel: what the store recorded, what the page
// shows of it, and a cancelled run that stores nothing; then A on the F32 model against B on its
// Q8_0 conversion, and a B model with another vocabulary refused with the reason.
#include <QtTest>

#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSpinBox>
#include <QStackedBarSeries>

#include "engine/format/convert.h"
#include "engine/format/p64_reader.h"
#include "engine/lab/stats.h"
#include "engine/lab/store.h"
#include "engine/quant/dtype.h"

#include <nlohmann/json.hpp>
#include "engine/model/model.h"
#include "ui/core/ab_session.h"
#include "ui/core/workbench.h"
#include "ui/charts/ab_chart.h"
#include "engine/lab/plan_history.h"
#include "engine/runtime/backend.h"
#include "ui/models/ab_view.h"
#include "ui/models/optimisation_model.h"
#include "ui/models/store_snapshot.h"
#include "ui/panels/ab_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;

namespace {
p64::AbSide side(const char* config, std::vector<double> tok_s) {
  p64::AbSide s;
  s.config = p64::LabConfig::parse(config);
  s.backend = "cpu";
  for (size_t i = 0; i < tok_s.size(); ++i) {
    p64::SampleRecord r;
    r.rep = static_cast<int32_t>(i);
    r.decode_tok_s = tok_s[i];
    s.samples.push_back(r);
  }
  s.decode_tok_s = p64::min_median_max(tok_s);
  return s;
}
}  // namespace

class TestAbPanel : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QTemporaryDir settings_;

 private Q_SLOTS:
  void initTestCase() { test::isolate_settings(settings_); }

  void config_text_is_composed_and_switches_replace() {
    QCOMPARE(compose_config("cpu", " threads=2, "), std::string("backend=cpu,threads=2"));
    QCOMPARE(compose_config("", ""), std::string("backend=auto"));
    QCOMPARE(AbPanel::with_switch("threads=2,opt.kv_f16=0", "kv_f16", "1"), QString("threads=2,opt.kv_f16=1"));
    QCOMPARE(AbPanel::with_switch("", "isa", "avx2"), QString("opt.isa=avx2"));
    // What the panel composes parses as a lab configuration with the switch in it.
    const auto c = p64::LabConfig::parse(compose_config("cpu", AbPanel::with_switch("threads=1", "kv_f16", "1").toStdString()));
    QCOMPARE(c.switches.at("kv_f16"), std::string("1"));
    QCOMPARE(c.threads, 1u);
  }

  // The Reason column speaks words: the seed plan's section numbers and milestone tags stay in
  // the tooltip, for every reason the imported plan history brings.
  void optimisation_reasons_without_plan_section_numbers() {
    QCOMPARE(plain_reason("§4.2: default product path"), QString("Default product path"));
    QCOMPARE(plain_reason("§11: CUDA_DECODE ~0.74 tok/s; non-sticky chain (-> R2)"),
             QString("CUDA_DECODE ~0.74 tok/s; non-sticky chain"));
    QCOMPARE(plain_reason("registered by the cpu backend"), QString("Registered by the cpu backend"));
    auto store = p64::Store::open(dir_.filePath("reasons.db").toStdString());
    p64::import_plan_history_once(*store);
    OptimisationModel model;
    model.set_rows(load_optimisation_rows(*store));
    QVERIFY(model.rowCount() > 0);
    int with_section = 0;
    const QRegularExpression tag(R"(§|\b[MR]\d+\b)");
    for (int r = 0; r < model.rowCount(); ++r) {
      const QString shown = model.index(r, OptimisationModel::kReason).data().toString();
      const QString tip = model.index(r, OptimisationModel::kReason).data(Qt::ToolTipRole).toString();
      QVERIFY2(!shown.contains(tag), qPrintable(shown));
      if (tip.contains("§")) {
        ++with_section;
        QVERIFY(!shown.isEmpty());
      }
    }
    QVERIFY(with_section > 0);  // the plan's numbers are still there, on hover
  }

  void view_and_chart_from_a_result() {
    p64::AbResult r;
    r.a = side("backend=cpu,threads=1", {10.0, 12.0, 11.0, 10.5, 11.5});
    r.b = side("backend=cpu,threads=1,opt.kv_f16=1", {14.0, 13.0, 15.0, 13.5, 14.5});
    r.switch_name = "kv_f16";
    r.b_vs_a.pass = true;
    r.b_vs_a.positions = 8;
    r.b_vs_a.top1_agreement = 1.0;
    r.reference = "A (backend=cpu)";
    const std::vector<double> at{10, 12, 11, 10.5, 11.5}, bt{14, 13, 15, 13.5, 14.5};
    p64::VerdictInput in;
    in.a_tok_s = at;
    in.b_tok_s = bt;
    const p64::VerdictOutcome o = p64::decide_verdict(in);
    QCOMPARE(o.verdict, p64::Verdict::Win);  // every B above every A: p = 2/252

    const AbView v = make_ab_view(r, o, std::nullopt, 7);
    QCOMPARE(v.a.tok_s, (QVector<double>{10, 12, 11, 10.5, 11.5}));
    QCOMPARE(v.b.median, 14.0);
    QCOMPARE(v.run_id, qint64(7));
    QVERIFY(v.quality_pass);
    QCOMPARE(verdict_name(v.verdict), QString("WIN"));
    QVERIFY(verdict_rule_text(p64::Verdict::Rejected).contains("2%"));
    QVERIFY(verdict_rule_text(p64::Verdict::Win).contains("Mann-Whitney"));

    AbQualityModel q;
    q.set_rows(v.quality);
    QCOMPARE(q.rowCount(), 2);
    QCOMPARE(q.index(0, AbQualityModel::kResult).data().toString(), QString("PASS"));
    QCOMPARE(q.index(0, AbQualityModel::kTop1).data().toString(), QString("1.000"));
    QVERIFY(q.index(1, AbQualityModel::kResult).data().toString().contains("A is the reference"));
    p64::QualityReport failed;
    failed.pass = false;
    failed.failure = "top1_agreement 0.5 < 0.99";
    q.set_rows({AbQualityRow{"B vs A", failed, {}}});
    QCOMPARE(q.index(0, AbQualityModel::kResult).data().toString(), QString("FAIL"));  // the reasons in the tooltip
    QCOMPARE(q.index(0, AbQualityModel::kResult).data(Qt::ToolTipRole).toString(), QString("top1_agreement 0.5 < 0.99"));

    QChart chart;
    fill_ab_chart(&chart, v);
    const auto bars = test::series_of<QStackedBarSeries>(&chart);
    QCOMPARE(bars.size(), 1);
    QCOMPARE(bars[0]->count(), 2);
    QCOMPARE(bars[0]->barSets()[0]->at(0), 11.0);  // A's median in A's category
    QCOMPARE(bars[0]->barSets()[1]->at(1), 14.0);  // B's median in B's category
    const auto whiskers = test::series_of<QLineSeries>(&chart);  // QScatterSeries is not a QLineSeries
    QCOMPARE(whiskers.size(), 2);
    double lo = 1e9, hi = 0;
    for (const QPointF& p : whiskers[1]->points()) lo = std::min(lo, p.y()), hi = std::max(hi, p.y());
    QCOMPARE(lo, 13.0);
    QCOMPARE(hi, 15.0);
    const auto dots = test::series_of<QScatterSeries>(&chart);
    QCOMPARE(dots.size(), 2);
    QCOMPARE(dots[0]->count(), 5);
  }

  void ab_from_the_panel_is_recorded() {
    const QString p64_path = dir_.filePath("stories260K.p64");
    p64::convert_to_p64(test::shared_model("stories260K.gguf").toStdString(), p64_path.toStdString(), {});
    Workbench wb;
    wb.set_store_path(dir_.filePath("lab.db"));
    wb.set_model(p64_path, p64::open_p64(p64_path.toStdString()));
    AbPanel panel(wb);
    panel.show();
    panel.side_a().backend->setCurrentText("cpu");
    panel.side_b().backend->setCurrentText("cpu");
    panel.side_a().options->setText("threads=1");
    panel.side_b().options->setText("threads=1");
    // The switch picker offers the CPU backend's switches and writes opt.NAME=VALUE.
    QComboBox* picker = panel.side_b().switches;
    int kv = -1;
    for (int i = 0; i < picker->count(); ++i)
      if (picker->itemData(i).toStringList() == QStringList{"kv_f16", "1"}) kv = i;
    QVERIFY2(kv > 0, "kv_f16=1 is not offered");
    picker->setCurrentIndex(kv);
    Q_EMIT picker->activated(kv);
    QCOMPARE(panel.config_b(), QString("backend=cpu,threads=1,opt.kv_f16=1"));
    panel.runs_box()->setValue(2);
    panel.warmup_box()->setValue(0);
    panel.tokens_box()->setValue(4);
    panel.quality_tokens_box()->setValue(8);
    panel.split_box()->setChecked(true);

    QSignalSpy done(&panel, &AbPanel::ab_finished);
    panel.start_ab();
    QVERIFY(panel.running());
    QVERIFY(test::wait_until([&] { return done.count() > 0; }, 240000));
    const qint64 run_id = done.first().at(0).toLongLong();
    QVERIFY2(run_id > 0, qPrintable(panel.status_label()->text()));

    auto store = p64::Store::open(wb.store_path().toStdString());
    const auto run = store->run(run_id);
    QVERIFY(run.has_value());
    QCOMPARE(run->kind, p64::RunKind::Ab);
    QCOMPARE(store->samples(run_id).size(), size_t{4});  // 2 a side
    const auto cmp = store->comparison_for_run(run_id);
    QVERIFY(cmp.has_value());
    QCOMPARE(QString::fromStdString(cmp->switch_name), QString("kv_f16"));
    int64_t cited = 0;
    for (const auto& o : store->find_optimisations("kv_f16"))
      if (o.backend == "cpu")
        for (const auto& h : store->optimisation_history(o.id)) cited = std::max(cited, h.evidence_run_id);
    QCOMPARE(cited, run_id);

    // The page shows what was stored: the chart's bars at the stored medians, B/A, the verdict.
    auto bars = test::series_of<QStackedBarSeries>(panel.chart_view()->chart());
    QCOMPARE(bars.size(), 1);
    QCOMPARE(bars[0]->barSets()[0]->at(0), cmp->a_median);
    QCOMPARE(bars[0]->barSets()[1]->at(1), cmp->b_median);
    QCOMPARE(test::series_of<QScatterSeries>(panel.chart_view()->chart())[1]->count(), 2);
    QVERIFY(panel.ratio_label()->text().contains(QString::number(cmp->ratio_median, 'f', 3)));
    QVERIFY(panel.verdict_label()->text().contains(verdict_name(cmp->verdict)));
    QCOMPARE(panel.quality()->rowCount(), 2);
    QVERIFY(panel.recorded_label()->text().contains(QString("#%1").arg(run_id)));
    QVERIFY(panel.recorded_label()->text().contains("kv_f16"));
    // The per-op split: one stacked bar for A and one for B, a segment per op group measured.
    QVERIFY(panel.view().has_split);
    const auto split = test::series_of<QStackedBarSeries>(panel.split_chart_view()->chart());
    QCOMPARE(split.size(), 1);
    QVERIFY(split[0]->count() >= 3);  // at least RMS, ATTN, FFN
    double a_ms = 0, b_ms = 0;
    for (QBarSet* set : split[0]->barSets()) {
      QCOMPARE(set->count(), 2);
      a_ms += set->at(0);
      b_ms += set->at(1);
    }
    QVERIFY(a_ms > 0 && b_ms > 0);

    // A page opened later shows the same comparison, read back from the store.
    AbPanel reopened(wb);
    QSignalSpy loaded(&reopened, &AbPanel::reloaded);
    QVERIFY(test::wait_until([&] { return loaded.count() > 0; }, 30000));
    QCOMPARE(reopened.view().run_id, run_id);
    QCOMPARE(reopened.view().a.tok_s, panel.view().a.tok_s);
    QCOMPARE(reopened.view().ratio_median, cmp->ratio_median);
    QCOMPARE(reopened.view().verdict, cmp->verdict);
    QCOMPARE(reopened.quality()->rowCount(), 2);
    QCOMPARE(reopened.config_b().toStdString(), cmp->config_b);  // Start would repeat that comparison

    // Cancelled at once: ends as cancelled and adds no run.
    const size_t runs_before = store->runs().size();
    QSignalSpy again(&panel, &AbPanel::ab_finished);
    panel.start_ab();
    panel.cancel_ab();
    QVERIFY(test::wait_until([&] { return again.count() > 0 && !panel.running(); }, 120000));
    QCOMPARE(again.first().at(0).toLongLong(), qint64(0));
    QVERIFY(panel.status_label()->text().contains("Cancelled"));
    QCOMPARE(store->runs().size(), runs_before);
    QVERIFY(test::wait_until([&] { return wb.jobs().isEmpty(); }, 30000));
  }

  void two_models_from_the_panel() {
    const QString f32 = dir_.filePath("stories-f32.p64"), q8 = dir_.filePath("stories-q8.p64");
    const std::string gguf = test::shared_model("stories260K.gguf").toStdString();
    p64::convert_to_p64(gguf, f32.toStdString(), {});
    p64::ConvertOptions quantize;
    quantize.quant = p64::DType::Q8_0;
    p64::convert_to_p64(gguf, q8.toStdString(), quantize);
    Workbench wb;
    wb.set_store_path(dir_.filePath("two.db"));
    wb.set_model(f32, p64::open_p64(f32.toStdString()));
    AbPanel panel(wb);
    panel.show();
    for (const auto* side : {&panel.side_a(), &panel.side_b()}) {
      side->backend->setCurrentText("cpu");
      side->options->setText("threads=1");
    }
    panel.side_b().model->setText(q8);
    QCOMPARE(panel.model_a(), f32);  // A's field is empty: the open model
    QCOMPARE(panel.model_b(), q8);
    panel.runs_box()->setValue(2);
    panel.warmup_box()->setValue(0);
    panel.tokens_box()->setValue(4);
    panel.quality_tokens_box()->setValue(8);
    QSignalSpy done(&panel, &AbPanel::ab_finished);
    panel.start_ab();
    QVERIFY(test::wait_until([&] { return done.count() > 0; }, 240000));
    const qint64 run_id = done.first().at(0).toLongLong();
    QVERIFY2(run_id > 0, qPrintable(panel.status_label()->text()));

    auto store = p64::Store::open(wb.store_path().toStdString());
    const auto run = store->run(run_id);
    QVERIFY(run.has_value());
    QVERIFY2(QString::fromStdString(run->config).contains("A on stories-f32.p64, B on stories-q8.p64"),
             run->config.c_str());
    const auto summary = nlohmann::json::parse(run->summary_json);
    QCOMPARE(QString::fromStdString(summary["a"]["model"].get<std::string>()), f32);
    QCOMPARE(QString::fromStdString(summary["b"]["model"].get<std::string>()), q8);
    QVERIFY(store->find_model(q8.toStdString()).has_value());
    // Each side streamed its own weights: Q8_0 reads far fewer bytes per token than F32.
    auto bytes_per_token = [&](const char* side) {
      for (const auto& s : store->samples(run_id))
        if (s.side == side) return s.effective_gbs * 1e9 / s.decode_tok_s;
      return 0.0;
    };
    QVERIFY(bytes_per_token("b") < 0.8 * bytes_per_token("a"));
    QVERIFY(panel.view().two_models());
    QVERIFY(panel.side_b().figures->text().contains("stories-q8.p64"));
    QVERIFY(panel.verdict_label()->text().contains("different models"));
    QVERIFY(panel.recorded_label()->text().contains("Different models"));

    // A page opened later takes both model files back into its editors.
    AbPanel reopened(wb);
    QSignalSpy loaded(&reopened, &AbPanel::reloaded);
    QVERIFY(test::wait_until([&] { return loaded.count() > 0; }, 30000));
    QCOMPARE(reopened.side_b().model->text(), q8);

    // Another vocabulary: refused, and the page says why.
    const QString other = dir_.filePath("llama-tiny.p64");
    p64::convert_to_p64(test::shared_model("llama-2-tiny-random.gguf").toStdString(), other.toStdString(), {});
    panel.side_b().model->setText(other);
    QSignalSpy refused(&panel, &AbPanel::ab_finished);
    panel.start_ab();
    QVERIFY(test::wait_until([&] { return refused.count() > 0 && !panel.running(); }, 120000));
    QCOMPARE(refused.first().at(0).toLongLong(), qint64(0));
    QVERIFY2(panel.status_label()->text().contains("one vocabulary"), qPrintable(panel.status_label()->text()));
    QVERIFY(test::wait_until([&] { return wb.jobs().isEmpty(); }, 30000));
  }
};

QTEST_MAIN(TestAbPanel)
#include "tst_ab_panel.moc"
