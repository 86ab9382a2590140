#pragma once
// The ways a user exports charts: right-click a chart (Save as PNG… / SVG…), a panel's
// "Export charts…" button and File › Export Charts (every chart of the panel into a folder).
#include <QString>

class QChartView;
class QPushButton;

namespace p64::ui {

class Panel;
class Workbench;

void add_chart_context_menu(QChartView* view, const QString& file_stem, Workbench& wb);
// Asks for a folder, writes the panel's charts there as PNG and SVG, says what was written (or
// why not) in the status bar and a message box.
void export_panel_charts_dialog(Panel* panel, Workbench& wb);
QPushButton* make_export_charts_button(Panel* panel, Workbench& wb);

}  // namespace p64::ui
