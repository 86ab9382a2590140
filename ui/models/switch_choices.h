#pragma once
// The values a switch picker offers for one backend: its own switch table, the one the option
// reader checks against, so a range offers its ends and default, never its "lo..hi" text.
#include <QString>

#include <vector>

namespace p64::ui {

struct SwitchChoice {
  QString name, value;
  QString status;       // "default", "opt-in", "rejected", ...
  bool is_default = false;
  QString description;
};
// Throws p64::Error for a backend the registry does not know.
std::vector<SwitchChoice> switch_choices(const QString& backend);

}  // namespace p64::ui
