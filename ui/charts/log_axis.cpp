#include "ui/charts/log_axis.h"

#include <QLogValueAxis>

#include <cmath>

namespace p64::ui {

QLogValueAxis* make_decade_axis(double lo, double hi, const QString& title) {
  auto* axis = new QLogValueAxis;
  axis->setBase(10);
  axis->setRange(std::pow(10.0, std::floor(std::log10(lo))), std::pow(10.0, std::ceil(std::log10(hi))));
  axis->setLabelFormat(lo >= 1 ? "%.0f" : "%g");  // %g writes 1e+06
  axis->setMinorTickCount(8);
  axis->setTitleText(title);
  return axis;
}

}  // namespace p64::ui
