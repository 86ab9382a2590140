#pragma once
class QChart;

namespace p64::ui {
struct AbView;

// Decode tok/s of A and B: a bar at each median, a min–max whisker, and a dot per run.
void fill_ab_chart(QChart* chart, const AbView& view);
}  // namespace p64::ui
