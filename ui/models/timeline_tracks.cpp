#include "ui/models/timeline_tracks.h"

#include <QCoreApplication>
#include <QStringList>

#include <algorithm>
#include <limits>
#include <map>

#include "ui/models/passport_model.h"

namespace p64::ui {

namespace {
QString tr(const char* s) { return QCoreApplication::translate("TimelineTracks", s); }

QString group_name(OpGroup g) {
  const auto n = op_group_name(g);
  return QString::fromUtf8(n.data(), static_cast<qsizetype>(n.size()));
}
}  // namespace

void TimelineTracks::set_spans(const std::vector<OpSpan>& spans) {
  tracks_.clear();
  step_starts_.clear();
  origin_us_ = std::numeric_limits<double>::infinity();
  for (const OpSpan& s : spans)
    if (!s.prefill) origin_us_ = std::min(origin_us_, s.start_us);
  if (origin_us_ == std::numeric_limits<double>::infinity()) {
    origin_us_ = end_us_ = 0;
    return;
  }
  std::map<OpGroup, std::vector<OpSpan>> by_group;  // OpGroup order
  std::map<int32_t, double> step_start;
  end_us_ = 0;
  for (const OpSpan& s : spans) {
    if (s.prefill) continue;
    by_group[s.group].push_back(s);
    const double start = s.start_us - origin_us_;
    end_us_ = std::max(end_us_, start + s.dur_us);
    auto [it, fresh] = step_start.emplace(s.step, start);
    if (!fresh) it->second = std::min(it->second, start);
  }
  for (auto& [group, list] : by_group) {
    std::stable_sort(list.begin(), list.end(), [](const OpSpan& a, const OpSpan& b) { return a.start_us < b.start_us; });
    tracks_.push_back({group, std::move(list)});
  }
  step_starts_.assign(step_start.begin(), step_start.end());
}

const OpSpan* TimelineTracks::span_at(int track, double t_us, double slop_us) const {
  if (track < 0 || track >= track_count()) return nullptr;
  const std::vector<OpSpan>& list = tracks_[static_cast<size_t>(track)].spans;
  const double t = t_us + origin_us_;  // recorded time
  // The first span starting after t + slop: only spans before it can be within reach.
  auto past = std::upper_bound(list.begin(), list.end(), t + slop_us,
                               [](double v, const OpSpan& s) { return v < s.start_us; });
  const OpSpan* best = nullptr;
  double best_distance = slop_us;
  // Spans of one track do not overlap, so walking back a few from `past` finds the candidates;
  // stop once a span ends before t - slop.
  for (auto it = past; it != list.begin();) {
    --it;
    const double end = it->start_us + it->dur_us;
    const double distance = t < it->start_us ? it->start_us - t : t > end ? t - end : 0;
    if (distance <= best_distance) {
      best = &*it;
      best_distance = distance;
      if (distance == 0) break;
    }
    if (end < t - slop_us) break;
  }
  return best;
}

QString describe_span(const OpSpan& s, double axis_start_us) {
  QStringList lines;
  lines << QString("<b>%1</b> (%2)").arg(QString::fromStdString(s.name).toHtmlEscaped(), group_name(s.group));
  lines << (s.layer >= 0 ? tr("layer %1, step %2").arg(s.layer).arg(s.step) : tr("outside blocks, step %1").arg(s.step));
  lines << tr("start %1 ms, duration %2 µs").arg(axis_start_us / 1e3, 0, 'f', 4).arg(s.dur_us, 0, 'f', 2);
  if (s.bytes > 0) {
    QString line = tr("%1 moved").arg(format_bytes(static_cast<double>(s.bytes)));
    if (s.dur_us > 0) line += tr(", %1 GB/s").arg(static_cast<double>(s.bytes) / s.dur_us / 1e3, 0, 'f', 1);
    lines << line;
  } else {
    lines << tr("bytes not counted for this op");
  }
  return lines.join("<br>");
}

}  // namespace p64::ui
