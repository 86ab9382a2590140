#include "ui/core/theme.h"

#include <QApplication>
#include <QStyle>
#include <QStyleFactory>

namespace p64::ui {

namespace {
QPalette& system_palette() {
  static QPalette p;
  return p;
}

QPalette dark_palette() {
  QPalette p;
  const QColor window(0x2b, 0x2d, 0x31), base(0x1e, 0x1f, 0x22), text(0xe6, 0xe6, 0xe6);
  const QColor highlight(0x3d, 0x7e, 0xd6), disabled(0x80, 0x80, 0x80);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, QColor(0x26, 0x28, 0x2c));
  p.setColor(QPalette::ToolTipBase, QColor(0x3a, 0x3c, 0x40));
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, disabled);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, QColor(0x35, 0x37, 0x3b));
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
  p.setColor(QPalette::Link, QColor(0x6c, 0xb0, 0xff));
  p.setColor(QPalette::Highlight, highlight);
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Mid, QColor(0x45, 0x47, 0x4b));
  p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
  p.setColor(QPalette::Light, QColor(0x4a, 0x4c, 0x50));
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
    p.setColor(QPalette::Disabled, role, disabled);
  return p;
}

QPalette light_palette() {
  // Fusion's own light palette (the style is Fusion by the time this is asked).
  return QApplication::style()->standardPalette();
}
}  // namespace

ThemeChoice theme_from_name(const QString& name) {
  if (name == "light") return ThemeChoice::Light;
  if (name == "dark") return ThemeChoice::Dark;
  return ThemeChoice::System;
}

QString theme_name(ThemeChoice choice) {
  switch (choice) {
    case ThemeChoice::Light: return "light";
    case ThemeChoice::Dark: return "dark";
    case ThemeChoice::System: break;
  }
  return "system";
}

void remember_system_palette() { system_palette() = QApplication::palette(); }

void apply_theme(ThemeChoice choice) {
  // Fusion draws both palettes faithfully; native styles ignore parts of a dark palette.
  QApplication::setStyle(QStyleFactory::create("Fusion"));
  switch (choice) {
    case ThemeChoice::Light: QApplication::setPalette(light_palette()); break;
    case ThemeChoice::Dark: QApplication::setPalette(dark_palette()); break;
    case ThemeChoice::System:
      QApplication::setPalette(palette_is_dark(system_palette()) ? dark_palette() : system_palette());
      break;
  }
}

bool palette_is_dark(const QPalette& palette) {
  return palette.color(QPalette::Window).lightness() < 128;
}

bool current_theme_is_dark() { return palette_is_dark(QApplication::palette()); }

QChart::ChartTheme chart_theme() {
  return current_theme_is_dark() ? QChart::ChartThemeDark : QChart::ChartThemeLight;
}

void style_chart(QChart* chart) {
  chart->setTheme(chart_theme());
  chart->setBackgroundBrush(QApplication::palette().color(QPalette::Base));
  chart->setTitleBrush(QApplication::palette().color(QPalette::Text));
  chart->legend()->setLabelColor(QApplication::palette().color(QPalette::Text));
  chart->setMargins(QMargins(4, 4, 4, 4));
  chart->setAnimationOptions(QChart::NoAnimation);
}

QColor op_group_color(int group) {
  // RMS, ATTN, FFN, LOGITS, SAMPLE, OTHER: distinct in hue and readable on light and dark.
  static const QColor colors[] = {QColor(0x8e, 0x7c, 0xc3), QColor(0x3d, 0x85, 0xc6),
                                  QColor(0xe0, 0x8a, 0x2c), QColor(0x4c, 0xaf, 0x50),
                                  QColor(0xd0, 0x4a, 0x4a), QColor(0x90, 0x90, 0x90)};
  return colors[(group >= 0 && group < 6) ? group : 5];
}

QColor series_a_color() { return QColor(0x3d, 0x85, 0xc6); }
QColor series_b_color() { return QColor(0xe0, 0x8a, 0x2c); }

}  // namespace p64::ui
