#pragma once
#include <QColor>

namespace p64::ui {
// The colour of the i-th chosen run, the same in every chart that shows the runs side by side.
QColor run_color(int i);
}  // namespace p64::ui
