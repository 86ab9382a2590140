#pragma once
#include "ui/panels/panel.h"

namespace p64::ui {

// Shown in place of a panel whose engine API has not landed in this build; says which one,
// so nobody mistakes it for a finished page.
class PendingPanel : public Panel {
  Q_OBJECT
 public:
  PendingPanel(Workbench& wb, QString id, QString title, QString needs, QWidget* parent = nullptr);
  QString id() const override { return id_; }
  QString title() const override { return title_; }

 private:
  QString id_, title_;
};

}  // namespace p64::ui
