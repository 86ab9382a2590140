#pragma once
#include <nlohmann/json.hpp>

#include "ui/panels/panel.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;

namespace p64::ui {

class JsonTableModel;

// The plan's §3 scoreboard from the store (engine/lab/report.h): stage, tok/s with min–max,
// delta vs the first run, the peer diagnostics and the G0–G5 bars with their status; export to
// Markdown, HTML, CSV, JSON and PDF, and the bars chart to PNG and SVG.
class ScoreboardPanel : public Panel {
  Q_OBJECT
 public:
  explicit ScoreboardPanel(Workbench& wb, QWidget* parent = nullptr);
  QString id() const override { return "scoreboard"; }
  QString title() const override { return tr("Scoreboard"); }
  QList<QChartView*> chart_views() const override { return {bars_chart_}; }

  JsonTableModel* scoreboard() const { return scoreboard_; }
  JsonTableModel* bars() const { return bars_; }
  JsonTableModel* peers() const { return peers_; }
  QLineEdit* model_filter() const { return filter_; }
  const nlohmann::json& report() const { return report_; }

 public Q_SLOTS:
  void reload();
  // Writes the report shown, or with .png/.svg the bars chart; the suffix picks the format.
  // Returns false (and says why) on error.
  bool export_to(const QString& path);
  // Asks for a file: the report (any of its formats), or with "png"/"svg" the bars chart.
  void export_dialog(const QString& chart_format = {});

 Q_SIGNALS:
  void reloaded();

 private:
  void show_report(nlohmann::json report);

  JsonTableModel* scoreboard_;
  JsonTableModel* bars_;
  JsonTableModel* peers_;
  QLineEdit* filter_;
  QPushButton* export_;
  QLabel* summary_;
  QTableView* scoreboard_table_;
  QTableView* bars_table_;
  QTableView* peers_table_;
  QChartView* bars_chart_;
  nlohmann::json report_;
};

}  // namespace p64::ui
