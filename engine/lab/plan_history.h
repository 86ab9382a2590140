#pragma once
// The plan's own history (resources/plan_history.json, embedded at build time): the §3
// scoreboard stages, the §4.4 rejected-as-default switches and the dated §11 captures with
// their measured tok/s on the RTX A2000 12GB / Windows / wgpu host. A fresh store imports it
// once, every row marked imported and tied to that host's passport. Reports show it apart from
// the user's own runs, under kPlanHistoryLabel, and never judge or compare those runs by it.
#include <string_view>

namespace p64 {
class Store;

inline constexpr std::string_view kPlanHistoryLabel = "Plan history (imported from the seed plan, another machine)";
inline constexpr std::string_view kPlanHistorySource = "resources/plan_history.json";  // its peers' source_file
inline constexpr const char* kPlanHistoryMetaKey = "plan_history_imported";               // set once imported

std::string_view embedded_plan_history_json();

// Imports the embedded history unless the store's meta says it already did (one transaction).
// Returns true when it imported now.
bool import_plan_history_once(Store& store);

}  // namespace p64
