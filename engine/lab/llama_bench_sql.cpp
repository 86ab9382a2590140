#include "engine/lab/llama_bench_sql.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/lab/stats.h"
#include "engine/lab/store.h"

namespace p64 {
namespace {

constexpr const char* kColumns[] = {
    "build_commit", "build_number", "cpu_info",  "gpu_info",    "backends",     "model_filename", "model_type",
    "model_size",   "model_n_params", "n_batch", "n_ubatch",    "n_threads",    "cpu_mask",       "cpu_strict",
    "poll",         "type_k",       "type_v",    "n_gpu_layers", "split_mode",  "main_gpu",       "no_kv_offload",
    "flash_attn",   "tensor_split", "use_mmap",  "embeddings",  "n_prompt",     "n_gen",          "test_time",
    "avg_ns",       "stddev_ns",    "avg_ts",    "stddev_ts"};
constexpr const char* kTypes[] = {"TEXT",    "INTEGER", "TEXT",    "TEXT",    "TEXT",    "TEXT",    "TEXT",
                                  "INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER", "TEXT",    "INTEGER",
                                  "INTEGER", "TEXT",    "TEXT",    "INTEGER", "TEXT",    "INTEGER", "INTEGER",
                                  "INTEGER", "TEXT",    "INTEGER", "INTEGER", "INTEGER", "INTEGER", "TEXT",
                                  "INTEGER", "INTEGER", "REAL",    "REAL"};
static_assert(std::size(kColumns) == std::size(kTypes));

std::string sql_text(const std::string& v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

std::string backend_name(const std::string& b) {
  if (b == "cuda") return "CUDA";
  if (b == "vulkan") return "Vulkan";
  if (b == "cpu") return "CPU";
  return b;
}

struct Timing {
  double avg_ts = 0, stddev_ts = 0, avg_ns = 0, stddev_ns = 0;
};

// llama-bench's figures over the repetitions: tokens per second and the test's duration in ns.
Timing timing_of(const std::vector<double>& tok_s, int tokens) {
  std::vector<double> ns;
  for (double t : tok_s) ns.push_back(1e9 * tokens / t);
  const MinMedianMax ts = min_median_max(tok_s), d = min_median_max(ns);
  return Timing{ts.mean, ts.stddev, d.mean, d.stddev};
}

}  // namespace

LlamaBenchSql llama_bench_sql(const Store& store, const std::string& model) {
  LlamaBenchSql out;
  std::ostringstream sql;
  sql << "CREATE TABLE IF NOT EXISTS test (\n";
  for (size_t i = 0; i < std::size(kColumns); ++i)
    sql << "  " << kColumns[i] << " " << kTypes[i] << (i + 1 < std::size(kColumns) ? ",\n" : "\n");
  sql << ");\n\n";
  std::string column_list;
  for (const char* c : kColumns) column_list += (column_list.empty() ? "" : ", ") + std::string(c);

  RunFilter f;
  f.kind = RunKind::DecodeProxy;
  f.include_imported = false;
  f.model = model;
  std::vector<RunRecord> runs = store.runs(f);
  std::sort(runs.begin(), runs.end(), [](const RunRecord& a, const RunRecord& b) { return a.id < b.id; });
  for (const RunRecord& r : runs) {
    if (r.status != RunStatus::Ok) continue;
    const std::vector<SampleRecord> samples = store.samples(r.id);
    if (samples.empty()) continue;
    const auto m = store.model(r.model_id);
    const auto options = nlohmann::json::parse(r.options_json.empty() ? "{}" : r.options_json, nullptr, false);
    const nlohmann::json switches = options.is_object() ? options.value("switches", nlohmann::json::object()) : nlohmann::json::object();
    std::string cpu;
    if (r.passport_id)
      if (const auto p = store.passport(r.passport_id)) cpu = p->host_cpu;
    const bool gpu = r.backend != "cpu";
    std::string kv = switches.is_object() ? switches.value("kv_type", std::string()) : std::string();
    if (kv.empty() && switches.is_object() && switches.value("kv_f16", std::string()) == "1") kv = "f16";
    const int threads = options.is_object() ? options.value("threads", 0) : 0;
    auto row = [&](int n_prompt, int n_gen, const Timing& t) {
      const std::vector<std::string> v = {
          sql_text(r.git_revision),
          "'0'",
          sql_text(cpu),
          sql_text(gpu ? r.device : ""),
          sql_text(backend_name(r.backend)),
          sql_text(m ? std::filesystem::path(m->path).filename().string() : ""),
          sql_text(m ? m->arch + " " + m->dtypes + " (p64 " + r.config + ")" : r.config),
          sql_text(std::to_string(m ? m->file_bytes : 0)),
          "'0'",
          sql_text(std::to_string(n_prompt > 0 ? n_prompt : 1)),
          sql_text(std::to_string(n_prompt > 0 ? n_prompt : 1)),
          sql_text(std::to_string(threads)),
          "'0x0'", "'0'", "'0'",
          sql_text(kv), sql_text(kv),
          gpu ? "'99'" : "'0'",
          "'none'", "'0'", "'0'",
          gpu ? "'1'" : "'0'",
          "'0.00'", "'1'", "'0'",
          sql_text(std::to_string(n_prompt)),
          sql_text(std::to_string(n_gen)),
          sql_text(r.started_at),
          sql_text(std::to_string(std::llround(t.avg_ns))),
          sql_text(std::to_string(std::llround(t.stddev_ns))),
          sql_text(std::to_string(t.avg_ts)),
          sql_text(std::to_string(t.stddev_ts))};
      std::string values;
      for (const auto& x : v) values += (values.empty() ? "" : ", ") + x;
      sql << "INSERT INTO test (" << column_list << ") VALUES (" << values << ");\n";
      ++out.rows;
    };
    const int prompt = samples.front().prompt_tokens, gen = samples.front().decode_tokens;
    std::vector<double> decode, prefill;
    for (const SampleRecord& s : samples) {
      if (s.decode_tok_s > 0) decode.push_back(s.decode_tok_s);
      if (s.prefill_tok_s > 0) prefill.push_back(s.prefill_tok_s);
    }
    const size_t before = static_cast<size_t>(out.rows);
    if (prompt >= 2 && !prefill.empty()) row(prompt, 0, timing_of(prefill, prompt));
    if (prompt <= 1 && gen > 0 && !decode.empty()) row(0, gen, timing_of(decode, gen));
    if (static_cast<size_t>(out.rows) == before) ++out.runs_skipped;
  }
  out.text = sql.str();
  return out;
}

}  // namespace p64
