#include "app/cli/progress_line.h"

#include <cstdio>
#include <memory>
#include <string_view>

#include "engine/common/platform.h"

namespace p64 {

ProgressFn stderr_progress_line(std::string prefix) {
  // On a terminal one line is rewritten in place; into a log (CI, a pipe) a line is written
  // only each time another tenth is done, so long work does not flood the file.
  const bool terminal = platform::stderr_is_terminal();
  auto last_tenth = std::make_shared<int>(-1);
  return [prefix = std::move(prefix), terminal, last_tenth](double fraction, std::string_view what) {
    if (terminal) {
      std::fprintf(stderr, "\r%s [%3.0f%%] %.*s\033[K", prefix.c_str(), fraction * 100.0,
                   static_cast<int>(what.size()), what.data());
      if (fraction >= 1.0) std::fputc('\n', stderr);
    } else {
      const int tenth = static_cast<int>(fraction * 10.0);
      if (tenth == *last_tenth) return true;
      *last_tenth = tenth;
      std::fprintf(stderr, "%s [%3.0f%%] %.*s\n", prefix.c_str(), fraction * 100.0, static_cast<int>(what.size()),
                   what.data());
    }
    std::fflush(stderr);
    return true;
  };
}

}  // namespace p64
