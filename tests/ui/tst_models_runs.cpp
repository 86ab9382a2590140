// End to end through the panels on the CPU backend: make a tiny synthetic model (synth ->
// convert -> open), inspect it, verify it, run decode-proxy and timeline from the Runs panel,
// and check what reached the store and the charts.
#include <QtTest>

#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QStackedBarSeries>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

#include "engine/lab/store.h"
#include "engine/model/model.h"
#include "ui/core/workbench.h"
#include "ui/models/p64_tables.h"
#include "ui/models/run_table_model.h"
#include "ui/models/sample_table_model.h"
#include "ui/charts/timeline_track_view.h"
#include "ui/models/timeline_model.h"
#include "ui/models/timeline_spread_model.h"
#include "ui/panels/models_panel.h"
#include "ui/panels/runs_panel.h"
#include "ui/panels/timeline_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;

class TestModelsRuns : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QTemporaryDir settings_;
  Workbench* wb_ = nullptr;
  ModelsPanel* models_ = nullptr;
  RunsPanel* runs_ = nullptr;
  TimelinePanel* timeline_ = nullptr;

 private Q_SLOTS:
  void initTestCase() {
    test::isolate_settings(settings_);
    wb_ = new Workbench(this);
    wb_->set_store_path(dir_.filePath("lab.db"));
    wb_->set_backend("cpu");
    models_ = new ModelsPanel(*wb_);
    runs_ = new RunsPanel(*wb_);
    timeline_ = new TimelinePanel(*wb_);
    models_->set_interactive(false);
  }

  void cleanupTestCase() {
    wb_->cancel_all();
    QVERIFY(test::wait_until([&] { return wb_->jobs().isEmpty(); }, 30000));
    delete timeline_;
    delete runs_;
    delete models_;
  }

  void synthetic_model_opens_and_inspects() {
    QVERIFY2(runs_->result_label()->text().contains("Open a model"), qPrintable(runs_->result_label()->text()));
    models_->set_synth_path(dir_.filePath("tiny.gguf"));
    QSignalSpy opened(models_, &ModelsPanel::opened);
    QSignalSpy failed(models_, &ModelsPanel::open_failed);
    models_->new_synthetic_model();
    QVERIFY(test::wait_until([&] { return opened.count() > 0 || failed.count() > 0; }, 120000));
    QCOMPARE(failed.count(), 0);
    QVERIFY(wb_->model() != nullptr);
    QCOMPARE(wb_->model_path(), dir_.filePath("tiny.p64"));
    const auto& hp = wb_->model()->hparams();
    QCOMPARE(models_->hparams()->value("n_layer"), QString::number(hp.n_layer));
    // Every tensor of the model is listed, with its dtype named.
    QCOMPARE(models_->tensors()->rowCount(), static_cast<int>(wb_->model()->tensors().size()));
    QVERIFY(!models_->tensors()->index(0, TensorTableModel::kType).data().toString().isEmpty());
    // One manifold row per layer plus the global row; a chart per coordinate with a point per layer.
    QCOMPARE(models_->manifold()->rowCount(), static_cast<int>(hp.n_layer) + 1);
    QCOMPARE(models_->manifold()->coordinate_across_layers(0).size(), static_cast<qsizetype>(hp.n_layer));
    QCOMPARE(models_->chart_views().size(), 10);
    QVERIFY(!models_->chart_views().first()->chart()->series().isEmpty());
    // The Runs page no longer asks for a model: it names the open one.
    QVERIFY2(!runs_->result_label()->text().contains("Open a"), qPrintable(runs_->result_label()->text()));
    QVERIFY2(runs_->result_label()->text().contains("tiny.p64"), qPrintable(runs_->result_label()->text()));
  }

  // A truncated .p64 fails to open; the message points to Verify, and Verify is there to press
  // and checks that file (not the model open before).
  void a_truncated_file_points_to_a_verify_that_runs() {
    const QString truncated = dir_.filePath("truncated.p64");
    {
      QFile in(dir_.filePath("tiny.p64"));
      QVERIFY(in.open(QIODevice::ReadOnly));
      QFile out(truncated);
      QVERIFY(out.open(QIODevice::WriteOnly));
      out.write(in.read(in.size() / 2));
    }
    Workbench wb;
    wb.set_backend("cpu");
    ModelsPanel panel(wb);
    panel.set_interactive(false);
    QVERIFY(!panel.verify_button()->isEnabled());
    QSignalSpy failed(&panel, &ModelsPanel::open_failed);
    panel.open(truncated);
    QVERIFY(test::wait_until([&] { return failed.count() > 0 && wb.jobs().isEmpty(); }, 60000));
    QVERIFY(panel.title_label()->text().contains("Verify"));
    QVERIFY(panel.verify_button()->isEnabled());
    QSignalSpy verified(&panel, &ModelsPanel::verified);
    panel.verify();
    QVERIFY(test::wait_until([&] { return verified.count() > 0; }, 60000));
    QCOMPARE(verified.first().at(0).toBool(), false);
    QVERIFY(test::wait_until([&] { return wb.jobs().isEmpty(); }, 30000));
  }

  // A llama2.c checkpoint opens with the tokenizer shipped beside it; without one (and no
  // dialog to ask) the failure says a tokenizer is needed.
  void a_llama2c_checkpoint_opens_with_the_tokenizer_beside_it() {
    QTemporaryDir with_tok, without_tok;
    QVERIFY(QFile::copy(test::shared_model("stories260K.bin"), with_tok.filePath("stories260K.bin")));
    QVERIFY(QFile::copy(test::shared_model("tok512.bin"), with_tok.filePath("tok512.bin")));
    QVERIFY(QFile::copy(test::shared_model("stories260K.bin"), without_tok.filePath("stories260K.bin")));
    Workbench wb;
    wb.set_backend("cpu");
    ModelsPanel panel(wb);
    panel.set_interactive(false);
    QSignalSpy opened(&panel, &ModelsPanel::opened);
    QSignalSpy failed(&panel, &ModelsPanel::open_failed);
    panel.open(with_tok.filePath("stories260K.bin"));
    QVERIFY(test::wait_until([&] { return (opened.count() > 0 || failed.count() > 0) && wb.jobs().isEmpty(); }, 60000));
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(0).toString()));
    QVERIFY(wb.model() != nullptr);
    QCOMPARE(wb.model()->vocab().size(), size_t(512));
    panel.open(without_tok.filePath("stories260K.bin"));
    QVERIFY(test::wait_until([&] { return failed.count() > 0 && wb.jobs().isEmpty(); }, 60000));
    QVERIFY2(failed.first().at(0).toString().contains("tokenizer"), qPrintable(failed.first().at(0).toString()));
  }

  void verify_passes() {
    QSignalSpy verified(models_, &ModelsPanel::verified);
    models_->verify();
    QVERIFY(test::wait_until([&] { return verified.count() > 0; }, 60000));
    QVERIFY2(verified.first().at(0).toBool(), qPrintable(verified.first().at(1).toString()));
  }

  void decode_proxy_from_the_panel() {
    runs_->config_edit()->setText("backend=cpu,threads=1");
    runs_->tokens_box()->setValue(6);
    runs_->prompt_box()->setValue(6);
    runs_->runs_box()->setValue(2);
    runs_->warmup_box()->setValue(0);
    QSignalSpy done(runs_, &RunsPanel::session_finished);
    runs_->start_decode_proxy();
    QVERIFY(runs_->session_running());
    QVERIFY(test::wait_until([&] { return done.count() > 0; }, 120000));
    const qint64 run_id = done.first().at(0).toLongLong();
    QVERIFY2(run_id > 0, qPrintable(runs_->result_label()->text()));
    QVERIFY(runs_->result_label()->text().contains("tok/s"));

    auto store = p64::Store::open(wb_->store_path().toStdString());
    const auto run = store->run(run_id);
    QVERIFY(run.has_value());
    QCOMPARE(run->kind, p64::RunKind::DecodeProxy);
    QCOMPARE(QString::fromStdString(run->backend), QString("cpu"));
    const auto samples = store->samples(run_id);
    QCOMPARE(samples.size(), size_t{2});
    for (const auto& s : samples) QVERIFY(s.decode_tok_s > 0);

    // The history table reloads and shows the run; selecting it loads its samples.
    QVERIFY(test::wait_until([&] { return runs_->runs()->row_of_run(run_id) >= 0; }, 30000));
    QSignalSpy shown(runs_, &RunsPanel::run_shown);
    runs_->select_run(run_id);
    QVERIFY(test::wait_until([&] { return shown.count() > 0 && runs_->samples()->rowCount() == 2; }, 30000));
    QVERIFY(runs_->runs()->index(runs_->runs()->row_of_run(run_id), RunTableModel::kDecode).data().toString() != "—");
    // Filtering by kind hides the imported plan history's other kinds; text filters too.
    runs_->filter()->set_text("no-such-backend-xyz");
    QCOMPARE(runs_->filter()->rowCount(), 0);
    runs_->filter()->set_text("");
  }

  void timeline_from_the_panel() {
    QSignalSpy done(runs_, &RunsPanel::session_finished);
    QSignalSpy shown(timeline_, &TimelinePanel::run_shown);
    runs_->start_timeline();
    QVERIFY(test::wait_until([&] { return done.count() > 0; }, 120000));
    const qint64 run_id = done.first().at(0).toLongLong();
    QVERIFY2(run_id > 0, qPrintable(runs_->result_label()->text()));
    QVERIFY(test::wait_until([&] {
      for (const auto& args : shown)
        if (args.at(0).toLongLong() == run_id) return true;
      return false;
    }, 30000));
    const TimelineSplitModel* split = timeline_->split();
    QCOMPARE(split->layers(), static_cast<int>(wb_->model()->hparams().n_layer));
    QVERIFY(split->total_ms() > 0);
    QVERIFY(split->group_total_ms(static_cast<int>(p64::OpGroup::Ffn)) > 0);
    // The stacked chart has a set per group present, each with a value per layer row.
    auto series = timeline_->layer_view()->chart()->series();
    QCOMPARE(series.size(), 1);
    auto* stacked = qobject_cast<QStackedBarSeries*>(series.first());
    QVERIFY(stacked && stacked->count() >= 3);
    QCOMPARE(stacked->barSets().first()->count(), split->rowCount());
    // The recorded steps are on the tracks (RMS, ATTN, FFN at least), the spread has a row per
    // op, and the projections carry the bytes they read.
    const TimelineTracks& tracks = timeline_->track_view()->tracks();
    QVERIFY(tracks.track_count() >= 3);
    QCOMPARE(static_cast<int>(tracks.step_starts().size()), split->steps());
    QVERIFY(timeline_->spread()->rowCount() > 0);
    bool qkv_bytes = false;
    for (const p64::OpSpan& s : split->spans()) qkv_bytes |= s.name == "qkv" && s.bytes > 0;
    QVERIFY(qkv_bytes);
    // The Chrome trace is valid JSON with an event per span.
    const QString trace = timeline_->write_trace(dir_.filePath("trace.json"));
    QFile f(trace);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const auto doc = QJsonDocument::fromJson(f.readAll());
    QVERIFY(doc.isObject() || doc.isArray());
  }
};

QTEST_MAIN(TestModelsRuns)
#include "tst_models_runs.moc"
