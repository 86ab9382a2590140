#include "engine/lab/cpu_bench.h"

#include <filesystem>
#include <memory>

#include "engine/common/cpu_isa.h"
#include "engine/common/error.h"
#include "engine/format/convert.h"
#include "engine/format/p64_reader.h"
#include "engine/format/synth.h"
#include "engine/lab/decode_proxy.h"
#include "engine/lab/lab_config.h"

namespace p64 {
namespace fs = std::filesystem;

std::string default_cpu_bench_layout() { return has_interleaved_kernels() ? "cpu-rows" : "plain"; }

std::vector<CpuBenchModel> default_cpu_bench_models() {
  return {{"smollm2-360m", "Q8_0"}, {"smollm2-360m", "Q4_K_M"}, {"llama-3.2-1b", "Q4_K_M"}};
}

CpuBenchModel parse_cpu_bench_model(const std::string& spec) {
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) throw Error("--synth " + spec + ": expected PRESET:QUANT[:LAYOUT], e.g. smollm2-360m:Q8_0");
  CpuBenchModel m{spec.substr(0, colon), spec.substr(colon + 1)};
  if (const size_t second = m.quant.find(':'); second != std::string::npos) {
    m.layout = m.quant.substr(second + 1);
    m.quant.resize(second);
  }
  if (m.layout != "cpu-rows" && m.layout != "plain")
    throw Error("--synth " + spec + ": layout '" + m.layout + "' is neither cpu-rows nor plain");
  return m;
}

std::string ensure_cpu_bench_model(const std::string& dir, const CpuBenchModel& m, const ProgressFn& progress) {
  fs::create_directories(dir);
  // Both layouts come from the same synthesized GGUF (seed 1); the plain file keeps the name it
  // had before layouts existed, so caches made then stay valid.
  const std::string suffix = m.layout == "plain" ? "" : "-" + m.layout;
  const fs::path p64_path = fs::path(dir) / (m.preset + "-" + m.quant + suffix + ".p64");
  if (fs::exists(p64_path)) return p64_path.string();
  const fs::path gguf = fs::path(dir) / (m.preset + "-" + m.quant + ".gguf");
  SynthOptions so;
  so.seed = 1;
  so.progress = progress;
  write_synth(plan_synth(synth_preset(m.preset), synth_quant_from_name(m.quant)), gguf.string(), so);
  try {
    ConvertOptions co;
    co.layout = m.layout == "plain" ? ConvertOptions::Layout::Plain : ConvertOptions::Layout::CpuRows;
    convert_to_p64(gguf.string(), p64_path.string(), co, progress);
  } catch (...) {
    fs::remove(gguf);
    throw;
  }
  fs::remove(gguf);
  return p64_path.string();
}

std::vector<CpuBenchRow> run_cpu_bench(const std::vector<CpuBenchModel>& models, const std::vector<std::string>& paths,
                                       const CpuBenchParams& params, const ProgressFn& progress) {
  if (models.size() != paths.size() || models.empty()) throw Error("bench-cpu: one path per model, at least one model");
  if (params.rounds < 1 || params.warmup_rounds < 0) throw Error("bench-cpu: rounds must be >= 1, warm-up >= 0");
  const LabConfig config = LabConfig::from_options("cpu", params.threads, {});
  const uint32_t needed = static_cast<uint32_t>(params.prompt_tokens + params.decode_tokens);

  struct Loaded {
    std::shared_ptr<const Model> model;
    LoadedBackend backend;
    std::vector<double> decode, prefill, gbs, share;
  };
  std::vector<Loaded> loaded;
  for (const std::string& path : paths) {
    Loaded l;
    l.model = open_p64(path);
    l.backend = load_backend(config, l.model, needed);
    loaded.push_back(std::move(l));
  }

  std::vector<CpuBenchRow> rows(models.size());
  DecodeProxyParams dp;
  dp.decode_tokens = params.decode_tokens;
  dp.prompt_tokens = params.prompt_tokens;
  dp.runs = 1;
  dp.warmup = 0;
  const int total_rounds = params.warmup_rounds + params.rounds;
  const size_t n = models.size();
  for (int round = 0; round < total_rounds; ++round) {
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (k + static_cast<size_t>(round)) % n;  // rotated order: no model always runs first
      Loaded& l = loaded[i];
      const DecodeProxyResult r = run_decode_proxy(*l.backend.backend, *l.model, l.backend.passport, dp);
      const SampleRecord& s = r.samples.front();
      CpuBenchRow& row = rows[i];
      row.weight_bytes = r.weight_bytes;
      row.bytes_per_token = r.bytes_per_token;
      row.measured_read_gbs = r.measured_read_gbs;
      if (round < params.warmup_rounds) {
        row.warmup_decode_tok_s.push_back(s.decode_tok_s);
        row.warmup_prefill_tok_s.push_back(s.prefill_tok_s);
      } else {
        l.decode.push_back(s.decode_tok_s);
        l.prefill.push_back(s.prefill_tok_s);
        l.gbs.push_back(s.effective_gbs);
        l.share.push_back(s.bandwidth_share);
      }
      if (progress) {
        const double done = static_cast<double>(round * n + k + 1) / static_cast<double>(total_rounds * n);
        const std::string what = (round < params.warmup_rounds ? "warm-up " : "round ") + std::to_string(round + 1) +
                                 " " + models[i].label() + ": decode " + std::to_string(static_cast<int>(s.decode_tok_s)) +
                                 " tok/s";
        if (!progress(done, what)) throw Cancelled();
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    rows[i].model = models[i];
    rows[i].path = paths[i];
    rows[i].decode_tok_s = min_median_max(loaded[i].decode);
    rows[i].prefill_tok_s = min_median_max(loaded[i].prefill);
    rows[i].effective_gbs = min_median_max(loaded[i].gbs);
    rows[i].bandwidth_share = min_median_max(loaded[i].share);
  }
  return rows;
}

}  // namespace p64
