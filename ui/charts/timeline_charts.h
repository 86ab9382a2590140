#pragma once
class QChart;

namespace p64::ui {
class TimelineSplitModel;

// Stacked bars per layer (one set per op group, ms per decode step); hovering a segment
// shows the group and its ops with their times.
void fill_layer_split_chart(QChart* chart, const TimelineSplitModel& model);
// The whole decode token's split: one horizontal 100% bar by group, labelled with ms and %.
void fill_token_split_chart(QChart* chart, const TimelineSplitModel& model);

}  // namespace p64::ui
