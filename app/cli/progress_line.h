#pragma once
// The CLI's progress display: long work (a conversion, a sweep) reports through a ProgressFn,
// and the terminal user sees it on stderr. The GUI shows the same ProgressFn in its own way.
#include <string>

#include "engine/common/progress.h"

namespace p64 {

// A single stderr line rewritten in place ("\r"), ended with a newline at fraction 1.
ProgressFn stderr_progress_line(std::string prefix);

}  // namespace p64
