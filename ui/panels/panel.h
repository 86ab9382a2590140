#pragma once
#include <QList>
#include <QString>
#include <QWidget>

class QChartView;

namespace p64::ui {

class Workbench;

// A page of the workbench. Panels hold widgets only: the data they show comes from item
// models in ui/models (tested headless) and long work goes through Jobs.
class Panel : public QWidget {
  Q_OBJECT
 public:
  Panel(Workbench& workbench, QWidget* parent = nullptr) : QWidget(parent), wb_(workbench) {}
  virtual QString id() const = 0;     // "models", "chat", ... (settings keys, --panel)
  virtual QString title() const = 0;  // tab text
  // Charts this panel shows, for File > Export charts (PNG/SVG) and the screenshots.
  virtual QList<QChartView*> chart_views() const { return {}; }

 protected:
  Workbench& wb_;
};

}  // namespace p64::ui
