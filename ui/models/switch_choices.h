#pragma once
// The values the A/B panel's switch picker offers for one switch.
#include <QStringList>

#include <string>

#include "engine/runtime/backend.h"

namespace p64::ui {

// A declared list ("0|1") as it is; a range ("16..4096") as its ends, the powers of two
// between and the default; "float" or an open set as the default alone. Every value offered is
// one check_switch_values accepts for `backend`, so picking one never sets a value the backend
// would refuse or read as another.
QStringList switch_choices(const std::string& backend, const SwitchInfo& info);

}  // namespace p64::ui
