#include "ui/charts/time_window.h"

#include <algorithm>

namespace p64::ui {

double TimeWindow::time_at(double x, double pixels) const {
  return pixels > 0 ? start_us + x / pixels * width_us() : start_us;
}

double TimeWindow::x_of(double t_us, double pixels) const {
  return width_us() > 0 ? (t_us - start_us) / width_us() * pixels : 0;
}

TimeWindow TimeWindow::zoomed(double x, double pixels, double factor, double min_width_us, double max_width_us) const {
  if (pixels <= 0 || factor <= 0) return *this;
  const double anchor = time_at(x, pixels);
  const double width = std::clamp(width_us() / factor, min_width_us, std::max(min_width_us, max_width_us));
  const double start = anchor - x / pixels * width;
  return {start, start + width};
}

TimeWindow TimeWindow::panned(double dx, double pixels) const {
  if (pixels <= 0) return *this;
  const double shift = dx / pixels * width_us();
  return {start_us - shift, end_us - shift};
}

TimeWindow TimeWindow::clamped(double data_begin_us, double data_end_us) const {
  const double width = width_us(), extent = data_end_us - data_begin_us;
  if (width >= extent) {
    const double mid = 0.5 * (data_begin_us + data_end_us);
    return {mid - 0.5 * width, mid + 0.5 * width};
  }
  const double start = std::clamp(start_us, data_begin_us, data_end_us - width);
  return {start, start + width};
}

}  // namespace p64::ui
