#include "ui/panels/chart_export_actions.h"

#include <QAction>
#include <QChart>
#include <QChartView>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>

#include "ui/core/workbench.h"
#include "ui/charts/chart_export.h"
#include "ui/panels/panel.h"

namespace p64::ui {

namespace {
QString last_folder() { return QSettings().value("dialogs/chart_dir", QDir::homePath()).toString(); }

void report_failure(QWidget* parent, Workbench& wb, const QString& what) {
  Q_EMIT wb.message(what);
  QMessageBox::warning(parent, QObject::tr("Export charts"), what);
}
}  // namespace

void add_chart_context_menu(QChartView* view, const QString& file_stem, Workbench& wb) {
  view->setContextMenuPolicy(Qt::ActionsContextMenu);
  for (const QString& format : {QString("PNG"), QString("SVG")}) {
    auto* save = new QAction(QObject::tr("Save Chart as %1…").arg(format), view);
    QObject::connect(save, &QAction::triggered, view, [view, file_stem, format, &wb] {
      const QString suffix = format.toLower();
      const QString path = QFileDialog::getSaveFileName(
          view, QObject::tr("Save chart as %1").arg(format), QDir(last_folder()).filePath(file_stem + "." + suffix),
          QString("%1 (*.%2)").arg(format, suffix));
      if (path.isEmpty()) return;
      QSettings().setValue("dialogs/chart_dir", QFileInfo(path).absolutePath());
      try {
        if (format == "PNG") save_chart_png(view, path);
        else save_chart_svg(view, path, view->chart()->title());
        Q_EMIT wb.message(QObject::tr("Chart written to %1").arg(path));
      } catch (const std::exception& e) {
        report_failure(view, wb, QString::fromUtf8(e.what()));
      }
    });
    view->addAction(save);
  }
}

void export_panel_charts_dialog(Panel* panel, Workbench& wb) {
  if (panel->chart_views().isEmpty()) {
    QMessageBox::information(panel, QObject::tr("Export charts"), QObject::tr("This panel shows no chart."));
    return;
  }
  const QString dir = QFileDialog::getExistingDirectory(panel, QObject::tr("Export charts to folder"), last_folder());
  if (dir.isEmpty()) return;
  QSettings().setValue("dialogs/chart_dir", dir);
  try {
    const QStringList files = save_charts(panel->chart_views(), dir, panel->id(), panel->title());
    Q_EMIT wb.message(QObject::tr("Wrote %1 chart(s) as PNG and SVG to %2").arg(files.size() / 2).arg(dir));
  } catch (const std::exception& e) {
    report_failure(panel, wb, QString::fromUtf8(e.what()));
  }
}

QPushButton* make_export_charts_button(Panel* panel, Workbench& wb) {
  auto* button = new QPushButton(QObject::tr("Export charts…"), panel);
  button->setToolTip(QObject::tr("Write this panel's charts to a folder as PNG and SVG (right-click a chart for one)"));
  QObject::connect(button, &QPushButton::clicked, panel, [panel, &wb] { export_panel_charts_dialog(panel, wb); });
  return button;
}

}  // namespace p64::ui
