#pragma once
// The stretch of a timeline's time axis a track view shows, and its mapping to pixels: pure
// arithmetic, so zoom and pan are tested without a window.
namespace p64::ui {

struct TimeWindow {
  double start_us = 0;
  double end_us = 1;

  double width_us() const { return end_us - start_us; }
  // Time at pixel x of a `pixels`-wide axis, and back.
  double time_at(double x, double pixels) const;
  double x_of(double t_us, double pixels) const;

  // Zoomed in by `factor` (> 1 in, < 1 out) about pixel x: the time under x stays under x. The
  // width is kept within [min_width_us, max_width_us].
  TimeWindow zoomed(double x, double pixels, double factor, double min_width_us, double max_width_us) const;
  // Moved by a drag of dx pixels: the content follows the pointer (a drag to the right shows earlier times).
  TimeWindow panned(double dx, double pixels) const;
  // Kept over [data_begin_us, data_end_us]: a window as wide as that or wider is centred on it, a
  // narrower one is moved back inside (zoom and pan never leave the data).
  TimeWindow clamped(double data_begin_us, double data_end_us) const;
};

}  // namespace p64::ui
