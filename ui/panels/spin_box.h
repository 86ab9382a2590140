#pragma once
// A spin box with its range and starting value, as the panels' forms build them.
#include <QSpinBox>

namespace p64::ui {

QSpinBox* make_spin_box(int lo, int hi, int value, QWidget* parent);

}  // namespace p64::ui
