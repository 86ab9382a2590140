#pragma once
#include <QColor>
#include <QString>

#include <vector>

class QChart;

namespace p64::ui {
struct RooflinePoint;
class OpRooflineModel;

// The classic roofline, log-log: arithmetic intensity (FLOP per byte read) on x, achieved GFLOP/s
// on y. Each device's roof is its measured read bandwidth as the sloped line (GB/s × FLOP/byte)
// up to its compute ceiling, flat from that ridge on; a device without a ceiling has the slope
// only, and the legend says so.

// Each chosen run is a circle for its prefill and a square for its decode, in the run's colour
// (the same as in the decode roofline).
void fill_compute_roofline_chart(QChart* chart, const std::vector<RooflinePoint>& points);

// Each op of a timeline run whose bytes and FLOPs the lab counts is a square at its intensity and
// the GFLOP/s it reached over its own spans, under the run's device roof (`device` names it).
void fill_op_compute_roofline_chart(QChart* chart, const OpRooflineModel& ops, const QString& device);
}  // namespace p64::ui
