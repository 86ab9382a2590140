#pragma once
#include <QPalette>
#include <QString>

#include <QtCharts/QChart>

namespace p64::ui {

// Light and dark palettes following the system: "system" keeps the palette the platform gave
// at start-up (Qt 6.4 has no colour-scheme hint, so dark is read off the window colour).
enum class ThemeChoice { System, Light, Dark };

ThemeChoice theme_from_name(const QString& name);  // "system" | "light" | "dark"
QString theme_name(ThemeChoice choice);

void remember_system_palette();  // once, before any apply_theme()
void apply_theme(ThemeChoice choice);
bool palette_is_dark(const QPalette& palette);
bool current_theme_is_dark();

// Charts follow the palette: the dark chart theme on a dark window, the light one otherwise.
QChart::ChartTheme chart_theme();
void style_chart(QChart* chart);

// Fixed colours for the plan's op groups so a group looks the same in every chart.
QColor op_group_color(int group);  // OpGroup as int
QColor series_a_color();
QColor series_b_color();

}  // namespace p64::ui
