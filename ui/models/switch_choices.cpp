#include "ui/models/switch_choices.h"

#include <algorithm>
#include <charconv>

namespace p64::ui {

namespace {
bool whole(const std::string& text, long long* v) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *v);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

QStringList candidates(const SwitchInfo& info) {
  QStringList out;
  const size_t dots = info.values.find("..");
  long long lo = 0, hi = 0;
  if (dots != std::string::npos && whole(info.values.substr(0, dots), &lo) && whole(info.values.substr(dots + 2), &hi)) {
    out << QString::number(lo);
    for (long long p = 1; p > 0 && p < hi; p *= 2)
      if (p > lo) out << QString::number(p);
    out << QString::number(hi);
  } else if (!info.values.empty() && info.values != "float") {
    out = QString::fromStdString(info.values).split('|', Qt::SkipEmptyParts);
  }
  const QString def = QString::fromStdString(info.default_value);
  if (!def.isEmpty() && !out.contains(def)) out << def;
  return out;
}
}  // namespace

QStringList switch_choices(const std::string& backend, const SwitchInfo& info) {
  QStringList offered;
  for (const QString& v : candidates(info)) {
    try {
      check_switch_values(backend, {info}, {{info.name, v.toStdString()}});
      if (!offered.contains(v)) offered << v;
    } catch (const std::exception&) {
      // not a value the backend takes: not offered
    }
  }
  // Ranges read best in numeric order, the default among them.
  if (info.values.find("..") != std::string::npos)
    std::sort(offered.begin(), offered.end(), [](const QString& a, const QString& b) { return a.toLongLong() < b.toLongLong(); });
  return offered;
}

}  // namespace p64::ui
