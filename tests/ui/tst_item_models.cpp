// Item models that had no test of their own, each headless: the Models page's schedule, manifold
// and vocabulary tables over a real P64 (stories260K, read by the engine), the Runs page's sample
// table and run filter, the Optimisations page's filter and history table.
#include <QtTest>

#include "engine/format/convert.h"
#include "engine/format/p64_reader.h"
#include "ui/models/optimisation_model.h"
#include "ui/models/p64_tables.h"
#include "ui/models/run_table_model.h"
#include "ui/models/sample_table_model.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;

namespace {

RunRow run_row(int64_t id, p64::RunKind kind, const char* backend, const char* label, bool imported = false) {
  RunRow r;
  r.run.id = id;
  r.run.kind = kind;
  r.run.backend = backend;
  r.run.label = label;
  r.run.imported = imported;
  r.model_name = "stories260K";
  return r;
}

OptimisationRow opt_row(const char* name, const char* backend, p64::OptStatus status, const char* device,
                        const char* reason) {
  OptimisationRow r;
  r.opt.name = name;
  r.opt.backend = backend;
  r.opt.status = status;
  r.opt.description = std::string("what ") + name + " does";
  r.devices << device;
  p64::OptimisationHistoryEntry h;
  h.at = "2026-12-07T10:00:00Z";
  h.new_status = status;
  h.reason = reason;
  r.history.push_back(h);
  return r;
}

}  // namespace

class TestItemModels : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QTemporaryDir settings_;
  ContentsPtr contents_;

 private Q_SLOTS:
  void initTestCase() {
    test::isolate_settings(settings_);
    const QString p64_path = dir_.filePath("stories260K.p64");
    p64::convert_to_p64(test::shared_model("stories260K.gguf").toStdString(), p64_path.toStdString(), {});
    contents_ = std::make_shared<const p64::P64Contents>(p64::inspect_p64(p64_path.toStdString()));
  }

  void schedule_lists_embedding_blocks_and_head() {
    ScheduleModel m;
    QCOMPARE(m.rowCount(), 0);  // nothing set
    m.set_contents(contents_);
    const int layers = static_cast<int>(contents_->hparams.n_layer);
    QCOMPARE(m.rowCount(), layers + 2);
    QCOMPARE(m.index(0, ScheduleModel::kGroup).data().toString(), QString("embedding"));
    QCOMPARE(m.index(1, ScheduleModel::kGroup).data().toString(), QString("block 0"));
    QCOMPARE(m.index(layers + 1, ScheduleModel::kGroup).data().toString(), QString("head"));
    int tensors = 0;
    for (int r = 0; r < m.rowCount(); ++r) tensors += m.index(r, ScheduleModel::kTensors).data().toInt();
    QCOMPARE(tensors, static_cast<int>(contents_->tensors.size()));  // the rows cover the directory
    QCOMPARE(m.headerData(ScheduleModel::kBytes, Qt::Horizontal, Qt::DisplayRole).toString(), QString("Bytes"));
  }

  void manifold_has_a_row_per_layer_then_the_global_row() {
    ManifoldModel m;
    m.set_contents(contents_);
    QCOMPARE(m.rowCount(), static_cast<int>(contents_->hparams.n_layer) + 1);
    QCOMPARE(m.columnCount(), 11);
    QCOMPARE(m.index(m.rowCount() - 1, 0).data().toString(), QString("global"));
    QCOMPARE(m.index(0, 0).data().toString(), QString("0"));
    QCOMPARE(m.index(2, 3).data(Qt::UserRole).toDouble(), double(contents_->manifold[2].c[2]));
    QCOMPARE(m.index(2, 3).data().toString(), QString::number(double(contents_->manifold[2].c[2]), 'g', 5));
    const QVector<double> k0 = m.coordinate_across_layers(0);
    QCOMPARE(k0.size(), static_cast<int>(contents_->hparams.n_layer));  // the global row left out
    QCOMPARE(k0[1], double(contents_->manifold[1].c[0]));
    QVERIFY(m.coordinate_across_layers(10).isEmpty());
    QCOMPARE(m.headerData(1, Qt::Horizontal, Qt::DisplayRole).toString(), ManifoldModel::coordinate_name(0));
  }

  void vocab_shows_every_piece_with_score_and_type() {
    VocabModel m;
    m.set_contents(contents_);
    const p64::Vocabulary& v = contents_->vocab;
    QCOMPARE(m.rowCount(), static_cast<int>(v.tokens.size()));
    const int bos = v.bos_id;
    QVERIFY(bos >= 0);
    QCOMPARE(m.index(bos, VocabModel::kPiece).data().toString(), QString::fromStdString(v.tokens[static_cast<size_t>(bos)]));
    QCOMPARE(m.index(bos, VocabModel::kId).data().toInt(), bos);
    QCOMPARE(m.index(300, VocabModel::kScore).data().toDouble(), double(v.scores[300]));
    QVERIFY(!m.index(bos, VocabModel::kType).data().toString().isEmpty());
  }

  void samples_show_each_repetition() {
    SampleTableModel m;
    p64::SampleRecord a, b;
    a.rep = 0;
    a.side = "a";
    a.decode_tok_s = 123.456;
    a.bandwidth_share = 0.4567;
    b.rep = 1;
    b.warm = true;
    b.peak_device_bytes = 3 * 1024 * 1024;
    m.set_samples({a, b});
    QCOMPARE(m.rowCount(), 2);
    QCOMPARE(m.index(0, SampleTableModel::kRep).data().toInt(), 1);
    QCOMPARE(m.index(0, SampleTableModel::kSide).data().toString(), QString("a"));
    QCOMPARE(m.index(0, SampleTableModel::kDecode).data().toString(), QString("123.46"));
    QCOMPARE(m.index(0, SampleTableModel::kDecode).data(Qt::UserRole).toDouble(), 123.456);
    QCOMPARE(m.index(0, SampleTableModel::kShare).data().toString(), QString("45.7%"));
    QCOMPARE(m.index(1, SampleTableModel::kShare).data().toString(), QString("—"));
    QCOMPARE(m.index(1, SampleTableModel::kWarm).data().toString(), QString("warm"));
    QVERIFY(m.index(1, SampleTableModel::kPeak).data().toString().contains("3"));
    QCOMPARE(m.index(0, SampleTableModel::kPeak).data().toString(), QString("—"));
  }

  void run_filter_by_kind_text_and_imported() {
    RunTableModel runs;
    runs.set_rows({run_row(1, p64::RunKind::DecodeProxy, "cpu", "first"),
                   run_row(2, p64::RunKind::Timeline, "cuda", "a timeline"),
                   run_row(3, p64::RunKind::DecodeProxy, "vulkan", "plan stage", /*imported=*/true)});
    RunFilterProxy f;
    f.setSourceModel(&runs);
    QCOMPARE(f.rowCount(), 3);
    f.set_kind(p64::RunKind::DecodeProxy);
    QCOMPARE(f.rowCount(), 2);
    f.set_show_imported(false);
    QCOMPARE(f.rowCount(), 1);
    f.set_kind(std::nullopt);
    f.set_text("CUDA");  // case-insensitive, over the shown columns
    QCOMPARE(f.rowCount(), 1);
    QCOMPARE(runs.row_at(f.mapToSource(f.index(0, 0)).row())->run.id, int64_t{2});
    f.set_text("no such thing");
    QCOMPARE(f.rowCount(), 0);
  }

  void optimisation_filter_and_history() {
    OptimisationModel opts;
    opts.set_rows({opt_row("gemv_ring", "cuda", p64::OptStatus::OptIn, "H100", "loads refilled as consumed"),
                   opt_row("kv_f16", "cpu", p64::OptStatus::Rejected, "AMD EPYC", "regression 3% on the 135M"),
                   opt_row("attn_stream", "cuda", p64::OptStatus::Default, "H200", "two A/B wins at depth 4096")});
    OptimisationFilterProxy f;
    f.setSourceModel(&opts);
    QCOMPARE(f.rowCount(), 3);
    f.set_backend("cuda");
    QCOMPARE(f.rowCount(), 2);
    f.set_status(p64::OptStatus::Default);
    QCOMPARE(f.rowCount(), 1);
    f.set_status(std::nullopt);
    f.set_backend({});
    f.set_device("AMD EPYC");
    QCOMPARE(f.rowCount(), 1);
    f.set_device({});
    f.set_text("depth 4096");  // a reason in the history counts
    QCOMPARE(f.rowCount(), 1);
    QCOMPARE(opts.row_at(f.mapToSource(f.index(0, 0)).row())->opt.name, std::string("attn_stream"));

    OptimisationHistoryModel h;
    std::vector<p64::OptimisationHistoryEntry> entries = opts.row_at(1)->history;
    p64::OptimisationHistoryEntry later;
    later.at = "2026-12-07T11:00:00Z";
    later.old_status = p64::OptStatus::Rejected;
    later.new_status = p64::OptStatus::OptIn;
    later.reason = "a new kernel";
    later.evidence_run_id = 42;
    entries.push_back(later);
    h.set_history(entries);
    QCOMPARE(h.rowCount(), 2);
    QCOMPARE(h.index(1, OptimisationHistoryModel::kChange).data().toString(), QString("rejected → opt-in"));
    QCOMPARE(h.index(1, OptimisationHistoryModel::kRun).data().toString(), QString("A/B run 42"));
    QCOMPARE(h.index(0, OptimisationHistoryModel::kRun).data().toString(), QString());
    QCOMPARE(h.entry_at(1)->evidence_run_id, int64_t{42});
    QVERIFY(h.entry_at(2) == nullptr);
  }
};

QTEST_MAIN(TestItemModels)
#include "tst_item_models.moc"
