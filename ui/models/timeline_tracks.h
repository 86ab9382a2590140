#pragma once
// The decode steps of a timeline run laid out for a track view: one track per op group present
// (in OpGroup order, as `p64 timeline` groups them), each track's spans in time order, times
// measured from the first decode span. Headless, so hit-testing is tested without pixels.
#include <QString>

#include <vector>

#include "engine/runtime/timeline.h"

namespace p64::ui {

class TimelineTracks {
 public:
  // Keeps the decode spans (the prefill is one step of another shape).
  void set_spans(const std::vector<OpSpan>& spans);

  int track_count() const { return static_cast<int>(tracks_.size()); }
  OpGroup track_group(int track) const { return tracks_[static_cast<size_t>(track)].group; }
  const std::vector<OpSpan>& track_spans(int track) const { return tracks_[static_cast<size_t>(track)].spans; }
  bool empty() const { return tracks_.empty(); }

  // Extent of the decode spans on the track view's axis (0 = the first decode span's start).
  double begin_us() const { return 0; }
  double end_us() const { return end_us_; }
  double origin_us() const { return origin_us_; }  // the first decode span's recorded start
  double start_of(const OpSpan& s) const { return s.start_us - origin_us_; }

  // Where each decode step starts on the axis, in step order: the view marks them.
  const std::vector<std::pair<int32_t, double>>& step_starts() const { return step_starts_; }

  // The span of `track` under axis time t, or within `slop_us` of it (a span a pixel wide is
  // hard to hit); the nearest when several are. nullptr when none.
  const OpSpan* span_at(int track, double t_us, double slop_us = 0) const;

 private:
  struct Track {
    OpGroup group;
    std::vector<OpSpan> spans;  // by start
  };
  std::vector<Track> tracks_;
  std::vector<std::pair<int32_t, double>> step_starts_;
  double origin_us_ = 0;
  double end_us_ = 0;
};

// The hover text of a span: op, group, layer, step, start on the axis, duration, and bytes with
// GB/s where the bytes are known.
QString describe_span(const OpSpan& s, double axis_start_us);

}  // namespace p64::ui
