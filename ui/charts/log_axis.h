#pragma once
#include <QString>

class QLogValueAxis;

namespace p64::ui {
// A base-10 log axis over whole decades around [lo, hi] (lo > 0), so it starts and ends on round
// numbers, with minor ticks at 2..9.
QLogValueAxis* make_decade_axis(double lo, double hi, const QString& title);
}  // namespace p64::ui
