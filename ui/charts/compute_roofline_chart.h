#pragma once
#include <vector>

class QChart;

namespace p64::ui {
struct RooflinePoint;

// The classic roofline, log-log: arithmetic intensity (FLOP per byte read) on x, achieved GFLOP/s
// on y. Each device's roof is its measured read bandwidth as the sloped line (GB/s × FLOP/byte)
// up to its compute ceiling, flat from that ridge on; a device without a ceiling has the slope
// only, and the legend says so. Each chosen run is a circle for its prefill and a square for its
// decode, in the run's colour (the same as in the decode roofline).
void fill_compute_roofline_chart(QChart* chart, const std::vector<RooflinePoint>& points);
}  // namespace p64::ui
