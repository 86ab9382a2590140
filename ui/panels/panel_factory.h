#pragma once
#include <QList>

namespace p64::ui {
class Panel;
class Workbench;

// Every panel of the workbench in tab order.
QList<Panel*> create_panels(Workbench& workbench);
}  // namespace p64::ui
