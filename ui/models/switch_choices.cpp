#include "ui/models/switch_choices.h"

#include "engine/runtime/backend_registry.h"

namespace p64::ui {

std::vector<SwitchChoice> switch_choices(const QString& backend) {
  std::vector<SwitchChoice> out;
  for (const SwitchInfo& s : backend_switch_table(backend.toStdString()))
    for (const std::string& value : s.picker_values())
      out.push_back({QString::fromStdString(s.name), QString::fromStdString(value), QString::fromStdString(s.status),
                     value == s.default_value, QString::fromStdString(s.description)});
  return out;
}

}  // namespace p64::ui
