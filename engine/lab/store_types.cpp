#include "engine/lab/store_types.h"

#include <ctime>

#include "engine/common/error.h"
#include "engine/common/platform.h"

namespace p64 {
namespace {

template <typename E, size_t N>
E parse(std::string_view s, const std::string_view (&names)[N], const char* what) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<E>(i);
  std::string all;
  for (auto n : names) all += (all.empty() ? "" : ", ") + std::string(n);
  throw Error("unknown " + std::string(what) + " '" + std::string(s) + "' (one of: " + all + ")");
}

constexpr std::string_view kKinds[] = {"decode-proxy", "timeline", "ab", "chat"};
constexpr std::string_view kStatuses[] = {"running", "ok", "failed", "cancelled"};
constexpr std::string_view kVerdicts[] = {"rejected", "inconclusive", "win", "promoted"};
constexpr std::string_view kOptStatuses[] = {"default", "opt-in", "rejected", "candidate"};

}  // namespace

std::string_view to_string(RunKind k) { return kKinds[static_cast<size_t>(k)]; }
std::string_view to_string(RunStatus s) { return kStatuses[static_cast<size_t>(s)]; }
std::string_view to_string(Verdict v) { return kVerdicts[static_cast<size_t>(v)]; }
std::string_view to_string(OptStatus s) { return kOptStatuses[static_cast<size_t>(s)]; }
RunKind run_kind_from_string(std::string_view s) { return parse<RunKind>(s, kKinds, "run kind"); }
RunStatus run_status_from_string(std::string_view s) { return parse<RunStatus>(s, kStatuses, "run status"); }
Verdict verdict_from_string(std::string_view s) { return parse<Verdict>(s, kVerdicts, "verdict"); }
OptStatus opt_status_from_string(std::string_view s) {
  return parse<OptStatus>(s, kOptStatuses, "optimisation status");
}

std::string utc_now_iso() {
  const std::time_t t = std::time(nullptr);
  const std::tm tm = platform::utc_time(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace p64
