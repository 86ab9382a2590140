// The scoreboard page: its tables are views of build_report()'s JSON (checked headless against a
// hand-made report), then on a real store (the plan history plus decode-proxy runs of stories260K
// on the CPU) the page's rows match the report, and every export format is written and parsed.
#include <QtTest>

#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QFile>
#include <QHorizontalStackedBarSeries>
#include <QLineEdit>
#include <QTextStream>

#include <nlohmann/json.hpp>

#include "engine/format/convert.h"
#include "engine/format/p64_reader.h"
#include "engine/lab/report.h"
#include "engine/lab/store.h"
#include "ui/core/lab_sessions.h"
#include "ui/core/workbench.h"
#include "ui/models/json_table_model.h"
#include "ui/models/report_export.h"
#include "ui/panels/scoreboard_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;
using nlohmann::json;

class TestScoreboardPanel : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QTemporaryDir settings_;

  // RFC 4180 fields of one line: quoted fields may hold commas and doubled quotes.
  static QStringList csv_fields(const QString& line) {
    QStringList out;
    QString cur;
    bool quoted = false;
    for (int i = 0; i < line.size(); ++i) {
      const QChar c = line[i];
      if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') cur += '"', ++i;
      else if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) out << cur, cur.clear();
      else cur += c;
    }
    return out << cur;
  }

  QString read(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
  }

 private Q_SLOTS:
  void initTestCase() { test::isolate_settings(settings_); }

  void models_show_the_report_rows() {
    const json rows = json::array({{{"run_id", 3}, {"stage", "baseline"}, {"tok_s", 10.0}, {"min", 9.5}, {"max", 10.5},
                                    {"delta_vs_first", 0.0}, {"backend", "cpu"}},
                                   {{"run_id", 4}, {"stage", "kv_f16"}, {"tok_s", 12.5}, {"min", 12.0}, {"max", 13.0},
                                    {"delta_vs_first", 0.25}, {"backend", "cpu"}, {"bandwidth_share", 0.42}}});
    std::unique_ptr<JsonTableModel> m(make_scoreboard_model(nullptr));
    m->set_rows(rows);
    QCOMPARE(m->rowCount(), 2);
    auto col = [&](const QString& header) {
      for (int c = 0; c < m->columnCount(); ++c)
        if (m->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString() == header) return c;
      return -1;
    };
    QCOMPARE(m->index(1, col("Stage")).data().toString(), QString("kv_f16"));
    QCOMPARE(m->index(1, col("tok/s")).data().toString(), QString("12.50"));
    QCOMPARE(m->index(1, col("min–max")).data().toString(), QString("12.00–13.00"));
    QCOMPARE(m->index(1, col("Δ vs first")).data().toString(), QString("+25.0%"));
    QCOMPARE(m->index(1, col("share of BW")).data().toString(), QString("42.0%"));
    QCOMPARE(m->index(0, col("share of BW")).data().toString(), QString("—"));  // not measured
    m->set_rows(json::object());  // not an array: empty, no crash
    QCOMPARE(m->rowCount(), 0);

    std::unique_ptr<JsonTableModel> bars(make_bars_model(nullptr));
    bars->set_rows(json::array({{{"bar", "G1"}, {"value", 14.0}, {"threshold", 13.0}, {"pass", true}},
                                {{"bar", "G2"}, {"value", 14.0}, {"threshold", 25.0}, {"pass", false}}}));
    QCOMPARE(bars->index(0, 4).data().toString(), QString("PASS"));
    QCOMPARE(bars->index(1, 4).data().toString(), QString("not met"));

    QCOMPARE(report_format_for("a/b.PDF"), ReportFormat::Pdf);
    QCOMPARE(report_format_for("r.htm"), ReportFormat::Html);
    QVERIFY_THROWS_EXCEPTION(std::exception, report_format_for("r.docx"));

    const QString pdf_html = pdf_ready_html("<h2>S</h2><svg width=\"9\"><text>label</text></svg><td>✅</td><td>❌</td>");
    QCOMPARE(pdf_html, QString("<h2>S</h2><td>PASS</td><td>not met</td>"));
  }

  void page_matches_the_store_and_exports_every_format() {
    const QString model = dir_.filePath("stories260K.p64");
    p64::convert_to_p64(test::shared_model("stories260K.gguf").toStdString(), model.toStdString(), {});
    const QString db = dir_.filePath("lab.db");
    Workbench wb;  // registers the backends the sessions below use
    wb.set_store_path(db);
    for (const char* config : {"backend=cpu,threads=1", "backend=cpu,threads=1,opt.kv_f16=1"}) {
      LabRequest req{model.toStdString(), nullptr, config, db.toStdString(), config};
      p64::DecodeProxyParams params;
      params.decode_tokens = 8;
      params.prompt_tokens = 4;
      params.runs = 2;
      params.warmup = 0;
      QVERIFY(run_decode_proxy_session(req, params, {}).run_id > 0);
    }
    const json expected = p64::build_report(*p64::Store::open(db.toStdString()), {});

    ScoreboardPanel panel(wb);
    panel.show();
    QSignalSpy loaded(&panel, &ScoreboardPanel::reloaded);
    QVERIFY(test::wait_until([&] { return loaded.count() > 0; }, 30000));
    const int n = static_cast<int>(expected["scoreboard"].size());
    QVERIFY(n >= 2);
    QCOMPARE(panel.scoreboard()->rowCount(), n);
    QCOMPARE(panel.scoreboard()->index(n - 1, 1).data().toString(), QString("backend=cpu,threads=1,opt.kv_f16=1"));
    QCOMPARE(panel.scoreboard()->index(n - 1, 5).data().toString(),
             QString::number(expected["scoreboard"][n - 1]["tok_s"].get<double>(), 'f', 2));
    QCOMPARE(panel.bars()->rowCount(), 6);
    QCOMPARE(panel.peers()->rowCount(), static_cast<int>(expected["peer_diagnostics"].size()));
    // The bar chart: one category per bar, each bar in exactly one of met / not met.
    auto* series = qobject_cast<QHorizontalStackedBarSeries*>(panel.chart_views().first()->chart()->series().first());
    QVERIFY(series);
    QCOMPARE(series->barSets().size(), 2);
    QCOMPARE(series->barSets()[0]->count(), 6);

    // Filtering by model rebuilds the report for that model only.
    panel.model_filter()->setText("stories260K");
    loaded.clear();
    panel.reload();
    QVERIFY(test::wait_until([&] { return loaded.count() > 0; }, 30000));
    QCOMPARE(panel.scoreboard()->rowCount(), 2);

    // Every format: written, then parsed back.
    const json shown = panel.report();
    QVERIFY(panel.export_to(dir_.filePath("r.json")));
    const json back = json::parse(read(dir_.filePath("r.json")).toStdString());
    QCOMPARE(back["scoreboard"].size(), size_t{2});
    QCOMPARE(back["scoreboard"][1]["tok_s"].get<double>(), shown["scoreboard"][1]["tok_s"].get<double>());

    QVERIFY(panel.export_to(dir_.filePath("r.csv")));
    const QStringList lines = read(dir_.filePath("r.csv")).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.first().split(',').first(), QString("kind"));
    QCOMPARE(lines.filter(QRegularExpression("^run,")).size(), 2);
    const QStringList fields = csv_fields(lines.filter(QRegularExpression("^run,")).last());
    QCOMPARE(fields[1], QString("backend=cpu,threads=1,opt.kv_f16=1"));
    QVERIFY(qAbs(fields[2].toDouble() - shown["scoreboard"][1]["tok_s"].get<double>()) < 1e-6);

    QVERIFY(panel.export_to(dir_.filePath("r.md")));
    const QString md = read(dir_.filePath("r.md"));
    QVERIFY(md.startsWith("# P64 Lab report"));
    // A run measured on a loaded machine carries the busy mark after its stage.
    QVERIFY(md.contains(QRegularExpression(R"(\| backend=cpu,threads=1,opt\.kv_f16=1( \(busy\))? \|)")));
    QVERIFY(md.contains("| G5 |"));

    QVERIFY(panel.export_to(dir_.filePath("r.html")));
    const QString html = read(dir_.filePath("r.html"));
    QVERIFY(html.contains("<table"));
    QVERIFY(html.contains("backend=cpu,threads=1,opt.kv_f16=1"));

    QVERIFY(panel.export_to(dir_.filePath("r.pdf")));
    QFile pdf(dir_.filePath("r.pdf"));
    QVERIFY(pdf.open(QIODevice::ReadOnly));
    const QByteArray bytes = pdf.readAll();
    QVERIFY(bytes.startsWith("%PDF-"));
    QVERIFY(bytes.contains("%%EOF"));
    QVERIFY(bytes.size() > 2000);

    QVERIFY(!panel.export_to(dir_.filePath("r.docx")));  // an unknown suffix is refused
    QVERIFY(!QFile::exists(dir_.filePath("r.docx")));
    QVERIFY(test::wait_until([&] { return wb.jobs().isEmpty(); }, 30000));
  }
};

QTEST_MAIN(TestScoreboardPanel)
#include "tst_scoreboard_panel.moc"
