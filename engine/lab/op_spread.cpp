#include "engine/lab/op_spread.h"

#include <algorithm>
#include <map>
#include <utility>

#include <nlohmann/json.hpp>

namespace p64 {
namespace {

struct Durations {
  OpGroup group = OpGroup::Other;
  std::vector<double> all;                       // every decode span of the op
  std::map<int32_t, std::vector<double>> layer;  // by layer, for spans inside blocks
};

OpSpread row(const std::string& name, OpGroup group, int32_t layer, const std::vector<double>& us) {
  OpSpread s;
  s.name = name;
  s.group = std::string(op_group_name(group));
  s.layer = layer;
  s.us = min_median_max(us);
  return s;
}

}  // namespace

OpSpreadTable op_spread(std::span<const OpSpan> spans) {
  std::map<std::string, Durations> by_op;
  for (const OpSpan& s : spans) {
    if (s.prefill) continue;
    Durations& d = by_op[s.name];
    d.group = s.group;
    d.all.push_back(s.dur_us);
    if (s.layer >= 0) d.layer[s.layer].push_back(s.dur_us);
  }
  std::vector<std::pair<double, const std::string*>> order;  // summed time, name
  for (const auto& [name, d] : by_op) {
    double sum = 0;
    for (double us : d.all) sum += us;
    order.emplace_back(sum, &name);
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });

  OpSpreadTable t;
  for (const auto& [sum, name] : order) {
    const Durations& d = by_op.at(*name);
    OpSpread op = row(*name, d.group, -1, d.all);
    for (const auto& [layer, us] : d.layer) {
      OpSpread l = row(*name, d.group, layer, us);
      if (op.fastest_layer < 0 || l.us.median < op.fastest_layer_us)
        op.fastest_layer = layer, op.fastest_layer_us = l.us.median;
      if (op.slowest_layer < 0 || l.us.median > op.slowest_layer_us)
        op.slowest_layer = layer, op.slowest_layer_us = l.us.median;
      t.layers.push_back(std::move(l));
    }
    t.ops.push_back(std::move(op));
  }
  return t;
}

void to_json(nlohmann::json& j, const OpSpread& s) {
  j = nlohmann::json{{"name", s.name}, {"group", s.group}, {"us", s.us}};
  if (s.layer >= 0) j["layer"] = s.layer;
  if (s.fastest_layer >= 0) {
    j["fastest_layer"] = {{"layer", s.fastest_layer}, {"median_us", s.fastest_layer_us}};
    j["slowest_layer"] = {{"layer", s.slowest_layer}, {"median_us", s.slowest_layer_us}};
  }
}

}  // namespace p64
