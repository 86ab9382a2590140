#include "ui/charts/timeline_track_view.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

#include "ui/core/theme.h"

namespace p64::ui {

namespace {

constexpr int kLabelWidth = 64;
constexpr int kRightMargin = 10;
constexpr int kAxisHeight = 34;  // tick labels, then the step labels under them
constexpr int kTrackHeight = 30;
constexpr int kTrackGap = 4;
constexpr double kSlopPixels = 3;  // a span this close to the pointer counts as under it

// 1, 2 or 5 times a power of ten: the tick step that gives about `target` µs between ticks.
double tick_step(double target) {
  if (target <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(target)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= target) return m * p;
  return 10 * p;
}

QString group_name(OpGroup g) {
  const auto n = op_group_name(g);
  return QString::fromUtf8(n.data(), static_cast<qsizetype>(n.size()));
}

}  // namespace

TimelineTrackView::TimelineTrackView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::WheelFocus);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setToolTip({});
}

void TimelineTrackView::set_spans(const std::vector<OpSpan>& spans) {
  tracks_.set_spans(spans);
  hover_text_.clear();
  fit();
  updateGeometry();
}

void TimelineTrackView::fit() {
  window_ = {tracks_.begin_us(), std::max(tracks_.end_us(), tracks_.begin_us() + 1.0)};
  update();
  Q_EMIT window_changed();
}

void TimelineTrackView::set_window(const TimeWindow& w) {
  window_ = w.clamped(tracks_.begin_us(), std::max(tracks_.end_us(), 1.0));
  update();
  Q_EMIT window_changed();
}

int TimelineTrackView::plot_left() const { return kLabelWidth; }
int TimelineTrackView::plot_width() const { return std::max(1, width() - kLabelWidth - kRightMargin); }

int TimelineTrackView::track_at_y(int y) const {
  const int offset = y - kAxisHeight;
  if (offset < 0) return -1;
  const int track = offset / (kTrackHeight + kTrackGap);
  if (track >= tracks_.track_count() || offset % (kTrackHeight + kTrackGap) >= kTrackHeight) return -1;
  return track;
}

const OpSpan* TimelineTrackView::span_at(const QPoint& pos) const {
  const int track = track_at_y(pos.y());
  const double x = pos.x() - plot_left();
  if (track < 0 || x < 0 || x > plot_width()) return nullptr;
  const double us_per_pixel = window_.width_us() / plot_width();
  return tracks_.span_at(track, window_.time_at(x, plot_width()), kSlopPixels * us_per_pixel);
}

void TimelineTrackView::zoom_at(double x, double factor) {
  const double extent = std::max(tracks_.end_us(), 1.0);
  // No closer than a hundredth of a microsecond across the plot: past that the clock says nothing.
  const TimeWindow w = window_.zoomed(x - plot_left(), plot_width(), factor, 0.01, extent);
  set_window(w);
}

void TimelineTrackView::pan_by(double dx) { set_window(window_.panned(dx, plot_width())); }

QSize TimelineTrackView::sizeHint() const {
  return {900, kAxisHeight + std::max(1, tracks_.track_count()) * (kTrackHeight + kTrackGap) + 6};
}

// Every track stays in sight: a splitter may not squeeze one away.
QSize TimelineTrackView::minimumSizeHint() const { return {300, sizeHint().height()}; }

void TimelineTrackView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QPalette& pal = palette();
  p.fillRect(rect(), pal.base());
  if (tracks_.empty()) {
    p.setPen(pal.color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter, tr("No decode steps recorded"));
    return;
  }
  const int left = plot_left(), w = plot_width();
  const int bottom = kAxisHeight + tracks_.track_count() * (kTrackHeight + kTrackGap);
  QFont small = font();
  small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.85));
  p.setFont(small);
  const QFontMetrics fm(small);

  // Time axis: ticks in ms since the first decode step.
  const double step = tick_step(window_.width_us() / std::max(1.0, w / 90.0));
  const int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step / 1e3))));
  p.setPen(pal.color(QPalette::Text));
  p.drawText(QRect(0, 0, kLabelWidth - 6, fm.height() + 2), Qt::AlignRight | Qt::AlignVCenter, tr("ms"));
  const QColor grid = pal.color(QPalette::Mid);
  for (double t = std::ceil(window_.start_us / step) * step; t <= window_.end_us; t += step) {
    const double x = left + window_.x_of(t, w);
    p.setPen(grid);
    p.drawLine(QPointF(x, fm.height() + 2), QPointF(x, bottom));
    p.setPen(pal.color(QPalette::Text));
    p.drawText(QPointF(x + 3, fm.ascent() + 1), QString::number(t / 1e3, 'f', decimals));
  }

  // Step starts, labelled where there is room.
  QPen step_pen(pal.color(QPalette::Dark), 1, Qt::DashLine);
  double last_label_x = -1e9;
  for (const auto& [step_index, start] : tracks_.step_starts()) {
    if (start < window_.start_us || start > window_.end_us) continue;
    const double x = left + window_.x_of(start, w);
    p.setPen(step_pen);
    p.drawLine(QPointF(x, fm.height() + 4), QPointF(x, bottom));
    const QString label = tr("step %1").arg(step_index);
    const int advance = fm.horizontalAdvance(label);
    if (x - last_label_x > advance + 8 && x + 3 + advance <= width()) {
      p.setPen(pal.color(QPalette::Text));
      p.drawText(QPointF(x + 3, fm.height() * 2 + 2), label);
      last_label_x = x;
    }
  }

  // Tracks: a band and a label each, then the spans in view.
  for (int i = 0; i < tracks_.track_count(); ++i) {
    const int y = kAxisHeight + i * (kTrackHeight + kTrackGap);
    p.fillRect(QRect(left, y, w, kTrackHeight), pal.alternateBase());
    p.setPen(pal.color(QPalette::Text));
    p.drawText(QRect(0, y, kLabelWidth - 6, kTrackHeight), Qt::AlignRight | Qt::AlignVCenter,
               group_name(tracks_.track_group(i)));
    const QColor fill = op_group_color(static_cast<int>(tracks_.track_group(i)));
    p.setPen(QPen(fill.darker(150), 1));
    const std::vector<OpSpan>& spans = tracks_.track_spans(i);
    const double origin = tracks_.origin_us();
    auto it = std::lower_bound(spans.begin(), spans.end(), window_.start_us + origin,
                               [](const OpSpan& s, double t) { return s.start_us + s.dur_us < t; });
    p.setClipRect(QRect(left, y, w, kTrackHeight));
    for (; it != spans.end() && it->start_us - origin <= window_.end_us; ++it) {
      const double x0 = left + window_.x_of(it->start_us - origin, w);
      const double x1 = left + window_.x_of(it->start_us - origin + it->dur_us, w);
      const QRectF r(x0, y + 2, std::max(1.0, x1 - x0), kTrackHeight - 4);
      p.setBrush(fill);
      p.drawRect(r);
      const QString name = QString::fromStdString(it->name) + (it->layer >= 0 ? QString(" L%1").arg(it->layer) : "");
      if (r.width() > fm.horizontalAdvance(name) + 6) {
        p.setPen(fill.lightnessF() > 0.55 ? Qt::black : Qt::white);
        p.drawText(r, Qt::AlignCenter, name);
        p.setPen(QPen(fill.darker(150), 1));
      }
    }
    p.setClipping(false);
  }
}

void TimelineTrackView::wheelEvent(QWheelEvent* e) {
  const double factor = std::pow(1.0015, e->angleDelta().y());  // one notch (120): about 1.2x
  zoom_at(e->position().x(), factor);
  e->accept();
}

void TimelineTrackView::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return QWidget::mousePressEvent(e);
  dragging_ = true;
  drag_x_ = e->position().x();
  setCursor(Qt::ClosedHandCursor);
  QToolTip::hideText();
}

void TimelineTrackView::mouseMoveEvent(QMouseEvent* e) {
  if (dragging_) {
    pan_by(e->position().x() - drag_x_);
    drag_x_ = e->position().x();
    return;
  }
  hover(e->position().toPoint());
}

void TimelineTrackView::mouseReleaseEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return QWidget::mouseReleaseEvent(e);
  dragging_ = false;
  unsetCursor();
}

void TimelineTrackView::leaveEvent(QEvent*) {
  hover_text_.clear();
  QToolTip::hideText();
}

void TimelineTrackView::hover(const QPoint& pos) {
  const OpSpan* s = span_at(pos);
  if (!s) {
    hover_text_.clear();
    QToolTip::hideText();
    return;
  }
  hover_text_ = describe_span(*s, tracks_.start_of(*s));
  QToolTip::showText(mapToGlobal(pos), hover_text_, this);
}

}  // namespace p64::ui
