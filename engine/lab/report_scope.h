#pragma once
// What a report may compare with what. A bar or a peer's tok/s says something about a run only
// on the same model file and the same device: the plan's G0-G5 bars were set for the plan's 3B
// model, and a llama-bench row of another model or device is no yardstick for this run.
#include <string>
#include <string_view>

#include "engine/lab/store_types.h"

namespace p64 {

// The model the plan's bars (report.h, BarThresholds) were set for.
inline constexpr std::string_view kPlanBarsModel = "llama-3.2-3b-instruct-q4_k_m";

// A model name or file path reduced to what identifies the model: the file name without folder
// and model-file suffixes (.p64, .gguf, .bin, .soa), lower case, letters and digits only
// ("C:\\m\\Llama-3.2-3B-Instruct-Q4_K_M.soa.p64" -> "llama323binstructq4km").
std::string model_key(std::string_view name_or_path);

// The store's model is the plan's (by file name or model name).
bool is_plan_bars_model(const ModelRecord& m);

// A llama-bench row's model file is this model (by key of file name or model name).
bool same_model(const PeerResult& peer, const ModelRecord& m);

// Two device names name the same device: equal keys, or one key holds the other ("AMD EPYC" in
// llama-bench's cpu_info and "AMD EPYC 7B13" in a passport).
bool same_device(std::string_view a, std::string_view b);

}  // namespace p64
