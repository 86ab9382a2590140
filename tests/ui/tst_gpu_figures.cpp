// A run's GPU figures beside its tok/s: tok/J, mean board power and a throttled marker in the
// scoreboard's rows and in the A/B page's A and B summaries, read from a store whose CUDA runs
// carry NVML figures; "—" for each figure a run did not record (a CPU run, a store before NVML).
#include <QtTest>

#include <QLabel>
#include <QSignalSpy>

#include <nlohmann/json.hpp>

#include "engine/lab/store.h"
#include "ui/core/workbench.h"
#include "ui/models/ab_view.h"
#include "ui/models/gpu_energy_rows.h"
#include "ui/models/json_table_model.h"
#include "ui/panels/ab_panel.h"
#include "ui/panels/scoreboard_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;

namespace {

constexpr const char* kGpu = R"("machine": {"gpu": {"available": true, "device": "PCI 0000:65:00.0", "samples": 12,
  "sm_mhz_min": 1755, "sm_mhz_max": 1980, "power_w_mean": 401.4, "power_w_max": 420, "throttled": true,
  "throttle_reasons": ["power cap"]}})";

qint64 add_decode_run(p64::Store& store, const std::string& label, const std::string& backend, const std::string& summary) {
  p64::RunBundle b;
  b.run.kind = p64::RunKind::DecodeProxy;
  b.run.status = p64::RunStatus::Ok;
  b.run.backend = backend;
  b.run.device = backend == "cuda" ? "NVIDIA H200" : "host CPU";
  b.run.label = label;
  b.run.summary_json = summary;
  for (int i = 0; i < 3; ++i) {
    p64::SampleRecord s;
    s.rep = i;
    s.decode_tokens = 32;
    s.decode_tok_s = 100 + i;
    b.samples.push_back(s);
  }
  return store.write_run(std::move(b));
}

// A stored A/B as ab_to_json writes it: each side's tok/s and energy, the run's GPU figures.
void add_ab_run(p64::Store& store, const std::string& backend, bool with_nvml) {
  const std::string energy_a = with_nvml ? R"(, "energy": {"source": "board energy counter",
    "tok_per_j": {"min": 1.0, "median": 1.1, "max": 1.2, "n": 3}})" : "";
  const std::string energy_b = with_nvml ? R"(, "energy": {"source": "board energy counter",
    "tok_per_j": {"min": 1.3, "median": 1.35, "max": 1.4, "n": 3}})" : "";
  const std::string side = R"("backend": ")" + backend + R"(", "samples": [100, 101, 102],
    "decode_tok_s": {"min": 100, "median": 101, "max": 102})";
  p64::RunBundle b;
  b.run.kind = p64::RunKind::Ab;
  b.run.status = p64::RunStatus::Ok;
  b.run.backend = backend;
  b.run.device = "NVIDIA H200";
  b.run.summary_json = "{\"a\": {\"config\": \"backend=" + backend + "\", " + side + energy_a + "}, \"b\": {\"config\": \"backend=" +
                       backend + ",opt.gemv_rows=2\", " + side + energy_b + "}, \"verdict\": \"inconclusive\", " +
                       "\"ratio\": {\"median\": 1.0, \"min\": 0.99, \"max\": 1.01}" +
                       (with_nvml ? std::string(", ") + kGpu : std::string()) + "}";
  store.write_run(std::move(b));
}

}  // namespace

class TestGpuFigures : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QTemporaryDir settings_;

 private Q_SLOTS:
  void initTestCase() { test::isolate_settings(settings_); }

  void figures_text_says_dash_for_each_unknown() {
    p64::RunGpuFigures f;
    QCOMPARE(gpu_figures_text(f), QString("tok/J — · power — · throttled —"));
    f.tok_per_j = 1.25;
    f.power_w_mean = 401.4;
    f.throttled = false;
    QCOMPARE(gpu_figures_text(f), QString("tok/J 1.250 · power 401 W · not throttled"));
    f.throttled = true;
    QVERIFY(gpu_figures_text(f).endsWith("THROTTLED"));
    // NVML absent (the stored reason), or a summary of another shape: nothing, not zeros.
    QVERIFY(p64::run_gpu_figures(nlohmann::json::parse(R"({"machine": {"gpu": {"available": false,
      "unavailable": "NVML not loaded"}}, "energy": {"tok_per_j": {"n": 0}}})")).empty());
    QVERIFY(p64::run_gpu_figures(nlohmann::json::parse(R"({"machine": 3, "energy": []})")).empty());
  }

  void scoreboard_rows_show_tok_per_joule_power_and_throttling() {
    const QString db = dir_.filePath("scoreboard.db");
    {
      auto store = p64::Store::open(db.toStdString());
      add_decode_run(*store, "on the H200", "cuda",
                     std::string("{") + kGpu + R"(, "energy": {"source": "board energy counter",
                       "tok_per_j": {"min": 1.2, "median": 1.25, "max": 1.3, "n": 3}}})");
      add_decode_run(*store, "on the CPU", "cpu", "{}");
    }
    Workbench wb;
    wb.set_store_path(db);
    ScoreboardPanel panel(wb);
    QVERIFY(test::wait_until([&] { return panel.scoreboard()->rowCount() == 2; }, 30000));
    JsonTableModel* m = panel.scoreboard();
    auto col = [&](const QString& header) {
      for (int c = 0; c < m->columnCount(); ++c)
        if (m->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString() == header) return c;
      return -1;
    };
    auto row = [&](const QString& stage) {
      for (int r = 0; r < m->rowCount(); ++r)
        if (m->index(r, col("Stage")).data().toString() == stage) return r;
      return -1;
    };
    const int gpu = row("on the H200"), cpu = row("on the CPU");
    QVERIFY(gpu >= 0 && cpu >= 0);
    QCOMPARE(m->index(gpu, col("tok/J")).data().toString(), QString("1.250"));
    QCOMPARE(m->index(gpu, col("power")).data().toString(), QString("401 W"));
    QCOMPARE(m->index(gpu, col("throttled")).data().toString(), QString("THROTTLED"));
    QVERIFY(m->index(gpu, col("throttled")).data(Qt::ForegroundRole).isValid());
    for (const char* header : {"tok/J", "power", "throttled"})
      QCOMPARE(m->index(cpu, col(header)).data().toString(), QString("—"));
    // The exported report carries the same figures.
    const auto& rows = panel.report()["scoreboard"];
    for (const auto& r : rows) {
      if (r["stage"] == "on the H200") {
        QCOMPARE(r["tok_per_j"].get<double>(), 1.25);
      } else {
        QVERIFY(!r.contains("tok_per_j") && !r.contains("power_w_mean") && !r.contains("throttled"));
      }
    }
  }

  void ab_sides_show_their_tok_per_joule_and_the_runs_power() {
    const QString db = dir_.filePath("ab.db");
    {
      auto store = p64::Store::open(db.toStdString());
      add_ab_run(*store, "cuda", true);
    }
    Workbench wb;
    wb.set_store_path(db);
    AbPanel panel(wb);
    QVERIFY(test::wait_until([&] { return !panel.view().empty(); }, 30000));
    const QString a = panel.side_a().figures->text(), b = panel.side_b().figures->text();
    QVERIFY2(a.contains("tok/J 1.100 · power 401 W · "), qPrintable(a));
    QVERIFY2(b.contains("tok/J 1.350 · power 401 W · "), qPrintable(b));
    QVERIFY2(a.contains("THROTTLED") && b.contains("THROTTLED"), qPrintable(a + "\n" + b));
  }

  void ab_sides_without_nvml_say_dash() {
    const QString db = dir_.filePath("ab-cpu.db");
    {
      auto store = p64::Store::open(db.toStdString());
      add_ab_run(*store, "cpu", false);
    }
    Workbench wb;
    wb.set_store_path(db);
    AbPanel panel(wb);
    QVERIFY(test::wait_until([&] { return !panel.view().empty(); }, 30000));
    for (const QLabel* l : {panel.side_a().figures, panel.side_b().figures})
      QVERIFY2(l->text().contains("tok/J — · power — · throttled —"), qPrintable(l->text()));
  }

  // A CPU side of a CUDA A/B: the GPU's power and throttling were not this side's.
  void a_cpu_side_does_not_take_the_gpus_power() {
    const auto summary = nlohmann::json::parse(std::string("{") + kGpu + R"(,
      "a": {"backend": "cpu", "config": "backend=cpu", "samples": [1], "decode_tok_s": {"median": 1}},
      "b": {"backend": "cuda", "config": "backend=cuda", "samples": [2], "decode_tok_s": {"median": 2}},
      "verdict": "inconclusive"})");
    p64::RunRecord run;
    run.id = 7;
    run.kind = p64::RunKind::Ab;
    run.summary_json = summary.dump();
    const AbView v = ab_view_from_stored(run);
    QVERIFY(v.a.gpu.empty());
    QCOMPARE(v.b.gpu.power_w_mean.value_or(0), 401.4);
    QCOMPARE(v.b.gpu.throttled.value_or(false), true);
  }
};

QTEST_MAIN(TestGpuFigures)
#include "tst_gpu_figures.moc"
