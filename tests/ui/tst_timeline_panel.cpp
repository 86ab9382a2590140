// The Timeline panel's track view and spread table, and a run's GPU and energy rows: the logic
// headless (hit-testing a time to a span, zoom keeping the time under the pointer, the spread
// figures against hand-computed ones, the rows a stored GPU summary gives), then the panel built
// offscreen over a stored timeline run: hover, wheel, drag, Fit and "Open in Perfetto"; and the
// Runs panel showing a stored CUDA run's GPU rows.
#include <QtTest>

#include <QJsonDocument>
#include <QLabel>
#include <QMouseEvent>
#include <QPushButton>
#include <QWheelEvent>

#include <nlohmann/json.hpp>

#include "engine/lab/store.h"
#include "support/op_spans.h"
#include "ui/core/workbench.h"
#include "ui/charts/time_window.h"
#include "ui/charts/timeline_track_view.h"
#include "ui/models/gpu_energy_rows.h"
#include "ui/models/run_table_model.h"
#include "ui/models/timeline_model.h"
#include "ui/models/timeline_spread_model.h"
#include "ui/models/timeline_tracks.h"
#include "ui/panels/runs_panel.h"
#include "ui/panels/timeline_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;
using p64::OpGroup;
using p64::OpSpan;
using p64::test::op_span;

namespace {

// A prefill, then two decode steps (positions 4 and 5) of two layers recorded from 1000 µs on:
// rms_attn 5, qkv 20, rms_ffn 5, gate_up 40 per layer, then logits 30; layer 1's gate_up of
// step 5 takes 400 µs.
std::vector<OpSpan> two_steps() {
  std::vector<OpSpan> s{op_span("qkv", OpGroup::Attn, 0, 0, 0, 900, 0, true)};
  double t = 1000;
  for (int step = 4; step <= 5; ++step) {
    for (int layer = 0; layer < 2; ++layer) {
      s.push_back(op_span("rms_attn", OpGroup::Rms, layer, step, t, 5)), t += 5;
      s.push_back(op_span("qkv", OpGroup::Attn, layer, step, t, 20, 2'000'000)), t += 20;
      s.push_back(op_span("rms_ffn", OpGroup::Rms, layer, step, t, 5)), t += 5;
      const double gate_up = step == 5 && layer == 1 ? 400 : 40;
      s.push_back(op_span("gate_up", OpGroup::Ffn, layer, step, t, gate_up, 8'000'000)), t += gate_up;
    }
    s.push_back(op_span("logits", OpGroup::Logits, -1, step, t, 30, 1'000'000)), t += 30;
  }
  return s;
}

}  // namespace

class TestTimelinePanel : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QTemporaryDir settings_;

 private Q_SLOTS:
  void initTestCase() { test::isolate_settings(settings_); }

  void tracks_group_decode_spans_and_hit_test_them() {
    TimelineTracks t;
    t.set_spans(two_steps());
    // RMS, ATTN, FFN, LOGITS in OpGroup order; the prefill is left out.
    QCOMPARE(t.track_count(), 4);
    QCOMPARE(t.track_group(0), OpGroup::Rms);
    QCOMPARE(t.track_group(1), OpGroup::Attn);
    QCOMPARE(t.track_group(3), OpGroup::Logits);
    QCOMPARE(t.track_spans(1).size(), size_t(4));
    QCOMPARE(t.origin_us(), 1000.0);
    // Step 4: 2 x 70 + 30 = 170 µs; step 5: 70 + 430 + 30 = 530.
    QCOMPARE(t.end_us(), 700.0);
    QCOMPARE(t.step_starts().size(), size_t(2));
    QCOMPARE(t.step_starts()[1].first, 5);
    QCOMPARE(t.step_starts()[1].second, 170.0);

    // ATTN: qkv L0 of step 4 covers [5, 25); qkv L1 covers [75, 95).
    const OpSpan* hit = t.span_at(1, 10);
    QVERIFY(hit);
    QCOMPARE(hit->layer, 0);
    QCOMPARE(hit->step, 4);
    QVERIFY(!t.span_at(1, 50));                 // between the two, out of reach
    QCOMPARE(t.span_at(1, 28, 5)->layer, 0);    // 3 µs after qkv L0 ends, within 5
    QCOMPARE(t.span_at(1, 72, 5)->layer, 1);    // 3 µs before qkv L1, nearer than L0
    QVERIFY(!t.span_at(1, 28, 2));
    QVERIFY(!t.span_at(7, 10));                 // no such track
    QCOMPARE(t.span_at(3, 169.9)->name, std::string("logits"));
  }

  void zoom_keeps_the_time_under_the_pointer_and_pan_follows_it() {
    const TimeWindow w{100, 1100};  // 1000 µs over 500 px
    const double x = 125;           // 25% in: 350 µs
    QCOMPARE(w.time_at(x, 500), 350.0);
    const TimeWindow in = w.zoomed(x, 500, 4, 0.01, 5000);
    QCOMPARE(in.width_us(), 250.0);
    QCOMPARE(in.time_at(x, 500), 350.0);
    QCOMPARE(in.start_us, 350.0 - 62.5);
    const TimeWindow out = in.zoomed(x, 500, 0.5, 0.01, 5000);
    QCOMPARE(out.width_us(), 500.0);
    QCOMPARE(out.time_at(x, 500), 350.0);
    QCOMPARE(w.zoomed(x, 500, 1e-6, 0.01, 5000).width_us(), 5000.0);  // no wider than the limit
    QCOMPARE(w.zoomed(x, 500, 1e9, 0.01, 5000).width_us(), 0.01);     // no narrower
    // A drag of 50 px to the right shows 100 µs earlier.
    const TimeWindow panned = w.panned(50, 500);
    QCOMPARE(panned.start_us, 0.0);
    QCOMPARE(panned.end_us, 1000.0);
    // Kept over the data: moved back inside, or centred when as wide.
    QCOMPARE((TimeWindow{-50, 150}.clamped(0, 700).start_us), 0.0);
    QCOMPARE((TimeWindow{650, 850}.clamped(0, 700).end_us), 700.0);
    QCOMPARE((TimeWindow{0, 1000}.clamped(0, 700).start_us), -150.0);
  }

  void hover_text_names_the_op_and_its_gb_per_s() {
    const OpSpan s = op_span("gate_up", OpGroup::Ffn, 3, 35, 0, 100, 2'000'000);
    const QString text = describe_span(s, 1250);
    QVERIFY2(text.contains("gate_up") && text.contains("FFN"), qPrintable(text));
    QVERIFY2(text.contains("layer 3, step 35"), qPrintable(text));
    QVERIFY2(text.contains("start 1.2500 ms, duration 100.00 µs"), qPrintable(text));
    QVERIFY2(text.contains("1.9 MiB moved, 20.0 GB/s"), qPrintable(text));  // 2e6 B in 100 µs
    const QString unknown = describe_span(op_span("rope", OpGroup::Attn, 0, 1, 0, 3), 0);
    QVERIFY2(unknown.contains("bytes not counted"), qPrintable(unknown));
    QVERIFY2(!unknown.contains("GB/s"), qPrintable(unknown));
  }

  void spread_rows_give_median_min_max_per_op_and_layer() {
    TimelineSpreadModel m;
    m.set_spans(two_steps());
    // By summed time: gate_up (520 µs) and its two layers, qkv (80) and its layers, logits (60,
    // outside blocks: no layer rows), rms_attn and rms_ffn (20 each) and theirs.
    QCOMPARE(m.rowCount(), 13);
    auto cell = [&](int row, int col) { return m.index(row, col).data(Qt::DisplayRole).toString(); };
    auto raw = [&](int row, int col) { return m.index(row, col).data(Qt::UserRole).toDouble(); };
    QCOMPARE(cell(0, TimelineSpreadModel::kOp), QString("gate_up"));
    QCOMPARE(cell(0, TimelineSpreadModel::kLayer), QString("all"));
    QCOMPARE(raw(0, TimelineSpreadModel::kSpans), 4.0);
    QCOMPARE(raw(0, TimelineSpreadModel::kMedian), 40.0);  // 40 40 40 400
    QCOMPARE(raw(0, TimelineSpreadModel::kMin), 40.0);
    QCOMPARE(raw(0, TimelineSpreadModel::kMax), 400.0);
    QCOMPARE(cell(0, TimelineSpreadModel::kMaxOverMin), QString("10.0×"));
    QVERIFY(m.index(0, 0).data(Qt::ToolTipRole).toString().contains("slowest 220.00 µs (layer 1)"));
    QCOMPARE(cell(1, TimelineSpreadModel::kLayer), QString("0"));
    QCOMPARE(raw(2, TimelineSpreadModel::kMedian), 220.0);  // layer 1: 40 and 400
    QCOMPARE(cell(3, TimelineSpreadModel::kOp), QString("qkv"));
    QCOMPARE(raw(3, TimelineSpreadModel::kSpans), 4.0);  // the prefill's qkv is not among them
    QCOMPARE(cell(6, TimelineSpreadModel::kOp), QString("logits"));
    QCOMPARE(cell(6, TimelineSpreadModel::kLayer), QString("—"));
    QCOMPARE(raw(6, TimelineSpreadModel::kMedian), 30.0);
  }

  void gpu_rows_show_clocks_power_throttling_and_tok_per_joule() {
    const auto summary = nlohmann::json::parse(R"({
      "machine": {"cores": 16, "gpu": {"available": true, "device": "PCI 0000:65:00.0", "samples": 40,
        "idle_samples": 2, "sm_mhz_min": 1755, "sm_mhz_max": 1980, "mem_mhz_min": 2619, "mem_mhz_max": 2619,
        "power_w_mean": 312.4, "power_w_max": 330, "throttled": true, "throttle_reasons": ["power cap"]}},
      "energy": {"source": "board energy counter", "decode_j": [1.5, 1.6],
                 "tok_per_j": {"min": 20, "median": 20.5, "max": 21, "n": 2}}})");
    KeyValueModel m;
    m.set_rows(gpu_energy_rows(summary));
    QCOMPARE(m.value("SM clock"), QString("1755–1980 MHz"));
    QCOMPARE(m.value("memory clock"), QString("2619 MHz"));
    QCOMPARE(m.value("board power"), QString("312 W mean, 330 W max"));
    QCOMPARE(m.value("throttled"), QString("THROTTLED: power cap"));
    QCOMPARE(m.value("GPU samples"), QString("40 (2 found it idle)"));
    QCOMPARE(m.value("tok/J"), QString("20.500 median (20.000–21.000), 2 runs"));
    QCOMPARE(m.value("energy source"), QString("board energy counter"));

    // NVML absent: the stored reason. An A/B: tok/J per side. A CPU run: one row saying why none.
    m.set_rows(gpu_energy_rows(nlohmann::json::parse(
        R"({"machine": {"gpu": {"available": false, "unavailable": "NVML not loaded: no such file"}},
            "a": {"energy": {"source": "power x time", "tok_per_j": {"n": 0}}},
            "b": {"energy": {"source": "power x time", "tok_per_j": {"min": 3, "median": 3, "max": 3, "n": 1}}}})")));
    QCOMPARE(m.value("GPU figures"), QString("none: NVML not loaded: no such file"));
    QCOMPARE(m.value("A tok/J"), QString("unknown (no energy read)"));
    QCOMPARE(m.value("B tok/J"), QString("3.000 median (3.000–3.000), 1 runs"));
    m.set_rows(gpu_energy_rows(nlohmann::json::parse(R"({"machine": {"cores": 2}})")));
    QCOMPARE(m.rowCount(), 1);
    QVERIFY(m.value("GPU figures").startsWith("none"));
  }

  void runs_panel_shows_the_selected_runs_gpu_and_energy() {
    const QString db = dir_.filePath("gpu.db");
    qint64 run_id = 0;
    {
      auto store = p64::Store::open(db.toStdString());
      p64::RunBundle b;
      b.run.kind = p64::RunKind::DecodeProxy;
      b.run.status = p64::RunStatus::Ok;
      b.run.backend = "cuda";
      b.run.started_at = "2026-12-06T16:00:00Z";
      b.run.summary_json = R"({"machine": {"gpu": {"available": true, "device": "PCI 0000:65:00.0", "samples": 12,
        "sm_mhz_min": 1980, "sm_mhz_max": 1980, "power_w_mean": 401, "power_w_max": 420, "throttled": false,
        "throttle_reasons": []}}, "energy": {"source": "board energy counter",
        "tok_per_j": {"min": 1.2, "median": 1.25, "max": 1.3, "n": 3}}})";
      run_id = store->write_run(std::move(b));
    }
    Workbench wb;
    wb.set_store_path(db);
    RunsPanel runs(wb);
    QSignalSpy shown(&runs, &RunsPanel::run_shown);
    QVERIFY(test::wait_until([&] { return runs.runs()->rowCount() > 0; }, 30000));
    runs.select_run(run_id);
    QVERIFY(test::wait_until([&] { return !shown.isEmpty(); }, 30000));
    QCOMPARE(runs.gpu()->value("SM clock"), QString("1980 MHz"));
    QCOMPARE(runs.gpu()->value("throttled"), QString("no"));
    QCOMPARE(runs.gpu()->value("tok/J"), QString("1.250 median (1.200–1.300), 3 runs"));
  }

  void panel_shows_a_stored_run_on_tracks_hover_zoom_pan_fit_and_perfetto() {
    const QString db = dir_.filePath("lab.db");
    qint64 run_id = 0;
    {
      auto store = p64::Store::open(db.toStdString());
      p64::RunBundle b;
      b.run.kind = p64::RunKind::Timeline;
      b.run.status = p64::RunStatus::Ok;
      b.run.backend = "cpu";
      b.run.started_at = "2026-12-06T16:00:00Z";
      b.ops = two_steps();
      run_id = store->write_run(std::move(b));
    }
    Workbench wb;
    wb.set_store_path(db);
    TimelinePanel panel(wb);
    QSignalSpy shown(&panel, &TimelinePanel::run_shown);
    panel.resize(1000, 700);
    panel.show();
    QVERIFY(test::wait_until([&] { return !shown.isEmpty() && shown.last().at(0).toLongLong() == run_id; }, 30000));
    TimelineTrackView* view = panel.track_view();
    QCOMPARE(view->tracks().track_count(), 4);
    QCOMPARE(panel.spread()->rowCount(), 13);
    QCOMPARE(panel.split()->layers(), 2);  // the averages stay beside the tracks
    QCOMPARE(view->window().start_us, 0.0);
    QCOMPARE(view->window().end_us, 700.0);

    // Hover over step 5's slow gate_up L1 ([270, 670) on the axis), on the FFN track (the third,
    // under the 34 px axis, tracks 30 px high with 4 px between).
    const int ffn_y = 34 + 2 * (30 + 4) + 15;
    QCOMPARE(view->track_at_y(ffn_y), 2);
    auto x_of = [&](double t_us) { return view->plot_left() + view->window().x_of(t_us, view->plot_width()); };
    const QPointF over(x_of(440), ffn_y);
    QMouseEvent move(QEvent::MouseMove, over, view->mapToGlobal(over), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(view, &move);
    QVERIFY2(view->hover_text().contains("layer 1, step 5"), qPrintable(view->hover_text()));
    QVERIFY2(view->hover_text().contains("duration 400.00 µs"), qPrintable(view->hover_text()));
    QVERIFY2(view->hover_text().contains("20.0 GB/s"), qPrintable(view->hover_text()));  // 8 MB in 400 µs

    // Three wheel notches in at that point: narrower, the time under the pointer kept.
    const double before = view->window().time_at(over.x() - view->plot_left(), view->plot_width());
    QWheelEvent wheel(over, view->mapToGlobal(over), QPoint(), QPoint(0, 360), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(view, &wheel);
    QVERIFY(view->window().width_us() < 700.0 / 1.5);
    QVERIFY(qAbs(view->window().time_at(over.x() - view->plot_left(), view->plot_width()) - before) < 1e-6);

    // A drag to the right shows earlier times by as much as the pointer moved.
    const double start = view->window().start_us, us_per_px = view->window().width_us() / view->plot_width();
    QMouseEvent press(QEvent::MouseButtonPress, over, view->mapToGlobal(over), Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(view, &press);
    const QPointF to = over + QPointF(40, 0);
    QMouseEvent drag(QEvent::MouseMove, to, view->mapToGlobal(to), Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(view, &drag);
    QMouseEvent release(QEvent::MouseButtonRelease, to, view->mapToGlobal(to), Qt::LeftButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(view, &release);
    QVERIFY(qAbs(view->window().start_us - (start - 40 * us_per_px)) < 1e-6);

    // Fit shows every step again.
    QPushButton* fit = nullptr;
    for (QPushButton* b : panel.findChildren<QPushButton*>())
      if (b->text() == "Fit") fit = b;
    QVERIFY(fit);
    fit->click();
    QCOMPARE(view->window().end_us, 700.0);
    QVERIFY(!view->grab().isNull());

    // "Open in Perfetto": beside the store by default; the note says where and how to open it.
    QCOMPARE(panel.default_trace_path(), dir_.filePath(QString("lab-timeline-%1.json").arg(run_id)));
    const QString path = panel.write_trace(dir_.filePath("trace.json"));
    QCOMPARE(path, dir_.filePath("trace.json"));
    QVERIFY(panel.trace_note()->isVisible());
    QVERIFY2(panel.trace_note()->text().contains(path) && panel.trace_note()->text().contains("ui.perfetto.dev"),
             qPrintable(panel.trace_note()->text()));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const auto events = QJsonDocument::fromJson(f.readAll())["traceEvents"].toArray();
    qsizetype complete = 0;  // the spans; the rest is track metadata (tests/lab/chrome_trace_test.cpp)
    for (const auto& e : events) complete += e.toObject()["ph"].toString() == "X" ? 1 : 0;
    QCOMPARE(complete, static_cast<qsizetype>(two_steps().size()));
    // Never over the store it reads.
    QVERIFY(panel.write_trace(db).isEmpty());
    QVERIFY(panel.trace_note()->text().contains("not written"));
  }
};

QTEST_MAIN(TestTimelinePanel)
#include "tst_timeline_panel.moc"
