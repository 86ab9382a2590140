#pragma once
#include <vector>

class QChart;

namespace p64::ui {
struct DepthSweepPoint;

// A depth sweep: decode tok/s (left axis, with the read roofline's tok/s at each depth dashed
// when the passport measured one) and effective GB/s (right axis) against the depth in tokens.
void fill_depth_chart(QChart* chart, const std::vector<DepthSweepPoint>& points);
}  // namespace p64::ui
