#pragma once
// The store's own decode-proxy runs as llama-bench's SQL output (`llama-bench -o sql`: a CREATE
// TABLE test and one INSERT per test), so llama.cpp's compare-llama-bench.py can read them beside
// llama-bench's own rows, with the build's revision as build_commit. A run gives a tg row (n_prompt
// 0, n_gen its decode tokens, avg_ts its mean decode tok/s) when it decoded from a prompt of at most
// one token, as llama-bench's tg tests start from an empty context, and a pp row (n_prompt its
// prompt tokens) when it measured a prefill of at least two tokens. Columns p64 has no counterpart
// for hold llama-bench's neutral values (see docs/measurement.md).
#include <string>

namespace p64 {
class Store;

struct LlamaBenchSql {
  std::string text;  // CREATE TABLE + INSERTs
  int rows = 0;
  int runs_skipped = 0;  // decode-proxy runs with neither a tg nor a pp row (deep prompt, no prefill)
};

// `model`: only runs of models whose path or name contains it (empty: all).
LlamaBenchSql llama_bench_sql(const Store& store, const std::string& model = "");

}  // namespace p64
