#pragma once
class QChart;

namespace p64::ui {
class OpRooflineModel;

// One horizontal bar per counted op: the GB/s it reached, then (grey) what is left up to the
// passport's read ceiling, so every bar is as long as the ceiling and an op far below the line
// shows as mostly grey. Without a ceiling, the achieved bars alone.
void fill_op_roofline_chart(QChart* chart, const OpRooflineModel& model);
}  // namespace p64::ui
