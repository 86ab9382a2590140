#pragma once
// Checks on a lab store that tests share.
#include <string>

#include "engine/lab/store.h"

namespace p64::test {

// The first row of PRAGMA integrity_check ("ok" for a sound store).
std::string integrity_check(Store& store);

}  // namespace p64::test
