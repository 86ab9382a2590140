#include "app/cli/depth_sweep_table.h"

#include <cstdio>

#include "engine/lab/machine_load.h"

namespace p64::cli {
namespace {

std::string depth_list(const std::vector<int>& depths) {
  std::string s;
  for (int d : depths) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return s;
}

// The KV part of the bytes a decode step reads at this depth (the weights are the rest).
double kv_bytes_per_token(const DecodeProxyResult& r) { return r.bytes_per_token - static_cast<double>(r.weight_bytes); }

}  // namespace

void print_depth_sweep(const ExperimentRequest& req, const ExperimentOutcome& out) {
  if (out.depth_sweep.empty()) return;
  const DecodeProxyResult& first = out.depth_sweep.front().decode_proxy;
  const double ceiling = first.measured_read_gbs;
  std::printf("decode-proxy %s: depth sweep %s\n", req.model_path.c_str(), depth_list(req.depths).c_str());
  std::printf("  backend %s (%s), config %s, load %.0f ms\n", out.backend.c_str(), out.passport.device.name.c_str(),
              req.config.to_string().c_str(), out.load_ms);
  std::printf("  decode %d tokens per run after a prefill of each depth, %d warm-up, %d runs per depth\n",
              req.decode_tokens, req.warmup, req.runs);
  std::printf("  bytes per token = %.0f weight bytes + %llu KV bytes per position%s x the positions attended\n",
              static_cast<double>(first.weight_bytes), static_cast<unsigned long long>(first.kv_bytes_per_position),
              first.kv_bytes_assumed ? " (the backend does not say: fp16 K and V assumed)" : " (the backend's cache)");
  if (ceiling > 0) std::printf("  read roofline: %.1f GB/s measured (the passport's)\n", ceiling);
  else std::printf("  read roofline: n/a (the passport has no measured read bandwidth)\n");

  std::printf("\n  %7s %30s %10s %12s %10s %7s %6s\n", "depth", "decode tok/s ± stddev (CV)", "eff GB/s",
              "KV MiB/tok", "roof tok/s", "share", "run");
  for (const DepthPoint& p : out.depth_sweep) {
    const DecodeProxyResult& r = p.decode_proxy;
    char tok[64], roof[32], share[32], run[32];
    std::snprintf(tok, sizeof tok, "%.2f ± %.2f (%.1f%%)", r.decode_tok_s.median, r.decode_tok_s.stddev,
                  100 * r.decode_tok_s.cv);
    if (ceiling > 0) {
      std::snprintf(roof, sizeof roof, "%.1f", ceiling * 1e9 / r.bytes_per_token);
      std::snprintf(share, sizeof share, "%.1f%%", 100 * r.bandwidth_share.median);
    } else {
      std::snprintf(roof, sizeof roof, "n/a");
      std::snprintf(share, sizeof share, "n/a");
    }
    if (p.run_id) std::snprintf(run, sizeof run, "%lld", static_cast<long long>(p.run_id));
    else std::snprintf(run, sizeof run, "-");
    std::printf("  %7d %30s %10.3f %12.3f %10s %7s %6s%s\n", p.depth, tok, r.effective_gbs.median,
                kv_bytes_per_token(r) / (1 << 20), roof, share, run, r.busy.busy ? "  busy" : "");
  }
  std::printf("\n  eff GB/s = (weights + KV read at the depth) x tok/s; roof tok/s = read roofline / those bytes\n");
  for (const DepthPoint& p : out.depth_sweep)
    if (p.decode_proxy.busy.busy)
      std::printf("  depth %d: machine %s\n", p.depth, busy_line(p.decode_proxy.busy).c_str());
  if (!out.store_path.empty()) {
    std::string runs;
    for (const DepthPoint& p : out.depth_sweep) runs += (runs.empty() ? "" : ", ") + std::to_string(p.run_id);
    std::printf("  stored as runs %s (one per depth) in %s\n", runs.c_str(), out.store_path.c_str());
  }
}

nlohmann::json depth_sweep_json(const ExperimentRequest& req, const ExperimentOutcome& out) {
  nlohmann::json points = nlohmann::json::array();
  for (const DepthPoint& p : out.depth_sweep) {
    nlohmann::json j = p.summary;
    j["depth"] = p.depth;
    j["run_id"] = p.run_id;
    points.push_back(std::move(j));
  }
  nlohmann::json j = {{"model", req.model_path},
                      {"backend", out.backend},
                      {"device", out.passport.device.name},
                      {"config", req.config.to_string()},
                      {"load_ms", out.load_ms},
                      {"depths", req.depths},
                      {"depth_sweep", points}};
  if (!out.store_path.empty()) j["db"] = out.store_path;
  return j;
}

}  // namespace p64::cli
