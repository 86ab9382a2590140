#pragma once
#include <QWidget>

#include "ui/charts/time_window.h"
#include "ui/models/timeline_tracks.h"

namespace p64::ui {

// The recorded decode steps on a time axis: a track per op group, each op a rectangle in its
// group's colour, step starts marked. The wheel zooms about the pointer, a drag pans, fit()
// shows every step; hovering a span shows its op, layer, step, start, duration and bytes.
class TimelineTrackView : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineTrackView(QWidget* parent = nullptr);

  void set_spans(const std::vector<OpSpan>& spans);  // and fit()
  const TimelineTracks& tracks() const { return tracks_; }
  const TimeWindow& window() const { return window_; }
  void set_window(const TimeWindow& w);  // clamped to the data

  // Layout, for the painter and for tests: the plot's left edge and width in pixels, and the
  // track at a y (-1: none).
  int plot_left() const;
  int plot_width() const;
  int track_at_y(int y) const;
  // The span under a widget position (a few pixels of slack), nullptr if none.
  const OpSpan* span_at(const QPoint& pos) const;
  QString hover_text() const { return hover_text_; }  // what the last hover showed ("" when none)

  void zoom_at(double x, double factor);  // x in widget pixels
  void pan_by(double dx);

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 public Q_SLOTS:
  void fit();

 Q_SIGNALS:
  void window_changed();

 protected:
  void paintEvent(QPaintEvent*) override;
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void leaveEvent(QEvent* e) override;

 private:
  void hover(const QPoint& pos);

  TimelineTracks tracks_;
  TimeWindow window_;
  QString hover_text_;
  bool dragging_ = false;
  double drag_x_ = 0;
};

}  // namespace p64::ui
