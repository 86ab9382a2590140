#include "ui/panels/spin_box.h"

namespace p64::ui {

QSpinBox* make_spin_box(int lo, int hi, int value, QWidget* parent) {
  auto* s = new QSpinBox(parent);
  s->setRange(lo, hi);
  s->setValue(value);
  return s;
}

}  // namespace p64::ui
