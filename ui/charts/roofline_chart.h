#pragma once
#include <vector>

class QChart;

namespace p64::ui {
struct RooflinePoint;

// Log-log: bytes read per decode token (x) against achieved effective GB/s (y). Each device's
// measured read bandwidth is a ceiling line and the plan's G5 bar (`g5_share` of it) a dashed
// line under it; each run is a labelled point.
void fill_roofline_chart(QChart* chart, const std::vector<RooflinePoint>& points, double g5_share = 0.40);
}  // namespace p64::ui
