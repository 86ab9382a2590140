#pragma once
// Reads llama-bench output (-o json, jsonl, csv, sql) into PeerResult rows. Peers are a
// diagnostic beside our runs (the plan's "Ollama diagnostic" row), never our runtime.
#include <string>
#include <vector>

#include "engine/lab/store_types.h"

namespace p64 {

// Format by content: '[' json, '{' jsonl, "CREATE TABLE"/"INSERT INTO" sql, else csv.
// Throws p64::Error naming the file and the line/entry that could not be read.
std::vector<PeerResult> read_llama_bench(const std::string& path);

// "llama 3B Q4_K - Medium" -> "Q4_K_M"; "all F32" -> "F32"; unknown -> "".
std::string quant_from_model_type(const std::string& model_type);

}  // namespace p64
