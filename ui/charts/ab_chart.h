#pragma once
class QChart;

namespace p64::ui {
struct AbView;

// Decode tok/s of A and B: a bar at each median, a min–max whisker, and a dot per run.
void fill_ab_chart(QChart* chart, const AbView& view);
// The per-op split of A and B side by side: one stacked bar each, a segment per op group.
void fill_ab_split_chart(QChart* chart, const AbView& view);
}  // namespace p64::ui
