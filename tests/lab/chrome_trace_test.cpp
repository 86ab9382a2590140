// The Chrome trace writer: a track per phase and op group, each named by thread_name metadata,
// so Perfetto shows "decode ATTN" beside "decode FFN" as nsys does.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/lab/timeline_run.h"
#include "support/op_spans.h"

namespace p64 {
namespace {

// A 5 us span of op `name` (the track layout, not the durations, is under test).
OpSpan span(const char* name, OpGroup group, int layer, bool prefill, int step, double start_us) {
  return test::op_span(name, group, layer, step, start_us, 5, 0, prefill);
}

TEST(ChromeTrace, EachPhaseAndOpGroupIsATrackNamedByItsMetadata) {
  const std::vector<OpSpan> spans = {
      span("qkv", OpGroup::Attn, 0, true, 0, 0),        span("gate_up", OpGroup::Ffn, 0, true, 0, 10),
      span("rms_attn", OpGroup::Rms, 0, false, 1, 100), span("qkv", OpGroup::Attn, 0, false, 1, 110),
      span("sdpa", OpGroup::Attn, 0, false, 1, 120),    span("gate_up", OpGroup::Ffn, 0, false, 1, 130),
      span("logits", OpGroup::Logits, -1, false, 1, 140), span("qkv", OpGroup::Attn, 0, false, 2, 200),
  };
  const nlohmann::json trace = chrome_trace(spans, "toy");
  std::map<int, std::string> track_name;
  std::map<int, int> sort_index;
  std::map<std::string, std::set<std::string>> ops_on_track;  // track name -> event names
  std::string process;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      EXPECT_EQ(e["pid"], 1);
      EXPECT_TRUE(track_name.emplace(e["tid"].get<int>(), e["args"]["name"].get<std::string>()).second)
          << "a track named twice: " << e.dump();
    } else if (e["ph"] == "M" && e["name"] == "thread_sort_index") {
      sort_index[e["tid"].get<int>()] = e["args"]["sort_index"].get<int>();
    } else if (e["ph"] == "M" && e["name"] == "process_name") {
      process = e["args"]["name"].get<std::string>();
    }
  }
  EXPECT_EQ(process, "toy");
  size_t complete = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++complete;
    const int tid = e["tid"].get<int>();
    ASSERT_TRUE(track_name.count(tid)) << "an event on an unnamed track: " << e.dump();
    // The track's name says the event's phase and group (its category).
    const std::string& track = track_name[tid];
    EXPECT_EQ(track.substr(track.find(' ') + 1), e["cat"].get<std::string>()) << e.dump();
    ops_on_track[track].insert(e["name"].get<std::string>());
  }
  EXPECT_EQ(complete, spans.size());
  // Exactly the tracks that have spans, no empty ones.
  std::set<std::string> names;
  for (const auto& [tid, name] : track_name) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{"prefill ATTN", "prefill FFN", "decode RMS", "decode ATTN", "decode FFN",
                                          "decode LOGITS"}));
  EXPECT_EQ(ops_on_track["decode ATTN"], (std::set<std::string>{"qkv L0", "sdpa L0"}));
  EXPECT_EQ(ops_on_track["prefill ATTN"], (std::set<std::string>{"qkv L0"}));
  EXPECT_EQ(ops_on_track["decode LOGITS"], (std::set<std::string>{"logits"}));
  // Prefill's tracks sort above decode's, each phase's in the split's order RMS, ATTN, FFN, LOGITS.
  std::map<int, std::string> by_sort;
  for (const auto& [tid, index] : sort_index) by_sort[index] = track_name.at(tid);
  std::vector<std::string> order;
  for (const auto& [index, name] : by_sort) order.push_back(name);
  EXPECT_EQ(order, (std::vector<std::string>{"prefill ATTN", "prefill FFN", "decode RMS", "decode ATTN", "decode FFN",
                                             "decode LOGITS"}));
}

TEST(ChromeTrace, NoSpansIsAProcessWithoutTracks) {
  const nlohmann::json trace = chrome_trace({}, "empty");
  ASSERT_EQ(trace["traceEvents"].size(), 1u);
  EXPECT_EQ(trace["traceEvents"][0]["name"], "process_name");
}

}  // namespace
}  // namespace p64
